"""The token path: from a backend's reader to the client. token_sink.py is where a choice's tokens
go (text, tool calls, usage), text_stream.py turns ids into text with stop strings, and
generation.py is a generation as the handler sees it (its choices' sinks and where it runs).

May import: core/, tools/, privacy/, routing/."""
