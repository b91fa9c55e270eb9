"""The streamable HTTP ASGI app: stateless JSON responses behind Host/Origin checks and auth.

Request path for POST /mcp:
    AuthenticationMiddleware (SDK BearerAuthBackend + CallerTokenVerifier: sets scope["user"])
    → HostGuard (exact Host/Origin: 421/403)
    → CallerGate (GET → 405; no usable bearer → 401 + WWW-Authenticate, unless opted in)
    → ClientGone (marks the request when its client goes away: a running batch stops)
    → the SDK's streamable HTTP session manager (body limit, JSON-RPC) → the low-level Server.
The RFC 9728 metadata routes sit beside /mcp, public and unauthenticated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server import Server
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route

from ghmcp_runtime.guards.host_guard import HostGuard
from ghmcp_runtime.serving.cancellation import ClientGone
from ghmcp_runtime.serving.http_auth import (
    CallerGate,
    CallerTokenVerifier,
    HttpAuth,
    metadata_routes,
)

MCP_PATH = "/mcp"
# The largest legitimate call is an issue body of 65,536 characters, at most ~800 KB of JSON even
# when every character is \u-escaped; anything bigger is refused (413) before it is parsed.
MAX_BODY_BYTES = 1024 * 1024


def streamable_http_app(
    server: Server[Any],
    *,
    auth: HttpAuth,
    identity_key: bytes,
    hosts: Sequence[str],
    origins: Sequence[str],
    max_body_bytes: int = MAX_BODY_BYTES,
) -> Starlette:
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        # Host/Origin are checked exactly by HostGuard; the SDK still checks Content-Type
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max_body_bytes,
    )
    endpoint = HostGuard(CallerGate(ClientGone(StreamableHTTPASGIApp(manager)), auth), hosts, origins)
    return Starlette(
        routes=[Route(MCP_PATH, endpoint=endpoint), *metadata_routes(auth)],
        middleware=[
            Middleware(AuthenticationMiddleware,
                       backend=BearerAuthBackend(CallerTokenVerifier(identity_key))),
            Middleware(AuthContextMiddleware),
        ],
        lifespan=lambda app: manager.run(),
    )
