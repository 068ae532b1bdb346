"""The one request path every generation endpoint runs (handler.py): admission (admission.py: the
key, authenticated once per request; the model; rate limits), the dialect's parse, dispatch, then
its writer: streamed (stream_writer.py) or collected at once (collect_writer.py); and what a
finished request leaves behind (request_log.py). app_keys.py holds the typed application state the
handlers read; the Dispatcher's key is the handler's (handler.py: DISPATCHER).

May import: everything below it; never http/."""
