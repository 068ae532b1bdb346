"""Every log line is one JSON object with its time first, exceptions included."""

import json
import logging
import re
import sys

from hybridgw.logs import JSONLineFormatter

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _format(message: str, exc_info=None) -> dict:
    record = logging.LogRecord("hybridgw.test", logging.INFO, __file__, 1, message, None, exc_info)
    line = JSONLineFormatter().format(record)
    assert "\n" not in line
    return json.loads(line)


def test_json_messages_get_their_time_first_and_others_are_wrapped():
    record = _format(json.dumps({"event": "request", "request_id": "r1"}))
    assert list(record) == ["time", "event", "request_id"] and STAMP.fullmatch(record["time"])
    plain = _format("listening on 0.0.0.0")
    assert (plain["level"], plain["logger"], plain["message"]) == (
        "INFO",
        "hybridgw.test",
        "listening on 0.0.0.0",
    )
    assert STAMP.fullmatch(_format("{}")["time"])
    try:
        raise ValueError("boom")
    except ValueError:
        failed = _format(json.dumps({"event": "x"}), sys.exc_info())
    assert failed["message"] == '{"event": "x"}' and "ValueError: boom" in failed["exception"]
