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

ENV = "GHMCP_HTTP_CACHE"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
# request extension carrying the caller's identity; a request without it is never cached
PARTITION = "ghmcp.cache_partition"


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds of the cache: in memory, least recently used entries go first; in Redis, the
    oldest. A caller past its own bound loses its own entries, never another caller's."""

    max_entries: int = 2048
    max_bytes: int = 16 * 1024 * 1024  # GHMCP_HTTP_CACHE_MAX_BYTES
    max_bytes_per_caller: int = 4 * 1024 * 1024  # GHMCP_HTTP_CACHE_MAX_BYTES_PER_CALLER
    max_entry_bytes: int = 1024 * 1024  # a larger body is served, not stored
    ttl_s: float = 3600.0


@dataclass(frozen=True, slots=True)
class HttpCache:
    """Where cached reads live: `memory` or a Redis URL (http_cache_store wraps the network
    transport in the cache)."""

    where: str
    limits: Limits | None = None  # bounds (None: http_cache_store's defaults)
    # the operator's byte bounds over those (GHMCP_HTTP_CACHE_MAX_BYTES[_PER_CALLER])
    max_bytes: int | None = None
    max_bytes_per_caller: int | None = None

    def bounds(self) -> Limits:
        """The limits with the operator's byte bounds applied."""
        limits = self.limits or Limits()
        if self.max_bytes is not None:
            limits = replace(limits, max_bytes=self.max_bytes)
        if self.max_bytes_per_caller is not None:
            limits = replace(limits, max_bytes_per_caller=self.max_bytes_per_caller)
        return limits


def parse_setting(value: str) -> HttpCache | None:
    """`memory`, `off` or a Redis URL; anything else is a ValueError naming the choices."""
    value = value.strip()
    if value == "off":
        return None
    if value == "memory" or value.startswith(REDIS_SCHEMES):
        return HttpCache(value)
    raise ValueError(f"{ENV} must be 'memory', 'off' or a Redis URL (redis://host:port/db)")
