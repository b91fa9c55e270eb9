"""Independent upstream calls in one round trip, at most MAX_CONCURRENT at once (GitHub's
secondary rate limits punish bursts)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio

T = TypeVar("T")
MAX_CONCURRENT = 4
# upstream requests one caller may have in flight over all its calls (GHMCP_MAX_INFLIGHT_PER_CALLER):
# the connection pool is shared, and one caller's burst must not hold all of it
DEFAULT_INFLIGHT_PER_CALLER = 16


class CallerSlots:
    """At most `limit` upstream requests in flight per caller; a caller's further requests
    wait for one of its own to finish, never for another caller's."""

    def __init__(self, limit: int = DEFAULT_INFLIGHT_PER_CALLER) -> None:
        self.limit = limit
        self._slots: dict[str, anyio.CapacityLimiter] = {}

    @asynccontextmanager
    async def held(self, caller: str) -> AsyncIterator[None]:
        slot = self._slots.setdefault(caller, anyio.CapacityLimiter(self.limit))
        try:
            async with slot:
                yield
        finally:
            stats = slot.statistics()
            if stats.borrowed_tokens == 0 and stats.tasks_waiting == 0:
                self._slots.pop(caller, None)  # no slot kept for a caller with nothing in flight

    def in_flight(self, caller: str) -> int:
        slot = self._slots.get(caller)
        return 0 if slot is None else int(slot.borrowed_tokens)


async def outcomes(calls: Sequence[Callable[[], Awaitable[T]]],
                   limit: int = MAX_CONCURRENT) -> list[T | Exception]:
    """Run `calls` concurrently (at most `limit` at once); each one's result or exception, in order.

    Every call runs to its end: a failure does not cancel the others, so no request is left half
    sent."""
    done: list[Any] = [None] * len(calls)
    slots = anyio.CapacityLimiter(limit)

    async def one(i: int) -> None:
        async with slots:
            try:
                done[i] = await calls[i]()
            except Exception as exc:  # returned in its place
                done[i] = exc

    if len(calls) == 1:
        await one(0)
    else:
        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i)
    return done


async def gather(calls: Sequence[Callable[[], Awaitable[T]]], limit: int = MAX_CONCURRENT) -> list[T]:
    """Run `calls` concurrently (see `outcomes`) and return their results in order; then the
    failure of the first failing call, by position, is raised as it is (never an
    ExceptionGroup, so a ToolError reaches the caller unchanged)."""
    results = await outcomes(calls, limit)
    for result in results:
        if isinstance(result, Exception):
            raise result
    return [r for r in results if not isinstance(r, Exception)]
