"""hishel's RFC 9111 cache over the network transport, partitioned by caller, plus a bounded
in-memory storage (hishel ships SQLite and Redis ones only).

What hishel cannot be told, done here around it:

* per-caller entries: hishel keys by URL; `CallerPartitioned` gives each request the key
  sha256(caller identity, URL) through hishel's per-request `caching` extension, and passes
  requests without an identity straight to the network.
* always revalidate: GitHub allows `max-age=60`; the cache is told `Cache-Control: no-cache` on
  every GET (RFC 9111 §5.2.1.4: use nothing stored without validating it), and `Upstream` takes
  that directive off again before the request leaves, so GitHub sees the request as the tool made
  it plus `If-None-Match` / `If-Modified-Since`.
* what is stored (`StoredEntries`): only 200s to GETs that carry a validator, one entry per key (a
  newer one replaces it, so a weak-ETag 304 never has two candidates), and the request without
  its `Authorization`: a token is never written to memory or Redis as cache data.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
from hishel import (
    AsyncBaseStorage,
    AsyncRedisStorage,
    CacheOptions,
    Entry,
    Headers,
    Request,
    Response,
)
from hishel.httpx import AsyncCacheTransport

from ghmcp_runtime.http_cache import PARTITION

REDIS_PREFIX = "ghmcp:http"
REDIS_TTL_S = 3600.0
_REVALIDATE = "no-cache"
_SECRET_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds of the cache: in memory, least recently used entries go first; in Redis, the
    oldest. A caller past its own bound loses its own entries, never another caller's."""

    max_entries: int = 2048
    max_bytes: int = 16 * 1024 * 1024  # GHMCP_HTTP_CACHE_MAX_BYTES
    max_bytes_per_caller: int = 4 * 1024 * 1024  # GHMCP_HTTP_CACHE_MAX_BYTES_PER_CALLER
    max_entry_bytes: int = 1024 * 1024  # a larger body is served, not stored
    ttl_s: float = 3600.0


def caller_of(key: str) -> str:
    """The caller part of a cache key (`CallerPartitioned` makes them `<caller>/<digest>`)."""
    return key.partition("/")[0]


def caching_transport(
    inner: httpx.AsyncBaseTransport, where: str, limits: Limits | None = None
) -> httpx.AsyncBaseTransport:
    limits = limits or Limits()
    storage: AsyncBaseStorage
    if where == "memory":
        storage = MemoryStorage(limits)
    else:
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(where)
        storage = RedisBounded(
            AsyncRedisStorage(client, key_prefix=REDIS_PREFIX, default_ttl=REDIS_TTL_S,
                              max_stream_size=limits.max_entry_bytes),
            client, limits)
    return CallerPartitioned(inner, StoredEntries(storage))


class Upstream(httpx.AsyncBaseTransport):
    """The network side of the cache: drops the cache's own directive, and a 304's body length."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("cache-control") == _REVALIDATE:
            del request.headers["cache-control"]
        response = await self.inner.handle_async_request(request)
        if response.status_code == 304:  # hishel would copy it onto the stored 200
            response.headers.pop("content-length", None)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class CallerPartitioned(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, storage: AsyncBaseStorage) -> None:
        self._network = inner
        self._cache = AsyncCacheTransport(Upstream(inner), storage=storage,
                                          rfc=CacheOptions(shared=False))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        partition = request.extensions.get(PARTITION)
        if not isinstance(partition, str) or not partition:
            return await self._network.handle_async_request(request)
        key = f"{hashlib.sha256(partition.encode()).hexdigest()[:32]}/" + hashlib.sha256(
            f"{partition}\n{request.url}".encode()).hexdigest()
        request.extensions = {**request.extensions, "caching": {"key": key}}
        if request.method == "GET":
            request.headers["cache-control"] = _REVALIDATE
        return await self._cache.handle_async_request(request)

    async def aclose(self) -> None:
        await self._cache.aclose()  # closes the network transport and the storage


def _has_validator(response: Response) -> bool:
    return "etag" in response.headers or "last-modified" in response.headers


def _without_secrets(request: Request) -> Request:
    kept = {k: v for k, v in request.headers._headers.items() if k not in _SECRET_HEADERS}
    return Request(method=request.method, url=request.url, headers=Headers(kept))


class StoredEntries(AsyncBaseStorage):
    """Policy over another storage: which responses are stored, and how."""

    def __init__(self, inner: AsyncBaseStorage) -> None:
        super().__init__()
        self.inner = inner

    async def create_entry(
        self, request: Request, response: Response, key: str, *,
        ttl: float | None = None, tti: float | None = None,
    ) -> Entry:
        if request.method != "GET" or response.status_code != 200 or not _has_validator(response):
            return Entry(id=uuid.uuid4(), request=request, response=response)  # served, not stored
        for older in await self.inner.get_entries(key):
            await self.inner.remove_entry(older.id)
        return await self.inner.create_entry(_without_secrets(request), response, key, ttl=ttl, tti=tti)

    async def get_entries(self, key: str) -> list[Entry]:
        return await self.inner.get_entries(key)

    async def update_headers(self, id: uuid.UUID, headers: Headers) -> None:
        await self.inner.update_headers(id, headers)

    async def remove_entry(self, id: uuid.UUID) -> None:
        await self.inner.remove_entry(id)

    async def close(self) -> None:
        await self.inner.close()


@dataclass(slots=True)
class _Stored:
    key: str
    request: Request
    status: int
    headers: Headers
    body: bytes
    expires: float

    @property
    def size(self) -> int:
        return len(self.body) + sum(len(k) + len(v) for k, v in self.headers.items())


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body


class MemoryStorage(AsyncBaseStorage):
    """hishel's storage contract in one process's memory, bounded by `Limits` (LRU)."""

    def __init__(self, limits: Limits) -> None:
        super().__init__(default_ttl=limits.ttl_s, max_stream_size=limits.max_entry_bytes)
        self.limits = limits
        self._entries: OrderedDict[uuid.UUID, _Stored] = OrderedDict()  # least recently used first
        self._by_key: dict[str, set[uuid.UUID]] = {}
        self._bytes = 0
        # per caller: its entries, least recently used first, and the bytes they hold
        self._callers: dict[str, OrderedDict[uuid.UUID, None]] = {}
        self._caller_bytes: dict[str, int] = {}

    @property
    def entries(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """Bytes held (bodies and headers)."""
        return self._bytes

    async def create_entry(
        self, request: Request, response: Response, key: str, *,
        ttl: float | None = None, tti: float | None = None,
    ) -> Entry:
        entry_id = uuid.uuid4()
        stream = self._saving(entry_id, request, response, key, ttl)
        return Entry(id=entry_id, request=request, response=replace(response, stream=stream))

    async def _saving(self, entry_id: uuid.UUID, request: Request, response: Response, key: str,
                      ttl: float | None) -> AsyncIterator[bytes]:
        """The body, passed through; stored once it has been read whole (and is small enough)."""
        chunks: list[bytes] | None = []
        size = 0
        source = response.stream
        if source is not None:
            assert isinstance(source, AsyncIterator)
            async for chunk in source:
                size += len(chunk)
                if chunks is not None and size > self.limits.max_entry_bytes:
                    chunks = None
                if chunks is not None:
                    chunks.append(chunk)
                yield chunk
        if chunks is not None:
            lifetime = ttl if ttl is not None else self.limits.ttl_s
            self._add(entry_id, _Stored(key, request, response.status_code, response.headers,
                                        b"".join(chunks), time.monotonic() + lifetime))

    def caller_size(self, caller: str) -> int:
        """Bytes held for `caller` (the caller part of a cache key)."""
        return self._caller_bytes.get(caller, 0)

    def _add(self, entry_id: uuid.UUID, stored: _Stored) -> None:
        caller = caller_of(stored.key)
        if stored.size > self.limits.max_bytes_per_caller:
            return  # it would evict everything else of its caller and still not fit
        self._entries[entry_id] = stored
        self._by_key.setdefault(stored.key, set()).add(entry_id)
        self._callers.setdefault(caller, OrderedDict())[entry_id] = None
        self._bytes += stored.size
        self._caller_bytes[caller] = self._caller_bytes.get(caller, 0) + stored.size
        while self._caller_bytes[caller] > self.limits.max_bytes_per_caller:
            self._drop(next(iter(self._callers[caller])))  # its own oldest, nobody else's
        while self._entries and (len(self._entries) > self.limits.max_entries
                                 or self._bytes > self.limits.max_bytes):
            self._drop(next(iter(self._entries)))

    def _drop(self, entry_id: uuid.UUID) -> None:
        stored = self._entries.pop(entry_id, None)
        if stored is not None:
            self._bytes -= stored.size
            ids = self._by_key[stored.key]
            ids.discard(entry_id)
            if not ids:
                del self._by_key[stored.key]
            caller = caller_of(stored.key)
            self._callers[caller].pop(entry_id, None)
            self._caller_bytes[caller] -= stored.size
            if not self._callers[caller]:
                del self._callers[caller], self._caller_bytes[caller]

    async def get_entries(self, key: str) -> list[Entry]:
        now = time.monotonic()
        found: list[Entry] = []
        for entry_id in list(self._by_key.get(key, ())):
            stored = self._entries[entry_id]
            if stored.expires <= now:
                self._drop(entry_id)
                continue
            self._entries.move_to_end(entry_id)
            self._callers[caller_of(stored.key)].move_to_end(entry_id)
            found.append(Entry(id=entry_id, request=stored.request, response=Response(
                status_code=stored.status, headers=stored.headers, stream=_once(stored.body))))
        return found

    async def update_headers(self, id: uuid.UUID, headers: Headers) -> None:
        stored = self._entries.get(id)
        if stored is not None:
            before = stored.size
            stored.headers = headers
            self._bytes += stored.size - before
            self._caller_bytes[caller_of(stored.key)] += stored.size - before

    async def remove_entry(self, id: uuid.UUID) -> None:
        self._drop(id)


# Redis keeps what it is told to; these bounds are kept beside hishel's entries: per entry its
# caller and size, per caller and overall a sorted set of entries by when each expires, and byte
# counters. KEYS: the accounting prefix. ARGV: entry id, caller, size, now ms, ttl ms, bytes per
# caller, bytes overall. Returns the ids of the entries to remove: expired ones, then the
# caller's own oldest while it is over its bound, then the oldest of all while the total is.
_ACCOUNT = """
local p, id, caller = KEYS[1], ARGV[1], ARGV[2]
local size, now, ttl = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local gone = {}
local function forget(victim)
  local who = redis.call('HGET', p .. 'caller', victim)
  local bytes = tonumber(redis.call('HGET', p .. 'size', victim) or '0')
  redis.call('HDEL', p .. 'caller', victim)
  redis.call('HDEL', p .. 'size', victim)
  redis.call('ZREM', p .. 'all', victim)
  redis.call('DECRBY', p .. 'total', bytes)
  if who then
    redis.call('ZREM', p .. 'of:' .. who, victim)
    redis.call('DECRBY', p .. 'bytes:' .. who, bytes)
  end
  table.insert(gone, victim)
end
for _, victim in ipairs(redis.call('ZRANGEBYSCORE', p .. 'all', '-inf', now)) do forget(victim) end
redis.call('HSET', p .. 'caller', id, caller)
redis.call('HSET', p .. 'size', id, size)
redis.call('ZADD', p .. 'all', now + ttl, id)
redis.call('ZADD', p .. 'of:' .. caller, now + ttl, id)
redis.call('INCRBY', p .. 'total', size)
redis.call('INCRBY', p .. 'bytes:' .. caller, size)
while tonumber(redis.call('GET', p .. 'bytes:' .. caller) or '0') > tonumber(ARGV[6]) do
  local oldest = redis.call('ZRANGE', p .. 'of:' .. caller, 0, 0)[1]
  if not oldest then break end
  forget(oldest)
end
while tonumber(redis.call('GET', p .. 'total') or '0') > tonumber(ARGV[7]) do
  local oldest = redis.call('ZRANGE', p .. 'all', 0, 0)[1]
  if not oldest then break end
  forget(oldest)
end
for _, name in ipairs({'caller', 'size', 'all', 'total', 'of:' .. caller, 'bytes:' .. caller}) do
  redis.call('PEXPIRE', p .. name, ttl)
end
return gone
"""

_FORGET = """
local p, victim = KEYS[1], ARGV[1]
local who = redis.call('HGET', p .. 'caller', victim)
if not who then return 0 end
local bytes = tonumber(redis.call('HGET', p .. 'size', victim) or '0')
redis.call('HDEL', p .. 'caller', victim)
redis.call('HDEL', p .. 'size', victim)
redis.call('ZREM', p .. 'all', victim)
redis.call('ZREM', p .. 'of:' .. who, victim)
redis.call('DECRBY', p .. 'total', bytes)
redis.call('DECRBY', p .. 'bytes:' .. who, bytes)
return 1
"""


class RedisBounded(AsyncBaseStorage):
    """hishel's Redis storage held to `Limits`: a stored body is counted once read whole, and
    the entries past a bound (the caller's own first, then the oldest of all) are removed."""

    def __init__(self, inner: AsyncBaseStorage, client: Any, limits: Limits) -> None:
        super().__init__()
        self.inner = inner
        self.limits = limits
        self._prefix = f"{REDIS_PREFIX}:bounds:"
        self._client = client
        self._account = client.register_script(_ACCOUNT)
        self._forget = client.register_script(_FORGET)

    async def create_entry(
        self, request: Request, response: Response, key: str, *,
        ttl: float | None = None, tti: float | None = None,
    ) -> Entry:
        entry = await self.inner.create_entry(request, response, key, ttl=ttl, tti=tti)
        stream = self._counted(entry, caller_of(key), ttl if ttl is not None else REDIS_TTL_S)
        return replace(entry, response=replace(entry.response, stream=stream))

    async def _counted(self, entry: Entry, caller: str, ttl: float) -> AsyncIterator[bytes]:
        size = sum(len(k) + len(v) for k, v in entry.response.headers.items())
        source = entry.response.stream
        assert isinstance(source, AsyncIterator)
        async for chunk in source:
            size += len(chunk)
            yield chunk
        if size > self.limits.max_entry_bytes:
            return  # not stored
        if size > self.limits.max_bytes_per_caller:
            await self.inner.remove_entry(entry.id)
            return
        now_ms = int(time.time() * 1000)
        gone = await self._account(keys=[self._prefix], args=[
            entry.id.hex, caller, size, now_ms, int(ttl * 1000),
            self.limits.max_bytes_per_caller, self.limits.max_bytes])
        for victim in gone:
            await self._evict(uuid.UUID(victim.decode() if isinstance(victim, bytes) else victim))

    async def _evict(self, id: uuid.UUID) -> None:
        """Out of the index, and its data deleted now: hishel keeps a removed (or replaced)
        entry's data three minutes for readers still streaming it, which would let a flood
        outgrow any bound (a reader that loses the race fails and re-reads from GitHub)."""
        await self.inner.remove_entry(id)
        await self._client.delete(*(f"{REDIS_PREFIX}:{part}:{id.hex}"
                                    for part in ("entry", "stream", "stream_done")))

    async def get_entries(self, key: str) -> list[Entry]:
        return await self.inner.get_entries(key)

    async def update_headers(self, id: uuid.UUID, headers: Headers) -> None:
        await self.inner.update_headers(id, headers)

    async def remove_entry(self, id: uuid.UUID) -> None:
        await self._forget(keys=[self._prefix], args=[id.hex])
        await self._evict(id)

    async def close(self) -> None:
        await self.inner.close()
