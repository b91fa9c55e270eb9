"""Discovery that describes the caller's surface: `server/discover`, and the `initialize` result
and `serverInfo` of a request whose X-MCP-* headers narrow the server's surface.

The SDK answers both from values fixed when the server is built (the server's own surface);
over HTTP each request may see less, so they are rebuilt from that request's surface.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcp.server import Server, ServerRequestContext
from mcp.types import SERVER_INFO_META_KEY, DiscoverResult, RequestParams
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from ghmcp_runtime.guards.caller import Caller
from ghmcp_runtime.guards.exposure import Surface
from ghmcp_runtime.serving.surface import SurfaceView

LIST_TTL_MS = 300_000
Handler = Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]


def cache_scope(caller: Caller) -> Literal["public", "private"]:
    """Lists built from a surface that may differ between requests (HTTP) are private. (Read
    from the caller's own surface: views are shared by equal surfaces of either kind.)"""
    return "private" if caller.surface is not None and caller.surface.per_request else "public"


def fingerprint_line(view: SurfaceView) -> str:
    """serverInfo.description."""
    return f"Capability fingerprint {view.fingerprint}"


class SurfaceDiscovery:
    def __init__(self, server: Server[Any], caller_of: Callable[[Any], Caller],
                 view_of: Callable[[Caller], SurfaceView], base: Surface,
                 ttl_of: Callable[[Caller], int] = lambda caller: LIST_TTL_MS) -> None:
        self.server = server
        self.caller_of = caller_of
        self.view_of = view_of
        self.base = base
        self.ttl_of = ttl_of

    def install(self, guard: Callable[[Handler], Handler]) -> None:
        self.server.add_request_handler("server/discover", RequestParams, guard(self.discover))
        self.server.middleware.append(self.describe_surface)

    async def discover(self, ctx: ServerRequestContext[Any], params: RequestParams) -> DiscoverResult:
        caller = self.caller_of(ctx.request)
        view = self.view_of(caller)
        capabilities = self.server.get_capabilities(protocol_version=ctx.protocol_version)
        if not view.tools:  # advertised exactly when tools/list has something
            capabilities = capabilities.model_copy(update={"tools": None})
        return DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS), capabilities=capabilities,
            instructions=view.instructions, ttl_ms=self.ttl_of(caller),
            cache_scope=cache_scope(caller),
        )

    async def describe_surface(self, ctx: ServerRequestContext[Any], call_next: Any) -> Any:
        """Server middleware: a request whose headers narrow the surface gets that surface's
        instructions (initialize) and fingerprint (serverInfo) instead of the server's."""
        result = await call_next(ctx)
        if ctx.request is None or not isinstance(result, dict):
            return result
        view = self.view_of(self.caller_of(ctx.request))
        if view.surface == self.base:
            return result
        described = fingerprint_line(view)
        if ctx.method == "initialize":
            result["instructions"] = view.instructions
            result["serverInfo"] = {**result.get("serverInfo", {}), "description": described}
            if not view.tools:
                result["capabilities"] = {k: v for k, v in result.get("capabilities", {}).items()
                                          if k != "tools"}
        meta = result.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get(SERVER_INFO_META_KEY), dict):
            result["_meta"] = {**meta, SERVER_INFO_META_KEY: {**meta[SERVER_INFO_META_KEY],
                                                               "description": described}}
        return result
