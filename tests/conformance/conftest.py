"""The standard suite's tests for inputs the demo model cannot take (PDFs, audio, images) and for
recorded-cassette runs are not collected: the suite would only skip them. Images are routed to
nodes that take them, and refused by name where none does (tests/gateway/test_capabilities.py,
test_anthropic_messages.py)."""

from pathlib import Path

import pytest

from tests.conformance.model_answers import JUDGES

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


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """A standard test that failed by the demo model's choice (and whose gateway kept its
    contract) is an expected failure naming the answer; any other failure fails
    (tests/conformance/model_answers.py)."""
    judge = JUDGES.get(getattr(pyfuncitem, "originalname", pyfuncitem.name))
    if judge is None or Path(pyfuncitem.fspath).parent != Path(__file__).parent:
        return (yield)
    try:
        return (yield)
    except Exception as failure:
        pytest.xfail(f"the model's answer: {judge(failure)}")
