"""MCP authorization for the HTTP transport, built from the mcp SDK's auth pieces.

* `CallerTokenVerifier` (an SDK `TokenVerifier`) accepts any bearer token that can be a forge
  token. It does not call the forge: the forge itself judges the token on the first upstream
  call (`invalid_credential`), exactly as for stdio. Identity comes from `ghmcp_runtime.guards.caller`.
* `CallerGate` wraps the SDK's `RequireAuthMiddleware`, so a request without a usable bearer
  token gets HTTP 401 with `WWW-Authenticate: Bearer …, resource_metadata="…"`. Only when the
  operator opted in (`allow_server_token`, loopback only) does a request with no Authorization
  header at all, and no header a proxy adds, pass through, marked for the operator's token. It also answers GET with 405: the
  stateless server never pushes, so an idle SSE stream would only hold a connection open.
* `metadata_routes` serve RFC 9728 protected resource metadata through the SDK's routes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from pydantic import AnyHttpUrl
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ghmcp_runtime.core.logs import log_event
from ghmcp_runtime.guards.caller import SERVER_TOKEN_SCOPE_KEY, caller_id, usable_token

WELL_KNOWN = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpAuth:
    resource_url: str  # the public URL of the MCP endpoint, e.g. https://mcp.example.com/mcp
    authorization_servers: Sequence[str]  # the forge profile's, derived from the API URL
    scopes: Sequence[str]  # the forge profile's `oauth_scopes`
    resource_name: str | None = None
    allow_server_token: bool = False

    @property
    def metadata_url(self) -> AnyHttpUrl:
        return build_resource_metadata_url(AnyHttpUrl(self.resource_url))


class CallerTokenVerifier:
    """SDK TokenVerifier: a syntactically possible token is accepted as the caller's."""

    def __init__(self, identity_key: bytes) -> None:
        self._key = identity_key

    async def verify_token(self, token: str) -> AccessToken | None:
        if not usable_token(token):
            return None
        return AccessToken(token=token, client_id=caller_id(self._key, token), scopes=[])


# headers a proxy adds (or that only a request meant for a proxy carries): a request that came
# through one is not this machine's, whatever its socket says, so it never acts with the
# operator's token
PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip", "via",
                 "proxy-authorization")


def forwarded(headers: Headers) -> bool:
    return any(name in headers for name in PROXY_HEADERS)


class CallerGate:
    """The /mcp endpoint's gate: refuse GET, require a bearer token unless the operator opted in."""

    def __init__(self, app: ASGIApp, auth: HttpAuth) -> None:
        self.app = app
        self.allow_server_token = auth.allow_server_token
        self.require = RequireAuthMiddleware(app, [], auth.metadata_url)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "GET":
            await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        if isinstance(scope.get("user"), AuthenticatedUser):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self.allow_server_token and "authorization" not in headers and not forwarded(headers):
            scope[SERVER_TOKEN_SCOPE_KEY] = True
            await self.app(scope, receive, send)
            return
        log_event("http_unauthorized", level=logging.INFO, status=401,
                  reason="no usable bearer token")
        await self.require(scope, receive, send)


def metadata_routes(auth: HttpAuth) -> list[Route]:
    """RFC 9728 metadata at `/.well-known/oauth-protected-resource/<path of the resource>` (where
    the 401 challenge points) and at the bare well-known path (where clients look first when the
    resource URL has no path, and which older clients probe)."""
    routes = create_protected_resource_routes(
        resource_url=AnyHttpUrl(auth.resource_url),
        authorization_servers=[AnyHttpUrl(s) for s in auth.authorization_servers],
        scopes_supported=list(auth.scopes),
        resource_name=auth.resource_name,
    )
    if routes[0].path != WELL_KNOWN:
        routes.append(Route(WELL_KNOWN, endpoint=routes[0].endpoint, methods=["GET", "OPTIONS"]))
    return routes
