"""The standard suite's tests for inputs the demo model cannot take (PDFs, audio, images) and for
recorded-cassette runs are not collected: the suite would only skip them. Images are routed to
nodes that take them, and refused by name where none does (tests/gateway/test_capabilities.py,
test_anthropic_messages.py)."""

from pathlib import Path

NOT_APPLICABLE = {
    "test_pdf_inputs",
    "test_pdf_tool_message",
    "test_audio_inputs",
    "test_image_inputs",
    "test_image_tool_message",
    "test_stream_time",  # VCR cassettes: recorded runs against a hosted API
}


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent

    def applicable(item) -> bool:
        return (
            Path(item.fspath).parent != here or getattr(item, "originalname", item.name) not in NOT_APPLICABLE
        )

    kept = [item for item in items if applicable(item)]
    dropped = [item for item in items if item not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
