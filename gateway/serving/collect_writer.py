"""The EventSink of an answer given at once (no stream): every choice's events, kept in order."""

from gateway.output.token_sink import TextEvent


class CollectingSink:
    def __init__(self, num_choices: int):
        self.events: list[list[TextEvent]] = [[] for _ in range(num_choices)]

    def emit(self, event: TextEvent) -> None:
        self.events[event.index].append(event)

    def ahead(self) -> None:
        """Nothing to make ahead: the answer is one body at the end."""

    def reset(self) -> None:
        for events in self.events:
            events.clear()
