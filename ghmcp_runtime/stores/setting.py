"""Which idempotency store a server uses (GHMCP_IDEMPOTENCY_STORE, --idempotency-store), checked at
start without loading a store: the in-memory one is built with the first tool call."""

from __future__ import annotations

MEMORY = "memory"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
DEFAULT_KEYS_PER_CALLER = 1_000  # live keys one caller may hold (GHMCP_IDEMPOTENCY_KEYS_PER_CALLER)
# Each caller's first live keys are always admitted: no set of other callers can deny them.
RESERVED_KEYS_PER_CALLER = 10
# Keys beyond each caller's reserved ones, all callers together (GHMCP_IDEMPOTENCY_SHARED_KEYS):
# what bounds the store, since only a call that may have changed something keeps its key.
DEFAULT_SHARED_KEYS = 10_000


def store_kind(url: str) -> str:
    """"memory" or "redis"; anything else is a ValueError naming the choices."""
    url = url.strip()
    if url == MEMORY:
        return "memory"
    if url.startswith(REDIS_SCHEMES):
        return "redis"
    raise ValueError("expected 'memory' or a Redis URL (redis://host:port/db, rediss://, unix://)")
