"""Who is calling: the request-scoped caller (identity, credential, request headers).

One `Caller` is resolved per request, before any tool, resource or completion work, and is the
only place a credential is chosen:

* no HTTP request (stdio, in-memory tests): the operator's token (`GITHUB_TOKEN`);
* an HTTP request the bearer middleware authenticated: that caller's own token;
* an HTTP request without `Authorization` that the HTTP gate let through because the operator
  opted in (`--allow-server-token`, loopback only): the operator's token;
* any other HTTP request: no credential at all (`missing_credential`), never the operator's.

`identity` scopes cursors and idempotency keys and names the caller in every log line: an HMAC
of the token under the server secret, so it cannot be recomputed from a leaked token without the
secret, and replicas sharing the secret agree on it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ghmcp_runtime.guards.exposure import ExposurePolicy, Surface
    from ghmcp_runtime.guards.token_access import TokenAccess

ANONYMOUS = "anonymous"
MAX_TOKEN_CHARS = 2048
# scope key the HTTP gate sets when a request without Authorization may use the operator token
SERVER_TOKEN_SCOPE_KEY = "ghmcp.server_token"
# RFC 6750 b64token: every GitHub token format (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_, JWTs)
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
# request headers a Caller never carries (credentials stay in `credential` only)
_PRIVATE_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
_IDENTITY_LABEL = b"ghmcp/caller-identity/v1"

Source = Literal["bearer", "server_token", "none"]


def usable_token(token: str) -> bool:
    """Whether `token` can be a forge's token at all (ASCII token characters, sane length).

    Anything else (non-ASCII, whitespace, CR/LF, quotes) would either crash header encoding or
    be sent as a different header, so it is refused before any request is built."""
    return 0 < len(token) <= MAX_TOKEN_CHARS and _B64TOKEN.fullmatch(token) is not None


def identity_key(server_secret: bytes) -> bytes:
    """The key identities are MACed under: derived, so it never equals the cursor key."""
    return hmac.new(server_secret, _IDENTITY_LABEL, hashlib.sha256).digest()


def caller_id(key: bytes, credential: str | None) -> str:
    if not credential:
        return ANONYMOUS
    mac = hmac.new(key, credential.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return "c_" + mac.hexdigest()[:32]


@dataclass(frozen=True, slots=True, kw_only=True)
class Caller:
    """The caller of one request. Extend it with request-derived settings (e.g. exposure
    controls read from X-MCP-* headers) by adding fields filled in `resolve_caller`."""

    identity: str
    source: Source
    credential: str | None = field(default=None, repr=False)
    # HTTP request headers, lower-case names, credentials removed; empty without HTTP
    headers: Mapping[str, str] = field(default_factory=dict)
    # what this caller may use: the server's exposure flags, narrowed by X-MCP-* headers over
    # HTTP; None = the server's surface (a Caller built without an exposure policy)
    surface: Surface | None = None
    # what the forge told of the token (guards.token_access), the tools that leaves out of the
    # surface, and whether a missing scope is challenged instead (an OAuth token over HTTP)
    access: TokenAccess | None = None
    hidden: frozenset[str] = frozenset()
    step_up: bool = False


def _authenticated_token(scope: Mapping[str, Any]) -> str | None:
    # AuthenticatedUser is the mcp SDK's; imported here so stdio never loads starlette auth
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    user = scope.get("user")
    return user.access_token.token if isinstance(user, AuthenticatedUser) else None


def _headers(raw: Any) -> dict[str, str]:
    """Request headers, lower-case names, credentials left out. An X-MCP-* header sent more than
    once is refused (ExposureError): each only narrows, and no reading of two values (first,
    last, joined) would be the narrowest a gateway and a client may have meant."""
    headers: dict[str, str] = {}
    for name, value in raw.items():  # a request's Headers yield every occurrence
        name = name.lower()
        if name in _PRIVATE_HEADERS:
            continue
        if name.startswith("x-mcp-") and name in headers:
            from ghmcp_runtime.guards.exposure import ExposureError

            shown = "-".join(part.capitalize() for part in name.split("-")).replace("Mcp", "MCP")
            raise ExposureError(f"{shown} was sent more than once: send each X-MCP-* header once")
        headers.setdefault(name, value)
    return headers


def resolve_caller(request: Any, *, server_token: str | None, key: bytes,
                   exposure: ExposurePolicy | None = None) -> Caller:
    """The Caller for `request` (the SDK's per-request `ctx.request`; None without HTTP).
    With `exposure`, its surface too (ExposureError for an X-MCP-* header it cannot apply)."""
    scope = getattr(request, "scope", None)
    if request is None or not isinstance(scope, Mapping):
        source: Source = "server_token" if server_token else "none"
        return Caller(identity=caller_id(key, server_token), source=source,
                      credential=server_token, surface=exposure.base if exposure else None)
    headers = _headers(getattr(request, "headers", {}))
    surface = exposure.for_request(headers) if exposure else None
    token = _authenticated_token(scope)
    if token is not None:
        return Caller(identity=caller_id(key, token), source="bearer", credential=token,
                      headers=headers, surface=surface)
    if scope.get(SERVER_TOKEN_SCOPE_KEY) is True and server_token:
        return Caller(identity=caller_id(key, server_token), source="server_token",
                      credential=server_token, headers=headers, surface=surface)
    return Caller(identity=ANONYMOUS, source="none", headers=headers, surface=surface)
