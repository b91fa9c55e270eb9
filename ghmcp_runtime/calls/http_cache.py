"""Conditional requests for GitHub reads: the setting, and the transport that applies it.

`GHMCP_HTTP_CACHE`: `memory` (default; bounded, one process), `off`, or a Redis URL
(`redis://host:port/db`, e.g. the idempotency store's) so replicas share what they have read.

A GET answered with an `ETag` or `Last-Modified` is stored under its URL *and the caller's
identity*; the next GET of that URL by the same caller is sent with `If-None-Match` /
`If-Modified-Since`, and a 304 (which spends no rate-limit budget at GitHub) is answered from the
stored body. Every read is revalidated, whatever `max-age` GitHub allows, so a tool never
returns what GitHub no longer says. The protocol and the storages (hishel's Redis one, a bounded
in-memory one) are in http_cache_store.py, imported on the first upstream request (hishel pulls in
redis and sqlite, ~170 ms, which start-up does not pay).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from ghmcp_runtime.calls.http_cache_store import Limits

ENV = "GHMCP_HTTP_CACHE"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
# request extension carrying the caller's identity; a request without it is never cached
PARTITION = "ghmcp.cache_partition"


@dataclass(frozen=True, slots=True)
class HttpCache:
    """Where cached reads live: `memory` or a Redis URL. `transport` wraps the network transport."""

    where: str
    limits: Limits | None = None  # bounds (None: http_cache_store's defaults)
    # the operator's byte bounds over those (GHMCP_HTTP_CACHE_MAX_BYTES[_PER_CALLER])
    max_bytes: int | None = None
    max_bytes_per_caller: int | None = None

    def transport(self, inner: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport:
        from ghmcp_runtime.calls.http_cache_store import Limits, caching_transport

        limits = self.limits or Limits()
        if self.max_bytes is not None:
            limits = replace(limits, max_bytes=self.max_bytes)
        if self.max_bytes_per_caller is not None:
            limits = replace(limits, max_bytes_per_caller=self.max_bytes_per_caller)
        return caching_transport(inner, self.where, limits)


def parse_setting(value: str) -> HttpCache | None:
    """`memory`, `off` or a Redis URL; anything else is a ValueError naming the choices."""
    value = value.strip()
    if value == "off":
        return None
    if value == "memory" or value.startswith(REDIS_SCHEMES):
        return HttpCache(value)
    raise ValueError(f"{ENV} must be 'memory', 'off' or a Redis URL (redis://host:port/db)")
