"""What the hub's event streams carry, read in tests: a customer's message to append, and the texts
of the next `n` events a stream yields (failing, never hanging, after ten seconds)."""

from __future__ import annotations

import asyncio

from supportdesk.items import Message


def said(text: str) -> Message:
    return Message(role="customer", text=text, agent="triage")


async def texts(stream, n: int) -> list[str]:
    got: list[str] = []
    async with asyncio.timeout(10):
        async for batch in stream:
            got += [e.data["text"] for e in batch]
            if len(got) >= n:
                return got
    return got
