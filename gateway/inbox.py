"""A consumer's inbox: producers put(), the one consumer takes every item ready at once."""

import asyncio
from collections.abc import Callable


class Inbox:
    """put() by any producer, take_all() by the one consumer: every item ready, in order, at once
    (one wake-up per batch, not per item). Lighter than asyncio.Queue, which does more than the
    per-token paths need (a request's Session replies, the interleaved choices of n > 1).

    `taker`, when set, is a synchronous consumer offered each item put while nothing is queued
    before it; an item it takes (it returns True) is done with, so the consuming task does not
    wake for it. Items it declines queue as usual, and so does every item after them until the
    consumer has taken them (order is kept)."""

    __slots__ = ("_items", "_waiter", "taker")

    def __init__(self):
        self._items: list = []
        self._waiter: asyncio.Future | None = None
        self.taker: Callable[[object], bool] | None = None

    def put(self, item) -> None:
        if self.taker is not None and not self._items and self.taker(item):
            return
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def take_all(self) -> list:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        items, self._items = self._items, []
        return items
