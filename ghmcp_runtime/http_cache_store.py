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
    """Bounds of the in-memory cache (least recently used entries go first)."""

    max_entries: int = 2048
    max_bytes: int = 16 * 1024 * 1024
    max_entry_bytes: int = 1024 * 1024  # a larger body is served, not stored
    ttl_s: float = 3600.0


def caching_transport(
    inner: httpx.AsyncBaseTransport, where: str, limits: Limits | None = None
) -> httpx.AsyncBaseTransport:
    storage: AsyncBaseStorage
    if where == "memory":
        storage = MemoryStorage(limits or Limits())
    else:
        import redis.asyncio as aioredis

        storage = AsyncRedisStorage(aioredis.Redis.from_url(where), key_prefix=REDIS_PREFIX,
                                    default_ttl=REDIS_TTL_S, max_stream_size=(limits or Limits()).max_entry_bytes)
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
        key = hashlib.sha256(f"{partition}\n{request.url}".encode()).hexdigest()
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

    def _add(self, entry_id: uuid.UUID, stored: _Stored) -> None:
        self._entries[entry_id] = stored
        self._by_key.setdefault(stored.key, set()).add(entry_id)
        self._bytes += stored.size
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

    async def get_entries(self, key: str) -> list[Entry]:
        now = time.monotonic()
        found: list[Entry] = []
        for entry_id in list(self._by_key.get(key, ())):
            stored = self._entries[entry_id]
            if stored.expires <= now:
                self._drop(entry_id)
                continue
            self._entries.move_to_end(entry_id)
            found.append(Entry(id=entry_id, request=stored.request, response=Response(
                status_code=stored.status, headers=stored.headers, stream=_once(stored.body))))
        return found

    async def update_headers(self, id: uuid.UUID, headers: Headers) -> None:
        stored = self._entries.get(id)
        if stored is not None:
            self._bytes -= stored.size
            stored.headers = headers
            self._bytes += stored.size

    async def remove_entry(self, id: uuid.UUID) -> None:
        self._drop(id)
