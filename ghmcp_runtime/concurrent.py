"""Independent upstream calls in one round trip, at most MAX_CONCURRENT at once (GitHub's
secondary rate limits punish bursts)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio

T = TypeVar("T")
MAX_CONCURRENT = 4


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
