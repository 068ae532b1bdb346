"""Every service logs one JSON line per event to stderr, each with its time; this sets that up
once per process."""

import json
import logging
import sys
import time


class JSONLineFormatter(logging.Formatter):
    """A message that is a JSON object gets `"time"` (UTC, ISO 8601, milliseconds) as its first
    field; any other message becomes {"time", "level", "logger", "message"[, "exception"]}."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        stamp = f"{stamp}.{int(record.msecs):03d}Z"
        message = record.getMessage()
        if message.startswith("{") and message.endswith("}") and not record.exc_info:
            return f'{{"time": "{stamp}"' + (", " + message[1:] if message != "{}" else "}")
        line = {"time": stamp, "level": record.levelname, "logger": record.name, "message": message}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line)


def setup_logging() -> None:
    """One JSON line per record at INFO. The records skip what our lines never print (caller's
    file and line, thread, process): collecting those costs more than the line itself on the
    request path."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONLineFormatter())
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    logging._srcfile = None  # the logging HOWTO's "Optimization": no stack walk per record
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
