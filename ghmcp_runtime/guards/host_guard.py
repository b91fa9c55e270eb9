"""DNS-rebinding and cross-origin protection: Host and Origin compared as parsed host and port.

The SDK's check admits any Host that merely starts with an allowed name and a colon
(`127.0.0.1:8000.evil.example` passes `127.0.0.1:*`); here a value is parsed first and must equal
an allowed host exactly, with either the allowed port or, for `NAME:*`, any numeric port.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ghmcp_runtime.core.logs import log_event

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
LOCAL_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOCAL_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::([0-9]{1,5}))?")
ANY_PORT = "*"


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class HostPattern:
    host: str  # lower-case; IPv6 in brackets
    port: str | None  # None: no port allowed; "*": any port; else the exact port

    @classmethod
    def parse(cls, text: str) -> HostPattern:
        name, sep, port = text.strip().rpartition(":")
        if sep and port == ANY_PORT:
            return cls(name.lower(), ANY_PORT)
        parsed = parse_host(text)
        if parsed is None:
            raise ValueError(f"not a host or host:port: {text!r}")
        return cls(*parsed)

    def admits(self, host: str, port: str | None) -> bool:
        if host != self.host:
            return False
        if self.port == ANY_PORT:
            return port is not None
        return port == self.port


def parse_host(value: str) -> tuple[str, str | None] | None:
    """`name[:port]` → (lower-case name, port or None); None when it is not that shape."""
    m = _HOST.fullmatch(value.strip())
    if m is None:
        return None
    port = m.group(2)
    if port is not None and not 0 < int(port) < 65536:
        return None
    return m.group(1).lower(), port


@dataclass(frozen=True, slots=True)
class OriginPattern:
    scheme: str
    host: HostPattern

    @classmethod
    def parse(cls, text: str) -> OriginPattern:
        scheme, sep, rest = text.strip().partition("://")
        if not sep or not scheme or "/" in rest:
            raise ValueError(f"not an origin (scheme://host[:port]): {text!r}")
        return cls(scheme.lower(), HostPattern.parse(rest))

    def admits(self, origin: str) -> bool:
        parts = urlsplit(origin)
        if parts.scheme.lower() != self.scheme or parts.path or parts.query or parts.fragment:
            return False
        if parts.username is not None or parts.password is not None:
            return False
        parsed = parse_host(parts.netloc)
        return parsed is not None and self.host.admits(*parsed)


class HostGuard:
    """ASGI middleware: 421 for a Host, 403 for an Origin that no pattern admits."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str], origins: Iterable[str]) -> None:
        self.app = app
        self.hosts = [HostPattern.parse(h) for h in hosts]
        self.origins = [OriginPattern.parse(o) for o in origins]

    def host_allowed(self, value: str | None) -> bool:
        parsed = parse_host(value) if value else None
        return parsed is not None and any(p.admits(*parsed) for p in self.hosts)

    def origin_allowed(self, value: str | None) -> bool:
        # no Origin: not a browser's cross-origin request
        return value is None or any(p.admits(value) for p in self.origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not self.host_allowed(headers.get("host")):
            log_event("http_refused", reason="host not allowed", status=421)
            await PlainTextResponse("Invalid Host header", 421)(scope, receive, send)
            return
        if not self.origin_allowed(headers.get("origin")):
            log_event("http_refused", reason="origin not allowed", status=403)
            await PlainTextResponse("Invalid Origin header", 403)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def host_patterns(bind_host: str, extra: Iterable[str] = ()) -> list[str]:
    """Loopback names, the bound host when it is a real name, and what the operator allows."""
    hosts = [*LOCAL_HOSTS, *extra]
    if bind_host not in ("0.0.0.0", "::", *LOOPBACK_NAMES):
        name = f"[{bind_host}]" if ":" in bind_host else bind_host
        hosts += [name, f"{name}:*"]
    return hosts


def server_token_refusal(bind_host: str, allowed_hosts: Iterable[str], allowed_origins: Iterable[str],
                         public_url: str | None) -> str | None:
    """Why `--allow-server-token` must not run with these settings, or None. The operator's
    token answers requests that come from this machine; a non-loopback name clients reach the
    server by (an allowed Host or Origin, the public URL) means a proxy in front, and every
    request through it would arrive from loopback and act as the operator."""
    if not is_loopback(bind_host):
        return "--allow-server-token is only allowed with a loopback --host"
    for entry in allowed_hosts:
        name = entry.strip().rpartition(":")[0] if entry.strip().endswith(":*") else entry
        parsed = parse_host(name)
        if parsed is None or not is_loopback(parsed[0]):
            return (f"--allow-server-token cannot be combined with --allowed-host {entry!r}: behind "
                    "a proxy every request would act with the operator's token")
    for origin in allowed_origins:
        if not is_loopback(urlsplit(origin.strip()).hostname or ""):
            return (f"--allow-server-token cannot be combined with --allowed-origin {origin!r}: "
                    "pages from that origin would act with the operator's token")
    if public_url and not is_loopback(urlsplit(public_url).hostname or ""):
        return ("--allow-server-token cannot be combined with a non-loopback GHMCP_PUBLIC_URL: "
                "behind a proxy every request would act with the operator's token")
    return None
