"""Independent upstream calls in one round trip."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


async def gather(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run `calls` concurrently and return their results in order.

    Every call runs to its end (a failure does not cancel the others, so no request is left half
    sent); then the failure of the first failing call, by position, is raised as it is (never an
    ExceptionGroup, so a ToolError reaches the caller unchanged)."""
    results: list[Any] = [None] * len(calls)
    failures: list[BaseException | None] = [None] * len(calls)

    async def one(i: int) -> None:
        try:
            results[i] = await calls[i]()
        except Exception as exc:  # re-raised below, in order
            failures[i] = exc

    if len(calls) == 1:
        await one(0)
    else:
        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i)
    for failure in failures:
        if failure is not None:
            raise failure
    return results
