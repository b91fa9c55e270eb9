"""Conditional reads over the network transport, partitioned by caller, on hishel's storages
(its Redis one, shared by replicas) plus a bounded in-memory storage of ours.

The protocol is the small part of RFC 9111 a client that always revalidates needs, done here
rather than by hishel's state machine (which parses every Cache-Control header: ~175 µs of CPU
per request, more than the rest of the request):

* per-caller entries: the key is `<caller>/<sha256(caller identity, URL)>` (the caller part
  lets the storages bound each caller, `Limits`); a request without an identity goes straight
  to the network.
* always revalidate: a GET with a stored entry is sent with `If-None-Match` / `If-Modified-Since`
  from the entry's validators, whatever `max-age` GitHub allows; a 304 is answered from the
  stored body, with the stored headers refreshed from the 304's (RFC 9111 §3.2, §4.3.4), so rate
  limit headers are the current ones. A stored response whose `Vary` names a request header with
  another value is not used (the partition already covers `Authorization`).
* what is stored: only 200s to GETs that carry a validator, one entry per key (a newer one
  replaces it, so a weak-ETag 304 never has two candidates), without hop-by-hop headers, and the
  request without its `Authorization`: a token is never written to memory or Redis as cache data.
* an unsafe request answered without an error invalidates the entry of its URL (RFC 9111 §4.4).

Responses carry hishel's `caching` extension ({from_cache, revalidated, stored}) when the cache
served or stored them.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
from hishel import AsyncBaseStorage, AsyncRedisStorage, Entry, Headers, Request, Response

from ghmcp_runtime.calls.http_cache import PARTITION, Limits

REDIS_PREFIX = "ghmcp:http"
REDIS_TTL_S = 3600.0
_SECRET_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
# not stored (RFC 9110 §7.6.1 hop-by-hop); the body is kept decoded-as-received, whole
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer",
                         "transfer-encoding", "upgrade"})
# describe the stored body: a 304's values never replace them (RFC 9111 §3.2)
_BODY_HEADERS = frozenset({"content-encoding", "content-type", "content-range", "content-length"})
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# (conditional request header, the stored response's validator it carries)
_VALIDATORS = (("if-none-match", "etag"), ("if-modified-since", "last-modified"))


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
    return CallerPartitioned(inner, storage)


class CallerPartitioned(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, storage: AsyncBaseStorage) -> None:
        self._network = inner
        self.storage = storage

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        partition = request.extensions.get(PARTITION)
        if not isinstance(partition, str) or not partition:
            return await self._network.handle_async_request(request)
        key = f"{hashlib.sha256(partition.encode()).hexdigest()[:32]}/" + hashlib.sha256(
            f"{partition}\n{request.url}".encode()).hexdigest()
        if request.method == "GET":
            return await self._read(request, key)
        response = await self._network.handle_async_request(request)
        if request.method in _UNSAFE and response.status_code < 400:
            for entry in await self.storage.get_entries(key):
                await self.storage.remove_entry(entry.id)
        return response

    async def _read(self, request: httpx.Request, key: str) -> httpx.Response:
        entries = [e for e in await self.storage.get_entries(key) if _vary_matches(e, request)]
        entry = entries[-1] if entries else None
        added: list[str] = []
        if entry is not None:
            for name, stored in _VALIDATORS:
                value = entry.response.headers.get_list(stored)
                if value and name not in request.headers:
                    request.headers[name] = value[0]
                    added.append(name)
        try:
            response = await self._network.handle_async_request(request)
        finally:  # the caller's request stays as it made it
            for name in added:
                del request.headers[name]
        if response.status_code == 304 and entry is not None:
            await response.aread()  # no body: the connection is free again
            headers = _refreshed(entry.response.headers, response.headers)
            if any(headers.get_list(v) != entry.response.headers.get_list(v) for _, v in _VALIDATORS):
                await self.storage.update_headers(entry.id, headers)
            # otherwise the stored entry is left as it is: only its metadata (Date, rate-limit
            # headers) would change, and every answer from it is refreshed from its own 304
            body = await _read_all(entry.response.stream)
            return _answer(request, entry.response.status_code, headers, body,
                           from_cache=True, revalidated=True, stored=False)
        if response.status_code != 200 or not ("etag" in response.headers
                                                or "last-modified" in response.headers):
            return response
        try:  # as received (still content-encoded): the client decodes what it is handed
            body = await _read_all(response.stream)
        finally:
            await response.aclose()
        kept = Headers({k: v for k, v in _header_lists(response.headers).items() if k not in _HOP_BY_HOP})
        for older in await self.storage.get_entries(key):
            await self.storage.remove_entry(older.id)
        created = await self.storage.create_entry(
            _without_secrets(request), Response(status_code=200, headers=kept, stream=_once(body)), key)
        await _read_all(created.response.stream)  # the storage keeps what was read through it
        return _answer(request, 200, kept, body, from_cache=False, revalidated=entry is not None,
                       stored=True)

    async def aclose(self) -> None:
        await self._network.aclose()
        await self.storage.close()


def _header_lists(headers: httpx.Headers) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in headers.multi_items():
        out.setdefault(name.lower(), []).append(value)
    return out


def _refreshed(stored: Headers, revalidation: httpx.Headers) -> Headers:
    fresh = {k: v for k, v in _header_lists(revalidation).items()
             if k not in _BODY_HEADERS and k not in _HOP_BY_HOP}
    return Headers({**{k: stored.get_list(k) or [] for k in stored}, **fresh})


def _vary_matches(entry: Entry, request: httpx.Request) -> bool:
    for vary in entry.response.headers.get_list("vary") or ():
        for name in (part.strip().lower() for part in vary.split(",")):
            if name == "*":
                return False
            if name in _SECRET_HEADERS:  # the partition is the caller's credential
                continue
            stored = entry.request.headers.get_list(name)
            if (stored[0] if stored else None) != request.headers.get(name):
                return False
    return True


def _answer(request: httpx.Request, status: int, headers: Headers, body: bytes, *,
            from_cache: bool, revalidated: bool, stored: bool) -> httpx.Response:
    return httpx.Response(
        status, headers=[(k, v) for k in headers for v in headers.get_list(k) or []],
        stream=httpx.ByteStream(body), request=request,
        extensions={"caching": {"from_cache": from_cache, "revalidated": revalidated, "stored": stored}})


async def _read_all(stream: object) -> bytes:
    if stream is None:
        return b""
    assert isinstance(stream, AsyncIterable)
    return b"".join([chunk async for chunk in stream])


def _without_secrets(request: httpx.Request) -> Request:
    kept: dict[str, list[str]] = {k: v for k, v in _header_lists(request.headers).items()
                                  if k not in _SECRET_HEADERS}
    return Request(method=request.method, url=str(request.url), headers=Headers(kept))


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
        return len(self.body) + sum(len(k) + sum(map(len, self.headers.get_list(k) or ()))
                                    for k in self.headers)


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
