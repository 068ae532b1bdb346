"""Inbox: one wake-up per batch, and a synchronous taker that keeps the order of everything put."""

import asyncio

from gateway.inbox import Inbox


async def test_take_all_returns_every_item_put_in_order_at_once():
    inbox = Inbox()
    waiting = asyncio.create_task(inbox.take_all())
    await asyncio.sleep(0)
    inbox.put(1)
    inbox.put(2)
    assert await waiting == [1, 2]
    inbox.put(3)
    assert await inbox.take_all() == [3]


async def test_a_taker_gets_items_only_while_nothing_is_queued_before_them():
    inbox = Inbox()
    taken = []
    inbox.taker = lambda item: item % 2 == 0 and not taken.append(item)  # takes the even ones
    for item in (0, 2, 3, 4, 6):  # 3 is declined: 4 and 6 queue behind it
        inbox.put(item)
    assert taken == [0, 2]
    assert await inbox.take_all() == [3, 4, 6]
    for item in (8, 9, 10):
        inbox.put(item)
    assert taken == [0, 2, 8] and await inbox.take_all() == [9, 10]
    inbox.taker = None
    inbox.put(12)
    assert await inbox.take_all() == [12]
