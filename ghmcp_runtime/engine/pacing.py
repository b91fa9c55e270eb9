"""Write pacing for batches, per token: GitHub's best practices ask for "at least one second
between each" mutative request of a burst, and its secondary limits count per token, so one
caller's batches share one pace however many run at once (one process; replicas pace apart)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

import anyio

MAX_PACERS = 10_000  # callers remembered; one idle longer than the interval is forgotten first


class Pacer:
    """Write requests at least `interval_s` apart, measured from each one's start; concurrent
    callers wait their turns in the order they asked (a fair lock)."""

    def __init__(self, interval_s: float, *, clock: Callable[[], float] = anyio.current_time,
                 sleep: Callable[[float], Awaitable[None]] = anyio.sleep) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self.sleep = sleep
        self.last: float | None = None
        self._turns = anyio.Lock()

    async def __call__(self) -> None:
        async with self._turns:
            if self.last is not None:
                wait = self.last + self.interval_s - self.clock()
                if wait > 0:
                    await self.sleep(wait)
            self.last = self.clock()

    def idle(self, now: float) -> bool:
        return self.last is None or self.last + self.interval_s <= now


class Pacers:
    """One `Pacer` per caller identity (an HMAC of its token), shared by all its calls."""

    def __init__(self, interval_s: float, *, clock: Callable[[], float] = anyio.current_time) -> None:
        self.interval_s = interval_s
        self.clock = clock
        self._pacers: OrderedDict[str, Pacer] = OrderedDict()

    def of(self, identity: str) -> Pacer:
        pacer = self._pacers.pop(identity, None) or Pacer(self.interval_s, clock=self.clock)
        self._pacers[identity] = pacer  # the most recently asked last
        now = self.clock()
        while len(self._pacers) > MAX_PACERS:
            name, oldest = next(iter(self._pacers.items()))
            if not oldest.idle(now):
                break  # still pacing someone: kept (calls in flight bound how many)
            del self._pacers[name]
        return pacer
