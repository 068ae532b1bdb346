"""Every service logs one JSON line per event to stderr; this sets that up once per process."""

import logging
import sys


def setup_logging() -> None:
    """Message-only lines at INFO. The records skip what our lines never print (caller's file and
    line, thread, process): collecting those costs more than the line itself on the request path."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    logging._srcfile = None  # the logging HOWTO's "Optimization": no stack walk per record
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
