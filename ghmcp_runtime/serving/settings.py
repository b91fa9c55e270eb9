"""The operator's configuration (environment and flags), checked when the server starts: a
setting that would leak tokens or silently break replicas stops it before it answers anything."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field, replace
from urllib.parse import urlsplit

from ghmcp_runtime.calls.http_cache import ENV as HTTP_CACHE_ENV
from ghmcp_runtime.calls.http_cache import parse_setting as parse_http_cache
from ghmcp_runtime.core.concurrent import DEFAULT_INFLIGHT_PER_CALLER, MAX_CONCURRENT
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.forges import GITHUB
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.guards.host_guard import is_loopback
from ghmcp_runtime.stores.setting import DEFAULT_KEYS_PER_CALLER, DEFAULT_SHARED_KEYS

_TRUE = ("1", "true", "yes", "on")


def check_api_url(url: str, *, allow_insecure: bool = False, forge: ForgeProfile = GITHUB) -> None:
    """Refuse an API URL that would send tokens in clear text across a network."""
    name = forge.api_url_env
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"{name} must be an https:// URL")
    if not (allow_insecure or is_loopback(parts.hostname)):
        raise ValueError(
            f"{name} is plain http:// to a host that is not loopback, so every token would "
            "cross the network in clear text; use https://, or set GHMCP_ALLOW_INSECURE_API_URL=1"
        )


def _float_env(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive")
    return value


def _concurrency_env(env: Mapping[str, str]) -> int:
    raw = env.get("GHMCP_MAX_CONCURRENT", "").strip()
    if not raw:
        return MAX_CONCURRENT
    # waves and gathers are built for at most MAX_CONCURRENT at once: the setting can only lower it
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_CONCURRENT:
        raise ValueError(f"GHMCP_MAX_CONCURRENT must be a whole number from 1 to {MAX_CONCURRENT}")
    return int(raw)


def _count_env(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1")
    return int(raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The operator's configuration. The token and API URL come from the forge's own variables
    (GITHUB_TOKEN / GITHUB_API_URL, FORGEJO_TOKEN / FORGEJO_API_URL: see `ghmcp_runtime.core.forges`)."""

    token: str | None = field(default=None, repr=False)
    api_url: str | None = None  # None: the forge's default (GitHub: api.github.com; Forgejo: none)
    # keys cursors and caller identities; replicas behind one endpoint must share it
    server_secret: bytes | None = field(default=None, repr=False)
    timeout_s: float = 20.0
    connect_timeout_s: float = 5.0
    idempotency_store: str = "memory"
    allow_insecure_api_url: bool = False
    public_url: str | None = None  # the MCP endpoint as clients reach it, e.g. https://h/mcp
    authorization_server: str | None = None  # default: the forge's, derived from api_url
    http_cache: str = "memory"  # conditional reads: memory | off | redis://… (shared by replicas)
    lockdown: bool = False  # withhold text by authors without push access (HTTP callers can also ask)
    # upstream requests one tool call may have in flight at once (1: strictly one after another)
    max_concurrent: int = MAX_CONCURRENT
    # per-caller bounds: live idempotency keys (a new one past it is refused, nothing evicted),
    # bytes of cached reads (None: http_cache_store.Limits), upstream requests in flight
    keys_per_caller: int = DEFAULT_KEYS_PER_CALLER
    shared_keys: int = DEFAULT_SHARED_KEYS  # keys past each caller's reserved first ones, in all
    http_cache_max_bytes: int | None = None
    http_cache_max_bytes_per_caller: int | None = None
    inflight_per_caller: int = DEFAULT_INFLIGHT_PER_CALLER
    # batches: write requests start at least this far apart (GitHub's best practices ask 1 s), and
    # a rate limit asking for a longer wait stops the batch instead of waiting
    write_interval_s: float = 1.0
    batch_max_wait_s: float = 60.0
    # the server's surface (HTTP requests narrow it)
    exposure: ExposureFlags = field(default_factory=ExposureFlags)
    # the name `token` had before the forge profiles (published scripts still pass it): accepted
    # at construction only, never stored; giving both names is an error
    github_token: InitVar[str | None] = None

    def __post_init__(self, github_token: str | None) -> None:
        if github_token is None:
            return
        if self.token is not None:
            raise TypeError("Settings: give token= (github_token= is its old name), not both")
        object.__setattr__(self, "token", github_token)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, forge: ForgeProfile = GITHUB) -> Settings:
        env = os.environ if env is None else env
        secret = env.get("GHMCP_SERVER_SECRET", "") or env.get("GHMCP_CURSOR_SECRET", "")
        return cls(
            token=env.get(forge.token_env, "").strip() or None,
            api_url=env.get(forge.api_url_env, "").strip() or None,
            server_secret=secret.encode() if secret else None,
            timeout_s=_float_env(env, "GHMCP_TIMEOUT_S", 20.0),
            connect_timeout_s=_float_env(env, "GHMCP_CONNECT_TIMEOUT_S", 5.0),
            idempotency_store=env.get("GHMCP_IDEMPOTENCY_STORE", "").strip() or "memory",
            allow_insecure_api_url=env.get("GHMCP_ALLOW_INSECURE_API_URL", "").lower() in _TRUE,
            public_url=env.get("GHMCP_PUBLIC_URL", "").strip() or None,
            authorization_server=env.get("GHMCP_AUTHORIZATION_SERVER", "").strip() or None,
            http_cache=_http_cache_env(env),
            lockdown=env.get("GHMCP_LOCKDOWN", "").strip().lower() in _TRUE,
            max_concurrent=_concurrency_env(env),
            keys_per_caller=_count_env(env, "GHMCP_IDEMPOTENCY_KEYS_PER_CALLER", DEFAULT_KEYS_PER_CALLER),
            shared_keys=_count_env(env, "GHMCP_IDEMPOTENCY_SHARED_KEYS", DEFAULT_SHARED_KEYS),
            http_cache_max_bytes=_count_env(env, "GHMCP_HTTP_CACHE_MAX_BYTES", 0) or None,
            http_cache_max_bytes_per_caller=_count_env(
                env, "GHMCP_HTTP_CACHE_MAX_BYTES_PER_CALLER", 0) or None,
            inflight_per_caller=_count_env(env, "GHMCP_MAX_INFLIGHT_PER_CALLER",
                                           DEFAULT_INFLIGHT_PER_CALLER),
            write_interval_s=_float_env(env, "GHMCP_WRITE_INTERVAL_S", 1.0),
            batch_max_wait_s=_float_env(env, "GHMCP_BATCH_MAX_WAIT_S", 60.0),
            exposure=ExposureFlags.from_env(env),
        )

    def api_url_for(self, forge: ForgeProfile) -> str:
        url = self.api_url or forge.default_api_url
        if not url:
            raise ValueError(
                f"{forge.api_url_env} is not set: give the API URL of the {forge.display_name} "
                "instance to use, e.g. https://codeberg.org/api/v1 (no default: a token must "
                "never reach an instance you did not name)")
        return url

    def check(self, forge: ForgeProfile = GITHUB) -> None:
        """Refuse settings that would leak tokens or silently break replicas (ValueError)."""
        check_api_url(self.api_url_for(forge), allow_insecure=self.allow_insecure_api_url, forge=forge)
        if self.lockdown:  # (guards.lockdown loads with the first call otherwise)
            from ghmcp_runtime.guards.lockdown import unavailable

            refused = unavailable(forge)
            if refused is not None:
                raise ValueError(refused)
        if self.idempotency_store != "memory" and not self.server_secret:
            # idempotency keys are scoped by caller identity, an HMAC under the server secret:
            # replicas with random secrets of their own would never recognise each other's keys
            raise ValueError(
                "a shared idempotency store needs GHMCP_SERVER_SECRET, the same value on every "
                "replica, or idempotency keys would not be recognised across replicas"
            )
        if self.http_cache not in ("memory", "off") and not self.server_secret:
            # cached reads are keyed by caller identity too: without a shared secret no replica
            # would ever find another's entries
            raise ValueError("a shared HTTP cache (GHMCP_HTTP_CACHE=redis://…) needs "
                             "GHMCP_SERVER_SECRET, the same value on every replica")

    def with_secret(self) -> Settings:
        """These settings, with a random server secret when none is configured (one process)."""
        return self if self.server_secret else replace(self, server_secret=secrets.token_bytes(32))


def _http_cache_env(env: Mapping[str, str]) -> str:
    value = env.get(HTTP_CACHE_ENV, "").strip() or "memory"
    parse_http_cache(value)  # a ValueError names the choices
    return value

