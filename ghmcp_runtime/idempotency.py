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
# How long an attempt may run before another caller (or replica) may take the key over. Longer
# than the upstream timeout, so a live attempt is never raced; a crashed one frees the key.
DEFAULT_LEASE_S = 60.0


@dataclass(frozen=True, slots=True)
class Claim:
    state: ClaimState  # new: this caller now owns the key (pending); pending: owned earlier; done
    fingerprint: str  # the fingerprint stored with the key (the caller's own when state is new)
    result: Any = None  # the stored result when state is done
    running: bool = False  # pending and an attempt holds an unexpired lease (maybe elsewhere)


class IdempotencyStore(Protocol):
    async def claim(
        self, key: str, fingerprint: str, ttl_s: float, lease_s: float = DEFAULT_LEASE_S
    ) -> Claim:
        """Atomically: create a pending entry (leased to this caller) if the key is absent or
        expired, else report it."""
        ...

    async def take_over(self, key: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        """Atomically lease a pending entry whose lease has run out (or was given up)."""
        ...

    async def mark_unknown(self, key: str) -> None:
        """Give up this caller's lease: the outcome is unknown, the next attempt recovers."""
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
    lease_until: float = 0.0


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

    async def claim(
        self, key: str, fingerprint: str, ttl_s: float, lease_s: float = DEFAULT_LEASE_S
    ) -> Claim:
        now = self._clock()
        entry = self._entries.get(key)
        if entry is not None and entry.expires > now:
            running = entry.state == "pending" and entry.lease_until > now
            return Claim(entry.state, entry.fingerprint, copy.deepcopy(entry.result), running)
        self._entries.pop(key, None)
        self._evict(now)
        self._entries[key] = _Entry(fingerprint, "pending", ttl_s, now + ttl_s, None, now + lease_s)
        return Claim("new", fingerprint)

    async def take_over(self, key: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        now = self._clock()
        entry = self._entries.get(key)
        if entry is None or entry.state != "pending" or entry.lease_until > now:
            return False
        entry.lease_until = now + lease_s
        return True

    async def mark_unknown(self, key: str) -> None:
        entry = self._entries.get(key)
        if entry is not None and entry.state == "pending":
            entry.lease_until = 0.0

    async def complete(self, key: str, result: Any) -> None:
        entry = self._entries.get(key)
        if entry is None:
            return
        entry.state, entry.result = "done", copy.deepcopy(result)
        entry.expires = self._clock() + entry.ttl_s

    async def release(self, key: str) -> None:
        self._entries.pop(key, None)


class IdempotencyRunner:
    """Implements `Idempotency` (context.py) over an `IdempotencyStore`.

    A key is leased to one attempt at a time, across replicas when the store is shared: a
    duplicate that arrives while the first attempt runs waits for its result instead of writing
    again; an attempt whose outcome was lost gives its lease up, so the next one recovers first.
    """

    def __init__(
        self,
        store: IdempotencyStore,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        wait_s: float = 30.0,
        lease_s: float = DEFAULT_LEASE_S,
        poll_s: float = 0.05,
    ) -> None:
        self._store = store
        self._ttl_s = ttl_s
        self._wait_s = wait_s
        self._lease_s = lease_s
        self._poll_s = poll_s

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
        waited, delay = 0.0, self._poll_s
        while True:
            claim = await self._store.claim(store_key, fingerprint, self._ttl_s, self._lease_s)
            if claim.fingerprint != fingerprint:
                raise ToolError(
                    "invalid_field",
                    "This idempotency key was already used with different arguments.",
                    details={"field": "idempotency_key", "reason": "reused with different arguments"},
                )
            if claim.state == "done":
                return claim.result
            if claim.state == "new":
                return await self._attempt(store_key, False, run, recover)
            if not claim.running and await self._store.take_over(store_key, self._lease_s):
                return await self._attempt(store_key, True, run, recover)
            if waited >= self._wait_s:
                raise ToolError(
                    "upstream_unavailable",
                    "An earlier call with this idempotency key is still running; nothing new was "
                    "written. Retry with the same key.",
                    temporary=True,
                    retry_after_ms=int(self._lease_s * 1000),
                    details={"field": "idempotency_key", "reason": "an attempt with this key is in flight"},
                )
            await anyio.sleep(delay)
            waited += delay
            delay = min(delay * 2, 0.5)

    async def _attempt(
        self,
        store_key: str,
        pending: bool,
        run: Callable[[], Awaitable[Any]],
        recover: Callable[[], Awaitable[Any | None]] | None,
    ) -> Any:
        try:
            if pending and recover is not None:
                found = await recover()
                if found is not None:  # the earlier attempt did happen
                    await self._store.complete(store_key, found)
                    return found
            result = await run()
        except ToolError as err:
            if isinstance(err, OutcomeUnknown) or err.temporary:
                await self._store.mark_unknown(store_key)  # the write may have happened
            else:
                await self._store.release(store_key)
            raise
        except BaseException:
            await self._store.mark_unknown(store_key)
            raise
        await self._store.complete(store_key, result)
        return result
