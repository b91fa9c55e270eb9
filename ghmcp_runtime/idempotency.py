"""Idempotency keys for writes: replay a finished result, recover an unknown outcome.

A store maps a key to (fingerprint, state, result). `IdempotencyRunner` implements the
`Idempotency` protocol of context.py on top of any store; `MemoryStore` serves one process,
a shared store (e.g. Redis: SET NX with a TTL for `claim`) serves several replicas.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio

from ghmcp_runtime.errors import OutcomeUnknown, ToolError
from ghmcp_runtime.versioning import canonical_json

ClaimState = Literal["new", "pending", "done"]
DEFAULT_TTL_S = 600.0


@dataclass(frozen=True, slots=True)
class Claim:
    state: ClaimState  # new: this caller now owns the key (pending); pending: owned earlier; done
    fingerprint: str  # the fingerprint stored with the key (the caller's own when state is new)
    result: Any = None  # the stored result when state is done


class IdempotencyStore(Protocol):
    async def claim(self, key: str, fingerprint: str, ttl_s: float) -> Claim:
        """Atomically: create a pending entry if the key is absent or expired, else report it."""
        ...

    async def complete(self, key: str, result: Any) -> None:
        """Mark the key done with a JSON-compatible result (kept for the entry's TTL)."""
        ...

    async def release(self, key: str) -> None:
        """Forget the key (the attempt failed definitely; a retry may run fresh)."""
        ...


@dataclass(slots=True)
class _Entry:
    fingerprint: str
    state: ClaimState
    ttl_s: float
    expires: float
    result: Any = None


class MemoryStore:
    """In-process store: bounded LRU-by-insertion, entries expire `ttl_s` after their last write."""

    def __init__(self, *, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic):
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._max = max_entries
        self._clock = clock

    def __len__(self) -> int:
        return len(self._entries)

    def _evict(self, now: float) -> None:
        for key in [k for k, e in self._entries.items() if e.expires <= now]:
            del self._entries[key]
        while len(self._entries) >= self._max:
            self._entries.popitem(last=False)

    async def claim(self, key: str, fingerprint: str, ttl_s: float) -> Claim:
        now = self._clock()
        entry = self._entries.get(key)
        if entry is not None and entry.expires > now:
            return Claim(entry.state, entry.fingerprint, copy.deepcopy(entry.result))
        self._entries.pop(key, None)
        self._evict(now)
        self._entries[key] = _Entry(fingerprint, "pending", ttl_s, now + ttl_s)
        return Claim("new", fingerprint)

    async def complete(self, key: str, result: Any) -> None:
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.state, entry.result = "done", copy.deepcopy(result)
        entry.expires = self._clock() + entry.ttl_s

    async def release(self, key: str) -> None:
        self._entries.pop(key, None)


class IdempotencyRunner:
    """Implements `Idempotency` (context.py) over an `IdempotencyStore`."""

    def __init__(
        self, store: IdempotencyStore, *, ttl_s: float = DEFAULT_TTL_S, wait_s: float = 30.0
    ) -> None:
        self._store = store
        self._ttl_s = ttl_s
        self._wait_s = wait_s
        # keys this process is running right now: a concurrent duplicate waits for the first
        self._inflight: dict[str, anyio.Event] = {}

    async def run(
        self,
        *,
        key: str | None,
        scope: Sequence[Any],
        fingerprint: str,
        run: Callable[[], Awaitable[Any]],
        recover: Callable[[], Awaitable[Any | None]] | None,
    ) -> Any:
        if key is None:
            return await run()
        store_key = hashlib.sha256(canonical_json([*scope, key])).hexdigest()
        while True:
            claim = await self._store.claim(store_key, fingerprint, self._ttl_s)
            if claim.fingerprint != fingerprint:
                raise ToolError(
                    "invalid_field",
                    "This idempotency key was already used with different arguments.",
                    details={"field": "idempotency_key", "reason": "reused with different arguments"},
                )
            if claim.state == "done":
                return claim.result
            event = self._inflight.get(store_key)
            if claim.state == "new" or event is None:
                break
            with anyio.move_on_after(self._wait_s):
                await event.wait()
            if not event.is_set():  # the first attempt is stuck: stop waiting, recover or rerun
                break

        done = anyio.Event()
        self._inflight[store_key] = done
        try:
            return await self._attempt(store_key, claim.state == "pending", run, recover)
        finally:
            if self._inflight.get(store_key) is done:
                del self._inflight[store_key]
            done.set()

    async def _attempt(
        self,
        store_key: str,
        pending: bool,
        run: Callable[[], Awaitable[Any]],
        recover: Callable[[], Awaitable[Any | None]] | None,
    ) -> Any:
        if pending and recover is not None:
            found = await recover()
            if found is not None:  # the earlier attempt did happen
                await self._store.complete(store_key, found)
                return found
        try:
            result = await run()
        except OutcomeUnknown:
            raise  # keep the key pending: the next attempt recovers
        except ToolError:
            await self._store.release(store_key)
            raise
        # any other exception also leaves the key pending: the write may have happened
        await self._store.complete(store_key, result)
        return result
