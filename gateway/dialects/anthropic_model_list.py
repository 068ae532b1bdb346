"""GET /v1/models as Anthropic's SDK reads it (a request carrying `anthropic-version`): model
objects with `type`, `id`, `display_name` and `created_at`, in a page with `has_more`,
`first_id` and `last_id` (every served model fits one page)."""

from datetime import UTC, datetime

from gateway.core.served_model import ServedModel


def anthropic_model(model: ServedModel) -> dict:
    created = datetime.fromtimestamp(model.created, UTC).isoformat().replace("+00:00", "Z")
    return {"type": "model", "id": model.name, "display_name": model.name, "created_at": created}


def anthropic_model_page(models: list[ServedModel]) -> dict:
    data = [anthropic_model(m) for m in models]
    return {
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }
