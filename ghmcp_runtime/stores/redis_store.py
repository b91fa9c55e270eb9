"""A Redis-backed `IdempotencyStore`, so idempotency keys hold across several HTTP replicas.

One string per key, `<prefix><store key>`, holding JSON
`{"s": "pending"|"done", "f": fingerprint, "c": lease token, "t": ttl_ms, "l": lease_until_ms,
"st": first attempt's start (ms), "a": [[start, end, offset], ...] attempts whose answers were
lost (each on its own server's clock), "r": result}`, and one sorted set per claim scope,
`<prefix>claims:<scope>`, of claimed items scored by when their claim expires (ms). Every
operation is one Lua script, so it is atomic across replicas; lease and TTL times come from the
Redis clock (`TIME`), so replicas need not agree.

* `claim` creates a pending entry leased to the caller (a fresh token in `c`) when the key is
  absent, with a TTL of `t`; otherwise it reports the stored entry (state, fingerprint, result,
  whether its lease is live, first start).
* `take_over` re-leases a pending entry whose lease ran out or was given up (a new token).
* `renew`, `mark_unknown`, `complete` and `release` act only while `c` is still the caller's
  token: a stale attempt (its lease lapsed and was taken over) changes nothing. `renew` and
  every lease grant restart the entry's TTL, so a pending entry outlives its live attempt.
* `complete` turns the entry into done with the result spliced in verbatim (never re-encoded
  by cjson) and a fresh TTL window (the entry's own TTL, 10 minutes by default), and claims the
  written item in the same script; `mark_unknown` appends the lost attempt to `a`.

Redis failures: `claim`, `take_over` and `renew` raise `upstream_unavailable` (temporary;
nothing was written to GitHub; the runner logs a failed renewal and keeps the attempt going);
`claimed` raises too (the runner answers `outcome_unknown` and keeps the key).
`mark_unknown`/`complete`/`release`/`claim_item` only log: the write already happened (or
definitely failed), the entry stays pending until its TTL, and a retry recovers it through the
tool's `recover` step.

`redis` is imported when a RedisStore is built, so the default (memory) start-up does not pay for it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.logs import log_event
from ghmcp_runtime.stores.idempotency import (
    DEFAULT_LEASE_S,
    MAX_ATTEMPTS,
    Attempt,
    Claim,
    IdempotencyStore,
    ItemClaim,
    KeyQuotaExceeded,
    MemoryStore,
    new_lease,
)
from ghmcp_runtime.stores.setting import (
    DEFAULT_KEYS_PER_CALLER,
    DEFAULT_SHARED_KEYS,
    REDIS_SCHEMES,
    RESERVED_KEYS_PER_CALLER,
    store_kind,
)

DEFAULT_PREFIX = "ghmcp:idem:"
_CLAIM_ATTEMPTS = 5

# Quotas: a sorted set `<prefix>owner:<identity>` holds the caller's live entries, and
# `<prefix>shared` the entries past their owner's reserved first ones (flag `p` in the entry),
# both scored by when each expires; every script that sets an entry's TTL moves its scores,
# `claim` drops the expired ones and refuses a new key at the caller's quota, or past its
# reserved keys when the shared ones are taken. `track(e, ttl_ms)` after a SET.
_TRACK = """
local function track(e, ttl_ms, now_ms)
  if type(e.o) ~= 'string' or e.o == '' then return end
  local z = OWNERS .. e.o
  redis.call('ZADD', z, now_ms + ttl_ms, KEYS[1])
  if redis.call('PTTL', z) < ttl_ms then redis.call('PEXPIRE', z, ttl_ms) end
  if e.p == 1 then
    redis.call('ZADD', SHARED, now_ms + ttl_ms, KEYS[1])
    if redis.call('PTTL', SHARED) < ttl_ms then redis.call('PEXPIRE', SHARED, ttl_ms) end
  end
end
"""

# Shared head of the lease-scoped scripts: KEYS[1] = entry, ARGV[1] = the caller's lease token.
# Leaves `e` (the decoded pending entry), `now_ms` and `ttl` (the entry's own TTL in ms), or
# returns 0 when the entry is gone, unreadable, done or leased to someone else.
_LEASED = _TRACK + """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, e = pcall(cjson.decode, raw)
if ARGV[1] == '' or not ok or type(e) ~= 'table' or e.s ~= 'pending' or e.c ~= ARGV[1] then
  return 0
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = math.floor(tonumber(e.t) or 0)
if ttl <= 0 then ttl = 600000 end
"""

# ARGV[2] = result JSON. Fingerprint and TTL are kept. KEYS[2] (optional) = the claim scope's
# set, ARGV[3] = the item it claims for the entry's TTL.
_COMPLETE = _LEASED + """
local value = '{"s":"done","f":' .. cjson.encode(tostring(e.f)) .. ',"c":"","t":' .. ttl
  .. ',"o":' .. cjson.encode(tostring(e.o or '')) .. (e.p == 1 and ',"p":1' or '')
  .. ',"r":' .. ARGV[2] .. '}'
redis.call('SET', KEYS[1], value, 'PX', ttl)
track(e, ttl, now_ms)
if KEYS[2] then
  redis.call('ZADD', KEYS[2], now_ms + ttl, ARGV[3])
  if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
end
return 1
"""

# KEYS[1] = the claim scope's set; ARGV[1] = item; ARGV[2] = ttl ms.
_CLAIM_ITEM = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now_ms + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""

# KEYS[1] = the claim scope's set: its unexpired items.
_CLAIMED = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""

_RELEASE = _LEASED + """
if type(e.o) == 'string' and e.o ~= '' then redis.call('ZREM', OWNERS .. e.o, KEYS[1]) end
if e.p == 1 then redis.call('ZREM', SHARED, KEYS[1]) end
return redis.call('DEL', KEYS[1])
"""

# ARGV[2] = lease in ms.
_RENEW = _LEASED + """
e.l = now_ms + tonumber(ARGV[2])
redis.call('SET', KEYS[1], cjson.encode(e), 'PX', math.max(ttl, tonumber(ARGV[2])))
track(e, math.max(ttl, tonumber(ARGV[2])), now_ms)
return 1
"""

# ARGV[2] = the lost attempt as JSON [start, end, offset], or '' when no write was sent;
# ARGV[3] = how many attempts are kept.
_MARK_UNKNOWN = _LEASED + """
e.l = 0
e.c = ''
if ARGV[2] ~= '' then
  local kept = {}
  if type(e.a) == 'table' then for _, a in ipairs(e.a) do table.insert(kept, a) end end
  table.insert(kept, cjson.decode(ARGV[2]))
  while #kept > tonumber(ARGV[3]) do table.remove(kept, 1) end
  e.a = kept
end
redis.call('SET', KEYS[1], cjson.encode(e), 'KEEPTTL')
return 1
"""

# KEYS[1] = entry; ARGV[1] = new lease token; ARGV[2] = lease in ms. Returns 1 when leased.
_TAKE_OVER = _TRACK + """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, e = pcall(cjson.decode, raw)
if not ok or type(e) ~= 'table' or e.s ~= 'pending' then return 0 end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if (tonumber(e.l) or 0) > now_ms then return 0 end
local ttl = math.floor(tonumber(e.t) or 0)
if ttl <= 0 then ttl = 600000 end
e.c = ARGV[1]
e.l = now_ms + tonumber(ARGV[2])
redis.call('SET', KEYS[1], cjson.encode(e), 'PX', math.max(ttl, tonumber(ARGV[2])))
track(e, math.max(ttl, tonumber(ARGV[2])), now_ms)
return 1
"""

# KEYS[1] = entry; ARGV[1] = JSON entry without its lease and start (with its owner `o`);
# ARGV[2] = ttl ms; ARGV[3] = lease ms; ARGV[4] = keys per owner; ARGV[5] = reserved keys per
# owner; ARGV[6] = shared keys. Returns {1, now_ms} when created, {0, stored entry, now_ms} when
# the key exists, {2 (the owner's quota) or 3 (the shared keys), ms until the oldest key in it
# expires, now_ms} when refused (nothing written, nobody's key evicted).
_CLAIM = _TRACK + """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local raw = redis.call('GET', KEYS[1])
if raw then return {0, raw, now_ms} end
local e = cjson.decode(ARGV[1])
local function wait(z)
  local first = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
  return tostring(math.max(0, (tonumber(first[2]) or now_ms) - now_ms))
end
if type(e.o) == 'string' and e.o ~= '' then
  local z = OWNERS .. e.o
  redis.call('ZREMRANGEBYSCORE', z, '-inf', now_ms)
  local held = redis.call('ZCARD', z)
  if held >= tonumber(ARGV[4]) then return {2, wait(z), now_ms} end
  if held >= tonumber(ARGV[5]) then
    redis.call('ZREMRANGEBYSCORE', SHARED, '-inf', now_ms)
    if redis.call('ZCARD', SHARED) >= tonumber(ARGV[6]) then return {3, wait(SHARED), now_ms} end
    e.p = 1
  end
end
e.l = now_ms + tonumber(ARGV[3])
e.st = now_ms
redis.call('SET', KEYS[1], cjson.encode(e), 'PX', tonumber(ARGV[2]))
track(e, tonumber(ARGV[2]), now_ms)
return {1, now_ms}
"""

UNAVAILABLE = (
    "The server's idempotency store did not answer, so nothing was written; retry shortly with "
    "the same idempotency_key."
)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class RedisStore:
    """`IdempotencyStore` over Redis (`redis.asyncio`); share one URL between replicas."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, client: Any = None,
                 keys_per_caller: int = DEFAULT_KEYS_PER_CALLER,
                 reserved_per_caller: int = RESERVED_KEYS_PER_CALLER,
                 shared_keys: int = DEFAULT_SHARED_KEYS) -> None:
        import redis.asyncio as aioredis
        from redis.exceptions import RedisError

        if client is None and not url.startswith(REDIS_SCHEMES):
            raise ValueError("a Redis URL starts with redis://, rediss:// or unix://")
        self._errors: type[Exception] = RedisError
        self._redis: Any = client if client is not None else aioredis.Redis.from_url(url)
        self._prefix = prefix
        self._per_owner = keys_per_caller
        self._reserved = reserved_per_caller
        self._shared = shared_keys
        # a JSON string is a Lua one
        owners = (f"local OWNERS = {json.dumps(prefix + 'owner:')}\n"
                  f"local SHARED = {json.dumps(prefix + 'shared')}\n")
        register = self._redis.register_script
        self._complete = register(owners + _COMPLETE)
        self._release = register(owners + _RELEASE)
        self._renew = register(owners + _RENEW)
        self._take_over = register(owners + _TAKE_OVER)
        self._mark_unknown = register(owners + _MARK_UNKNOWN)
        self._claim = register(owners + _CLAIM)
        self._claim_item = self._redis.register_script(_CLAIM_ITEM)
        self._claimed = self._redis.register_script(_CLAIMED)

    async def ping(self) -> bool:
        return bool(await self._redis.ping())

    async def aclose(self) -> None:
        await self._redis.aclose()

    async def claim(
        self, key: str, fingerprint: str, ttl_s: float, lease_s: float = DEFAULT_LEASE_S,
        owner: str = "",
    ) -> Claim:
        name = self._prefix + key
        ttl_ms = max(1, int(ttl_s * 1000))
        try:
            for _ in range(_CLAIM_ATTEMPTS):
                lease = new_lease()
                entry = {"s": "pending", "f": fingerprint, "c": lease, "t": ttl_ms, "o": owner}
                answer = await self._claim(keys=[name], args=[
                    _dumps(entry), ttl_ms, int(lease_s * 1000), self._per_owner, self._reserved,
                    self._shared])
                if int(answer[0]) == 1:
                    return Claim("new", fingerprint, lease=lease, started_at=int(answer[1]) / 1000)
                if int(answer[0]) == 2:
                    raise KeyQuotaExceeded(self._per_owner, int(answer[1]) / 1000)
                if int(answer[0]) == 3:
                    raise KeyQuotaExceeded(self._shared, int(answer[1]) / 1000, whole_store=True)
                stored = self._decode(answer[1])
                if stored is None:  # unreadable entry (not ours): treat as absent
                    await self._redis.delete(name)
                    continue
                if stored.get("s") == "done":
                    return Claim("done", str(stored.get("f", "")), stored.get("r"))
                running = float(stored.get("l") or 0) > float(answer[2])
                raw = stored.get("a")  # cjson writes an empty list as {}
                attempts: list[Any] = raw if isinstance(raw, list) else []
                return Claim("pending", str(stored.get("f", "")), running=running,
                             started_at=float(stored.get("st") or 0) / 1000,
                             attempts=tuple(a for a in map(Attempt.decode, attempts) if a),
                             lapsed=bool(stored.get("c")) and not running)
        except self._errors as exc:
            raise self._unavailable("claim", exc) from None
        raise self._unavailable("claim", None)

    async def take_over(self, key: str, lease_s: float = DEFAULT_LEASE_S) -> str | None:
        lease = new_lease()
        try:
            leased = await self._take_over(keys=[self._prefix + key], args=[lease, int(lease_s * 1000)])
        except self._errors as exc:
            raise self._unavailable("take_over", exc) from None
        return lease if int(leased) == 1 else None

    async def renew(self, key: str, lease: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        try:
            renewed = await self._renew(keys=[self._prefix + key], args=[lease, int(lease_s * 1000)])
        except self._errors as exc:
            raise self._unavailable("renew", exc) from None
        return int(renewed) == 1

    async def mark_unknown(self, key: str, lease: str, attempt: Attempt | None = None) -> None:
        lost = _dumps(attempt.encode()) if attempt is not None else ""
        await self._settle("mark_unknown", self._mark_unknown, [key], lease, lost, str(MAX_ATTEMPTS))

    async def complete(self, key: str, lease: str, result: Any, claim: ItemClaim | None = None) -> None:
        if claim is None:
            await self._settle("complete", self._complete, [key], lease, _dumps(result))
        else:
            await self._settle("complete", self._complete, [key, self._claims(claim.scope)], lease,
                               _dumps(result), claim.item)

    async def release(self, key: str, lease: str) -> None:
        await self._settle("release", self._release, [key], lease)

    async def claim_item(self, claim: ItemClaim, ttl_s: float) -> None:
        try:
            await self._claim_item(keys=[self._claims(claim.scope)],
                                   args=[claim.item, max(1, int(ttl_s * 1000))])
        except self._errors as exc:  # logged: only a later recovery could miss the claim
            log_event("idempotency_store_error", level=logging.WARNING, op="claim_item",
                      error=type(exc).__name__)

    async def claimed(self, scope: str) -> frozenset[str]:
        try:
            items = await self._claimed(keys=[self._claims(scope)])
        except self._errors as exc:
            raise self._unavailable("claimed", exc) from None
        return frozenset(i.decode() if isinstance(i, bytes) else str(i) for i in items)

    def _claims(self, scope: str) -> str:
        return f"{self._prefix}claims:{scope}"

    async def _settle(self, op: str, script: Any, keys: list[str], lease: str, *args: str) -> None:
        try:
            # the entry's key, then any other key the script touches (already full names)
            await script(keys=[self._prefix + keys[0], *keys[1:]], args=[lease, *args])
        except self._errors as exc:  # the entry stays pending; its lease runs out, a retry recovers
            log_event("idempotency_store_error", level=logging.WARNING, op=op,
                      error=type(exc).__name__)

    @staticmethod
    def _decode(raw: Any) -> dict[str, Any] | None:
        try:
            value = json.loads(raw)
        except (TypeError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    @staticmethod
    def _unavailable(op: str, exc: Exception | None) -> ToolError:
        log_event("idempotency_store_error", level=logging.WARNING, op=op,
                  error=type(exc).__name__ if exc else "claim kept failing")
        return ToolError("upstream_unavailable", UNAVAILABLE, temporary=True, retry_after_ms=1000,
                         details={"reason": "the idempotency store is unreachable"})


def open_store(url: str, keys_per_caller: int = DEFAULT_KEYS_PER_CALLER,
               shared_keys: int = DEFAULT_SHARED_KEYS) -> IdempotencyStore:
    """`memory` (one process) or a Redis URL (`redis://host:port/db`, shared by replicas)."""
    url = url.strip()
    if store_kind(url) == "memory":
        return MemoryStore(keys_per_caller=keys_per_caller, max_entries=shared_keys)
    return RedisStore(url, keys_per_caller=keys_per_caller, shared_keys=shared_keys)


def eviction_warnings(url: str, http_cache: str = "") -> list[str]:
    """Why this Redis may drop idempotency keys before they expire (an evicting maxmemory
    policy, an HTTP cache in the same instance), as start-up warnings; best effort: a server that
    cannot read its configuration (managed Redis, ACLs) says so instead."""
    import redis
    from redis.exceptions import RedisError

    client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:
        policy = str(client.config_get("maxmemory-policy").get("maxmemory-policy", ""))
        limit = int(client.config_get("maxmemory").get("maxmemory", 0) or 0)
    except (RedisError, OSError, ValueError) as exc:
        return [f"could not read the idempotency Redis's maxmemory-policy ({type(exc).__name__}): "
                "keys are only safe in a Redis that never evicts (maxmemory-policy noeviction)"]
    finally:
        client.close()
    found = []
    if limit and policy != "noeviction":
        found.append(f"the idempotency Redis evicts keys when full (maxmemory-policy {policy}): an "
                     "evicted key lets a retried write happen twice; use noeviction, or a Redis "
                     "instance of its own for the keys")
    if http_cache.startswith(REDIS_SCHEMES) and _instance(http_cache) == _instance(url):
        found.append("the HTTP cache shares the idempotency Redis instance (maxmemory is per "
                     "instance, not per database): give the cache a Redis of its own")
    return found


def _instance(url: str) -> tuple[str, int | None]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return (parts.hostname or parts.path or "").lower(), parts.port
