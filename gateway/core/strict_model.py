"""The base of every declared request body: unknown fields forbidden, no type coercion; and the
one relaxation JSON Schema itself makes: an integer may be written as an integral number (5.0)."""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _integral_number(value: Any) -> Any:
    """5.0 -> 5 (JSON Schema's `integer` admits it, as vLLM's server does); 5.5 and "5" stay
    what they are, and the int check refuses them."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JSONInt = Annotated[int, BeforeValidator(_integral_number)]
