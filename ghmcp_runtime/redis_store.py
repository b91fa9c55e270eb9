"""A Redis-backed `IdempotencyStore`, so idempotency keys hold across several HTTP replicas.

One string per key, `<prefix><store key>`, holding JSON
`{"s": "pending"|"done", "f": fingerprint, "c": claim id, "t": ttl_ms, "l": lease_until_ms, "r": result}`:

* `claim` is `SET key value NX PX ttl` (atomic set-if-absent with a TTL); when the key exists the
  stored entry is read and reported (state, fingerprint, result).
* `complete` turns a pending entry into done with the result and a fresh TTL window (the entry's
  own TTL, 10 minutes by default), only while it is still the claim this store saw.
* `release` deletes the entry only while it is still pending for the claim this store saw, so a
  late failure never erases a result (or a newer claim) written by another replica.
* A pending entry is leased (`l`, Redis server time in ms) to the attempt that holds it:
  `take_over` re-leases an entry whose lease ran out or was given up, `mark_unknown` gives this
  store's lease up when the outcome of its write is unknown. Leases use the Redis clock, so
  replicas need not agree on time.

`complete` and `release` are compare-and-set Lua scripts. The store remembers, per key, the claim
id it created or observed in its last `claim`; that is the claim the runner acts on (a store that
has seen no claim for the key, or has already finished it, leaves the entry alone).

Redis failures: `claim` raises `upstream_unavailable` (temporary; nothing was written to GitHub).
`complete`/`release` only log: the write already happened (or definitely failed), the entry stays
pending until its TTL, and a retry recovers it through the tool's `recover` step.

`redis` is imported when a RedisStore is built, so the default (memory) start-up does not pay for it.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections import OrderedDict
from typing import Any

from ghmcp_runtime.errors import ToolError
from ghmcp_runtime.idempotency import DEFAULT_LEASE_S, Claim, IdempotencyStore, MemoryStore
from ghmcp_runtime.logs import log_event

DEFAULT_PREFIX = "ghmcp:idem:"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_MAX_TRACKED = 10_000
_CLAIM_ATTEMPTS = 5

# KEYS[1] = entry; ARGV[1] = claim id; ARGV[2] = result JSON.
# The result is spliced in verbatim (never re-encoded by cjson), fingerprint and TTL are kept.
_COMPLETE = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, e = pcall(cjson.decode, raw)
if not ok or type(e) ~= 'table' or e.s ~= 'pending' then return 0 end
if e.c ~= ARGV[1] then return 0 end
local ttl = math.floor(tonumber(e.t) or 0)
if ttl <= 0 then ttl = 600000 end
local value = '{"s":"done","f":' .. cjson.encode(tostring(e.f)) .. ',"c":' .. cjson.encode(tostring(e.c))
  .. ',"t":' .. ttl .. ',"r":' .. ARGV[2] .. '}'
redis.call('SET', KEYS[1], value, 'PX', ttl)
return 1
"""

# KEYS[1] = entry; ARGV[1] = claim id
_RELEASE = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, e = pcall(cjson.decode, raw)
if not ok or type(e) ~= 'table' or e.s ~= 'pending' then return 0 end
if e.c ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""

# KEYS[1] = entry; ARGV[1] = new claim id; ARGV[2] = lease in ms. Returns 1 when leased.
_TAKE_OVER = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, e = pcall(cjson.decode, raw)
if not ok or type(e) ~= 'table' or e.s ~= 'pending' then return 0 end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if (tonumber(e.l) or 0) > now_ms then return 0 end
e.c = ARGV[1]
e.l = now_ms + tonumber(ARGV[2])
redis.call('SET', KEYS[1], cjson.encode(e), 'KEEPTTL')
return 1
"""

# KEYS[1] = entry; ARGV[1] = claim id
_MARK_UNKNOWN = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, e = pcall(cjson.decode, raw)
if not ok or type(e) ~= 'table' or e.s ~= 'pending' or e.c ~= ARGV[1] then return 0 end
e.l = 0
redis.call('SET', KEYS[1], cjson.encode(e), 'KEEPTTL')
return 1
"""

# KEYS[1] = entry; ARGV[1] = JSON entry without its lease; ARGV[2] = ttl ms; ARGV[3] = lease ms.
# Returns {1} when created, else {0, stored entry, now_ms}.
_CLAIM = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local raw = redis.call('GET', KEYS[1])
if raw then return {0, raw, now_ms} end
local e = cjson.decode(ARGV[1])
e.l = now_ms + tonumber(ARGV[3])
redis.call('SET', KEYS[1], cjson.encode(e), 'PX', tonumber(ARGV[2]))
return {1}
"""

UNAVAILABLE = (
    "The server's idempotency store did not answer, so nothing was written; retry shortly with "
    "the same idempotency_key."
)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class RedisStore:
    """`IdempotencyStore` over Redis (`redis.asyncio`); share one URL between replicas."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, client: Any = None) -> None:
        import redis.asyncio as aioredis
        from redis.exceptions import RedisError

        if client is None and not url.startswith(REDIS_SCHEMES):
            raise ValueError("a Redis URL starts with redis://, rediss:// or unix://")
        self._errors: type[Exception] = RedisError
        self._redis: Any = client if client is not None else aioredis.Redis.from_url(url)
        self._prefix = prefix
        self._complete = self._redis.register_script(_COMPLETE)
        self._release = self._redis.register_script(_RELEASE)
        self._take_over = self._redis.register_script(_TAKE_OVER)
        self._mark_unknown = self._redis.register_script(_MARK_UNKNOWN)
        self._claim = self._redis.register_script(_CLAIM)
        # store key -> id of the claim this process created or last observed for it
        self._claims: OrderedDict[str, str] = OrderedDict()

    def _track(self, key: str, claim_id: str) -> None:
        self._claims[key] = claim_id
        self._claims.move_to_end(key)
        while len(self._claims) > _MAX_TRACKED:
            self._claims.popitem(last=False)

    async def ping(self) -> bool:
        return bool(await self._redis.ping())

    async def aclose(self) -> None:
        await self._redis.aclose()

    async def claim(
        self, key: str, fingerprint: str, ttl_s: float, lease_s: float = DEFAULT_LEASE_S
    ) -> Claim:
        name = self._prefix + key
        ttl_ms = max(1, int(ttl_s * 1000))
        try:
            for _ in range(_CLAIM_ATTEMPTS):
                claim_id = secrets.token_hex(8)
                entry = {"s": "pending", "f": fingerprint, "c": claim_id, "t": ttl_ms}
                answer = await self._claim(keys=[name], args=[_dumps(entry), ttl_ms, int(lease_s * 1000)])
                if int(answer[0]) == 1:
                    self._track(key, claim_id)
                    return Claim("new", fingerprint)
                stored = self._decode(answer[1])
                if stored is None:  # unreadable entry (not ours): treat as absent
                    await self._redis.delete(name)
                    continue
                self._track(key, str(stored.get("c", "")))
                if stored.get("s") == "done":
                    return Claim("done", str(stored.get("f", "")), stored.get("r"))
                running = float(stored.get("l") or 0) > float(answer[2])
                return Claim("pending", str(stored.get("f", "")), running=running)
        except self._errors as exc:
            raise self._unavailable(exc) from None
        raise self._unavailable(None)

    async def take_over(self, key: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        claim_id = secrets.token_hex(8)
        try:
            leased = await self._take_over(keys=[self._prefix + key], args=[claim_id, int(lease_s * 1000)])
        except self._errors as exc:
            raise self._unavailable(exc) from None
        if int(leased) == 1:
            self._track(key, claim_id)
            return True
        return False

    async def mark_unknown(self, key: str) -> None:
        claim_id = self._claims.pop(key, None)
        if claim_id is None:
            return
        try:
            await self._mark_unknown(keys=[self._prefix + key], args=[claim_id])
        except self._errors as exc:  # the lease then simply runs out
            log_event("idempotency_store_error", level=logging.WARNING, op="mark_unknown",
                      error=type(exc).__name__)

    async def complete(self, key: str, result: Any) -> None:
        claim_id = self._claims.pop(key, None)
        if claim_id is None:  # no claim seen by this store (or already finished): nothing to do
            return
        try:
            await self._complete(keys=[self._prefix + key], args=[claim_id, _dumps(result)])
        except self._errors as exc:
            log_event("idempotency_store_error", level=logging.WARNING, op="complete",
                      error=type(exc).__name__)

    async def release(self, key: str) -> None:
        claim_id = self._claims.pop(key, None)
        if claim_id is None:
            return
        try:
            await self._release(keys=[self._prefix + key], args=[claim_id])
        except self._errors as exc:
            log_event("idempotency_store_error", level=logging.WARNING, op="release",
                      error=type(exc).__name__)

    @staticmethod
    def _decode(raw: Any) -> dict[str, Any] | None:
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    @staticmethod
    def _unavailable(exc: Exception | None) -> ToolError:
        log_event("idempotency_store_error", level=logging.WARNING, op="claim",
                  error=type(exc).__name__ if exc else "claim kept failing")
        return ToolError("upstream_unavailable", UNAVAILABLE, temporary=True, retry_after_ms=1000,
                         details={"reason": "the idempotency store is unreachable"})


def open_store(url: str) -> IdempotencyStore:
    """`memory` (one process) or a Redis URL (`redis://host:port/db`, shared by replicas)."""
    url = url.strip()
    if url == "memory":
        return MemoryStore()
    if url.startswith(REDIS_SCHEMES):
        return RedisStore(url)
    raise ValueError("expected 'memory' or a Redis URL (redis://host:port/db, rediss://, unix://)")
