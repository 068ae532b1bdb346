"""The one request path every generation endpoint runs (handler.py): admission (admission.py),
the dialect's parse, dispatch, then its writer: streamed (stream_writer.py) or collected at once
(collect_writer.py); and what a finished request leaves behind (request_log.py). app_keys.py holds
the typed application state the handlers read.

May import: everything below it; never http/."""
