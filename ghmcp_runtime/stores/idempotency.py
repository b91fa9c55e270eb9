"""Idempotency keys for writes: replay a finished result, recover an unknown outcome.

A store maps a key to (fingerprint, state, result, lease). `IdempotencyRunner` implements the
`Idempotency` protocol of context.py on top of any store; `MemoryStore` serves one process,
a shared store (e.g. Redis, redis_store.py) serves several replicas.

Leases. One attempt at a time holds a key's lease, named by a token the store mints when it
grants the lease (`claim` of an absent key, `take_over` of a lapsed one). The runner renews the
lease every third of its length while the attempt runs, so a lease lapses only when its process
died or stalled for a whole lease, never because GitHub is slow: the upstream timeout plays no
part. Every later step names the token (`renew`, `mark_unknown`, `complete`, `release`) and is a
no-op once the key has another lease or none, so a stale attempt can neither finish nor free a
newer attempt's key.

History. The store records when the key's first attempt began (`Claim.started_at`, kept
across take-overs) and, for every attempt whose answer was lost, when its write ran and GitHub's
clock offset then (`Attempt`, recorded by `mark_unknown`); a later attempt hands that `History`
to `recover`, which looks for what those attempts may have written (recovery.py). A pending key
stays pending until its outcome is known: only a write that provably did not happen frees it
(`release`); a recovery that cannot decide keeps it (`outcome_unknown`).

Capacity. A key is held only by an attempt that may have changed something (`changed`): one
that changed nothing (rate-limited, refused, failed before sending) is released whatever it
ended with. Each caller may hold `keys_per_caller` live keys; its first `reserved_per_caller`
are always admitted, and only keys past them count in the capacity all callers share, so no
set of callers can refuse another caller's first keyed writes.

Claims. The item a write answered with (its GitHub `id`) is claimed in a scope every caller
shares (the tool and its scope arguments), whether the call had a key or not: recovery never
adopts an item another call already answered with (`claimed`).
"""

from __future__ import annotations

import copy
import hashlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio

from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError
from ghmcp_runtime.core.logs import log_event
from ghmcp_runtime.core.versioning import canonical_json
from ghmcp_runtime.stores.setting import (
    DEFAULT_KEYS_PER_CALLER,
    DEFAULT_SHARED_KEYS,
    RESERVED_KEYS_PER_CALLER,
)

ClaimState = Literal["new", "pending", "done"]
DEFAULT_TTL_S = 600.0
# How long a lease lasts without renewal: how soon a crashed attempt's key can be taken over.
DEFAULT_LEASE_S = 60.0
RENEWALS_PER_LEASE = 3
RETRY_WITH_THE_SAME_KEY = (
    "the request may have been applied; repeat the call with the same idempotency_key: the "
    "retry finds the first write instead of writing again"
)
MAX_ATTEMPTS = 10  # lost attempts recorded per key (a retry loop cannot grow an entry forever)
UNRESOLVED = (
    "An earlier call with this idempotency_key may already have written this, and {source}'s "
    "records cannot tell: {why}. Nothing new was written."
)
REUSED = "This idempotency key was already used with different arguments."
REUSED_PENDING = (
    " That first call's outcome is unknown: it may have written. Repeat it with its own "
    "arguments and this key to find out, or look for it first (repair); a new key may "
    "write a second time."
)


class RecoveryUnresolved(OutcomeUnknown):
    """The earlier attempt's outcome stays unknown after looking: never write blindly; the key
    stays pending (code `outcome_unknown`, not temporary)."""


def unresolved(why: str, repair: Mapping[str, Any] | None = None, *, source: str = "the forge",
               **details: Any) -> RecoveryUnresolved:
    """`source`: the forge whose records were searched, by its name in messages ("GitHub")."""
    return RecoveryUnresolved("outcome_unknown", UNRESOLVED.format(source=source, why=why),
                              details={"field": "idempotency_key", "reason": why, **details},
                              repair=repair)

@dataclass(frozen=True, slots=True)
class Attempt:
    """A write whose answer was lost: when it was sent and when the attempt gave up, on the
    attempting server's wall clock (epoch s), and GitHub's clock minus that clock as the server
    knew it then (None: it had seen no answer from GitHub yet)."""

    start: float
    end: float
    offset: float | None = None

    def encode(self) -> list[float | None]:
        return [self.start, self.end, self.offset]

    @staticmethod
    def decode(raw: Any) -> Attempt | None:
        try:
            start, end, offset = raw
            return Attempt(float(start), float(end), None if offset is None else float(offset))
        except (TypeError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class History:
    """What is known of a key's earlier attempts when a later one recovers."""

    started_at: float  # when the first attempt began (the store's clock, epoch s)
    attempts: tuple[Attempt, ...] = ()  # attempts that recorded their lost answers
    unrecorded: bool = True  # an attempt may have ended without recording itself (crash)
    claimed: frozenset[str] = frozenset()  # items other calls answered with: never this key's


@dataclass(frozen=True, slots=True)
class ItemClaim:
    """The item a write answered with, claimed in a scope every caller shares."""

    scope: str
    item: str


Recover = Callable[[History], Awaitable[Any | None]]


@dataclass(frozen=True, slots=True)
class Claim:
    state: ClaimState  # new: this caller now holds the key's lease; pending: held earlier; done
    fingerprint: str  # the fingerprint stored with the key (the caller's own when state is new)
    result: Any = None  # the stored result when state is done
    running: bool = False  # pending and an attempt holds an unexpired lease (maybe elsewhere)
    lease: str | None = None  # state new: the token of this caller's lease
    started_at: float = 0.0  # new/pending: when the key's first attempt began (epoch s; 0 unknown)
    attempts: tuple[Attempt, ...] = ()  # pending: the attempts that recorded a lost answer
    lapsed: bool = False  # pending: the last lease ran out unrecorded (its attempt died)


class IdempotencyStore(Protocol):
    async def claim(
        self, key: str, fingerprint: str, ttl_s: float, lease_s: float = DEFAULT_LEASE_S,
        owner: str = "",
    ) -> Claim:
        """Atomically: create a pending entry leased to this caller (state new, with the lease
        token) if the key is absent or expired, else report the entry. A new key counts against
        `owner`'s quota (the caller's identity): at the quota, `KeyQuotaExceeded` is raised and
        nothing is written or evicted."""
        ...

    async def take_over(self, key: str, lease_s: float = DEFAULT_LEASE_S) -> str | None:
        """Atomically lease a pending entry whose lease ran out or was given up: the new
        lease's token, or None when the entry is gone, done or leased."""
        ...

    async def renew(self, key: str, lease: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        """Extend `lease` by `lease_s` from now (and the entry's TTL): False when the entry
        no longer holds this lease."""
        ...

    async def mark_unknown(self, key: str, lease: str, attempt: Attempt | None = None) -> None:
        """Give `lease` up, keeping the entry pending: the outcome is unknown, the next
        attempt recovers; `attempt` (when a write was sent) is added to the entry's record."""
        ...

    async def complete(self, key: str, lease: str, result: Any, claim: ItemClaim | None = None) -> None:
        """Mark the key done with a JSON-compatible result (kept for the entry's TTL), if the
        entry still holds `lease`; `claim` is recorded with it (see `claim_item`)."""
        ...

    async def claim_item(self, claim: ItemClaim, ttl_s: float) -> None:
        """Record that a call answered with `claim.item` (kept `ttl_s`)."""
        ...

    async def claimed(self, scope: str) -> frozenset[str]:
        """The items claimed in `scope` and not expired."""
        ...

    async def release(self, key: str, lease: str) -> None:
        """Forget the key (the attempt failed definitely; a retry runs fresh), if the entry
        still holds `lease`."""
        ...


def new_lease() -> str:
    return secrets.token_hex(8)




class KeyQuotaExceeded(ToolError):
    """A new idempotency key refused: its caller holds as many live keys as allowed, or (past
    its reserved first keys) the keys all callers share are taken. Nobody's key is evicted to
    make room: an evicted key would let a retry write again."""

    def __init__(self, limit: int, retry_after_s: float, *, whole_store: bool = False) -> None:
        if whole_store:
            held = f"the {limit:,} keys callers share beyond their first ones are all taken"
            reason = f"the idempotency keys callers share are all taken ({limit:,})"
        else:
            held = f"this caller already holds {limit:,}"
            reason = f"this caller holds the most idempotency keys allowed ({limit:,})"
        super().__init__(
            "rate_limited",
            f"Too many idempotency keys in use: {held}, each kept 10 minutes after a call that "
            "changed something; nothing was written. Retry after retry_after_ms, or reuse the "
            "key of a call you are repeating.",
            temporary=True, retry_after_ms=max(1000, int(retry_after_s * 1000)),
            details={"field": "idempotency_key", "reason": reason},
        )


@dataclass(slots=True)
class _Entry:
    fingerprint: str
    state: ClaimState
    ttl_s: float
    expires: float
    started_at: float
    owner: str = ""
    shared: bool = False  # counted in the keys all callers share (past the owner's reserved ones)
    lease: str = ""
    lease_until: float = 0.0
    result: Any = None
    attempts: tuple[Attempt, ...] = ()


class MemoryStore:
    """In-process store. Entries expire `ttl_s` after their last write (claim, lease, renewal,
    completion) and are never evicted before: a new key is refused (`KeyQuotaExceeded`) when its
    caller holds `keys_per_caller` live keys, or when it holds its `reserved_per_caller` first
    ones already and the `max_entries` all callers share are taken. Another caller's first keys
    are thus always admitted, however many keys others hold."""

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_SHARED_KEYS,
        keys_per_caller: int = DEFAULT_KEYS_PER_CALLER,
        reserved_per_caller: int = RESERVED_KEYS_PER_CALLER,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ):
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._owned: dict[str, int] = {}  # owner -> live entries
        self._shared = 0  # live entries past their owner's reserved ones
        self._claims: OrderedDict[tuple[str, str], float] = OrderedDict()  # (scope, item) -> expiry
        self._max = max_entries
        self._per_owner = keys_per_caller
        self._reserved = reserved_per_caller
        self._clock = clock
        self._wall_clock = wall_clock

    def __len__(self) -> int:
        return len(self._entries)
    def _forget(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._shared -= entry.shared
            left = self._owned.get(entry.owner, 0) - 1
            if left > 0:
                self._owned[entry.owner] = left
            else:
                self._owned.pop(entry.owner, None)

    def _expire(self, now: float) -> None:
        for key in [k for k, e in self._entries.items() if e.expires <= now]:
            self._forget(key)

    def _make_room(self, owner: str, now: float) -> bool:
        """Whether the owner's new key counts in the shared keys; drops expired entries when a
        limit is reached (a scan: only then), and refuses if it stays."""
        for scanned in (False, True):
            if scanned:
                self._expire(now)
            held = self._owned.get(owner, 0)
            shared = held >= self._reserved
            if held < self._per_owner and not (shared and self._shared >= self._max):
                return shared
        if self._owned.get(owner, 0) >= self._per_owner:
            raise KeyQuotaExceeded(self._per_owner, self._next_expiry(now, owner=owner))
        raise KeyQuotaExceeded(self._max, self._next_expiry(now, shared=True), whole_store=True)

    def _next_expiry(self, now: float, *, owner: str | None = None, shared: bool = False) -> float:
        ends = [e.expires for e in self._entries.values()
                if (owner is None or e.owner == owner) and (not shared or e.shared)]
        return max(0.0, min(ends, default=now) - now)

    def _leased(self, key: str, lease: str) -> _Entry | None:
        entry = self._entries.get(key)
        if not lease or entry is None or entry.state != "pending" or entry.lease != lease:
            return None
        return entry

    def _grant(self, entry: _Entry, now: float, lease_s: float) -> str:
        entry.lease, entry.lease_until = new_lease(), now + lease_s
        entry.expires = max(entry.expires, now + entry.ttl_s)
        return entry.lease

    async def claim(
        self, key: str, fingerprint: str, ttl_s: float, lease_s: float = DEFAULT_LEASE_S,
        owner: str = "",
    ) -> Claim:
        now = self._clock()
        entry = self._entries.get(key)
        if entry is not None and entry.expires > now:
            running = entry.state == "pending" and entry.lease_until > now
            return Claim(entry.state, entry.fingerprint, copy.deepcopy(entry.result), running,
                         started_at=entry.started_at, attempts=entry.attempts,
                         lapsed=entry.state == "pending" and bool(entry.lease) and not running)
        self._forget(key)
        shared = self._make_room(owner, now)
        entry = _Entry(fingerprint, "pending", ttl_s, now + ttl_s, self._wall_clock(), owner, shared)
        self._entries[key] = entry
        self._owned[owner] = self._owned.get(owner, 0) + 1
        self._shared += shared
        lease = self._grant(entry, now, lease_s)
        return Claim("new", fingerprint, lease=lease, started_at=entry.started_at)

    async def take_over(self, key: str, lease_s: float = DEFAULT_LEASE_S) -> str | None:
        now = self._clock()
        entry = self._entries.get(key)
        if entry is None or entry.expires <= now or entry.state != "pending" or entry.lease_until > now:
            return None
        return self._grant(entry, now, lease_s)

    async def renew(self, key: str, lease: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        entry = self._leased(key, lease)
        if entry is None:
            return False
        now = self._clock()
        entry.lease_until = now + lease_s
        entry.expires = max(entry.expires, now + entry.ttl_s)
        return True

    async def mark_unknown(self, key: str, lease: str, attempt: Attempt | None = None) -> None:
        entry = self._leased(key, lease)
        if entry is not None:
            entry.lease, entry.lease_until = "", 0.0
            if attempt is not None:
                entry.attempts = (*entry.attempts, attempt)[-MAX_ATTEMPTS:]

    async def complete(self, key: str, lease: str, result: Any, claim: ItemClaim | None = None) -> None:
        entry = self._leased(key, lease)
        if entry is None:
            return
        entry.state, entry.result, entry.lease = "done", copy.deepcopy(result), ""
        entry.expires = self._clock() + entry.ttl_s
        if claim is not None:
            await self.claim_item(claim, entry.ttl_s)

    async def claim_item(self, claim: ItemClaim, ttl_s: float) -> None:
        now = self._clock()
        self._claims.pop((claim.scope, claim.item), None)
        self._claims[(claim.scope, claim.item)] = now + ttl_s
        while self._claims and (len(self._claims) > self._max or next(iter(self._claims.values())) <= now):
            self._claims.popitem(last=False)  # in insertion order: the oldest first

    async def claimed(self, scope: str) -> frozenset[str]:
        now = self._clock()
        return frozenset(item for (s, item), until in self._claims.items() if s == scope and until > now)

    async def release(self, key: str, lease: str) -> None:
        if self._leased(key, lease) is not None:
            self._forget(key)


def _no_offset() -> float | None:
    return None


@dataclass(frozen=True, slots=True)
class _Write:
    run: Callable[[], Awaitable[Any]]
    recover: Recover | None
    claim_scope: str | None
    claimed: Callable[[], str | None] | None
    offset: Callable[[], float | None]
    source: str
    changed: Callable[[], bool] | None = None

    def changed_nothing(self) -> bool:
        return self.changed is not None and not self.changed()


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
        recover: Recover | None,
        shared: Sequence[Any] | None = None,
        claimed: Callable[[], str | None] | None = None,
        offset: Callable[[], float | None] | None = None,
        repair: Mapping[str, Any] | None = None,
        source: str = "the forge",
        changed: Callable[[], bool] | None = None,
    ) -> Any:
        """`run()` at most once per key. `shared` (the scope without the caller) and `claimed`
        (the item the finished write answered with) claim that item for this call, keyed or
        not; `offset` is the forge's clock offset now (recorded with a lost attempt); `repair` is
        where to look when a key is reused while its first outcome is unknown; `source` names
        the forge in messages; `changed()` says whether the attempt may have changed anything
        so far: an attempt that did not frees its key, whatever it ended with (a rate-limited or
        refused call holds no capacity, and its retry simply runs)."""
        claim_scope = None if shared is None else hashlib.sha256(
            canonical_json(["claims", *shared])).hexdigest()
        if key is None:
            result = await run()
            await self._claim_item(claim_scope, claimed)
            return result
        store_key = hashlib.sha256(canonical_json([*scope, key])).hexdigest()
        owner = str(scope[0]) if scope else ""  # the caller's identity (ToolContext.idempotent)
        write = _Write(run, recover, claim_scope, claimed, offset or _no_offset, source, changed)
        waited, delay = 0.0, self._poll_s
        while True:
            claim = await self._store.claim(store_key, fingerprint, self._ttl_s, self._lease_s,
                                            owner=owner)
            if claim.fingerprint != fingerprint:
                pending = claim.state != "done"
                raise ToolError(
                    "invalid_field", REUSED + (REUSED_PENDING if pending else ""),
                    details={"field": "idempotency_key", "reason": "reused with different arguments"
                             + (" while its first call's outcome is unknown" if pending else "")},
                    repair=repair if pending else None,
                )
            if claim.state == "done":
                return claim.result
            if claim.state == "new" and claim.lease is not None:
                return await self._attempt(store_key, claim.lease, None, write)
            if not claim.running:
                lease = await self._store.take_over(store_key, self._lease_s)
                if lease is not None:
                    return await self._attempt(store_key, lease, claim, write)
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

    async def _history(self, claim: Claim, write: _Write) -> History:
        # an entry written without a start (older version) is searched over its whole window
        started = claim.started_at or time.time() - self._ttl_s
        try:
            taken = await self._store.claimed(write.claim_scope) if write.claim_scope else frozenset()
        except Exception as exc:  # without the claims, an item may be another call's
            log_event("idempotency_store_error", level=logging.WARNING, op="claimed",
                      error=type(exc).__name__)
            raise unresolved("the server's idempotency store did not answer", source=write.source) from None
        return History(started, claim.attempts, unrecorded=claim.lapsed or not claim.attempts,
                       claimed=taken)

    async def _attempt(self, store_key: str, lease: str, earlier: Claim | None, write: _Write) -> Any:
        lost: list[Attempt] = []
        writing = [False]  # recovery errors never free the key: they decide nothing

        async def recover_then_run() -> Any:
            if earlier is not None and write.recover is not None:
                try:
                    found = await write.recover(await self._history(earlier, write))
                except ToolError as err:
                    if isinstance(err, OutcomeUnknown) or err.temporary:
                        raise
                    raise unresolved(f"a read the check needs failed ({err.code})",
                                     source=write.source) from None
                if found is not None:  # an earlier attempt did write
                    return found
            writing[0] = True
            sent = time.time()
            try:
                return await write.run()
            except OutcomeUnknown as err:
                lost.append(Attempt(sent, time.time(), write.offset()))
                err.details = {**(err.details or {}), "reason": RETRY_WITH_THE_SAME_KEY}
                raise
            except BaseException:
                lost.append(Attempt(sent, time.time(), write.offset()))
                raise

        def nothing_written() -> bool:
            """This attempt changed nothing, and no earlier one did (recovery found nothing)."""
            return write.changed_nothing() and (earlier is None or writing[0])

        try:
            result = await self._while_leased(store_key, lease, recover_then_run)
        except ToolError as err:
            with anyio.CancelScope(shield=True):
                failed = writing[0] and not isinstance(err, OutcomeUnknown) and not err.temporary
                if failed or nothing_written():
                    await self._store.release(store_key, lease)  # the write provably failed
                else:
                    await self._store.mark_unknown(store_key, lease, lost[0] if lost else None)
            raise
        except BaseException:
            with anyio.CancelScope(shield=True):
                if nothing_written():
                    await self._store.release(store_key, lease)
                else:
                    await self._store.mark_unknown(store_key, lease, lost[0] if lost else None)
            raise
        with anyio.CancelScope(shield=True):
            if nothing_written():
                await self._store.release(store_key, lease)  # nothing to replay: a retry runs
                return result
            item = write.claimed() if write.claimed is not None else None
            await self._store.complete(store_key, lease, result, ItemClaim(write.claim_scope, item)
                                       if write.claim_scope and item else None)
        return result

    async def _claim_item(self, claim_scope: str | None, claimed: Callable[[], str | None] | None) -> None:
        item = claimed() if claimed is not None and claim_scope else None
        if claim_scope is None or item is None:
            return
        try:
            await self._store.claim_item(ItemClaim(claim_scope, item), self._ttl_s)
        except Exception as exc:  # the write is done; only a later recovery could miss the claim
            log_event("idempotency_store_error", level=logging.WARNING, op="claim_item",
                      error=type(exc).__name__)

    async def _while_leased(self, store_key: str, lease: str, work: Callable[[], Awaitable[Any]]) -> Any:
        """`work()`, renewing the lease until it returns (errors are re-raised as they are)."""
        outcome: list[Any] = []
        failure: list[Exception] = []
        async with anyio.create_task_group() as group:
            group.start_soon(self._renew, store_key, lease)
            try:
                outcome.append(await work())
            except Exception as exc:  # raised after the group, not wrapped in an ExceptionGroup
                failure.append(exc)
            finally:
                group.cancel_scope.cancel()
        if failure:
            raise failure[0]
        return outcome[0]

    async def _renew(self, store_key: str, lease: str) -> None:
        while True:
            await anyio.sleep(self._lease_s / RENEWALS_PER_LEASE)
            try:
                held = await self._store.renew(store_key, lease, self._lease_s)
            except Exception as exc:  # store unreachable: the lease may lapse; keep trying
                log_event("idempotency_store_error", level=logging.WARNING, op="renew",
                          error=type(exc).__name__)
                continue
            if not held:
                # taken over after a stall longer than the lease: this attempt can no longer
                # record or free the key (the newer attempt owns it)
                log_event("idempotency_lease_lost", level=logging.WARNING)
                return
