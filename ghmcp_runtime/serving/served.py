"""What a server shows each caller, built at start: the caller of a request, its surface (the
tools, templates and repositories it may reach) and that surface's `tools/list`; and what refuses
a bad declaration before the server answers (argument validators: formats the runtime cannot
check; the shape projector: unknown transforms). The calls themselves (serving.tool_calls) load
with the first one."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from mcp.server import ServerRequestContext
from mcp.types import INVALID_PARAMS, ListToolsResult, PaginatedRequestParams

from ghmcp_runtime.cleaning.outbound import rpc_error
from ghmcp_runtime.core.model import ServerSpec
from ghmcp_runtime.core.projection import ShapeProjector
from ghmcp_runtime.guards.caller import Caller, identity_key, resolve_caller
from ghmcp_runtime.guards.exposure import ExposureError, ExposurePolicy, Surface
from ghmcp_runtime.guards.validation import ArgumentValidator, plain
from ghmcp_runtime.serving.discovery import LIST_TTL_MS, cache_scope
from ghmcp_runtime.serving.settings import Settings
from ghmcp_runtime.serving.surface import SurfaceView, SurfaceViews

_CALLER_SCOPE_KEY = "ghmcp.caller"  # the request's resolved Caller, in its ASGI scope


class Served:
    def __init__(self, spec: ServerSpec, settings: Settings) -> None:
        self.spec = spec
        self.settings = settings
        self.identity_key = identity_key(settings.server_secret or secrets.token_bytes(32))
        self.tools = {t.name: t for t in spec.tools}
        self.schemas = {t.name: plain(t.input_schema) for t in spec.tools}
        self.validators = {t.name: ArgumentValidator(t.input_schema, t.input_checks) for t in spec.tools}
        # each tool runs with its own part's shapes and error rules (a forge server's parts)
        self.part = {t.name: spec.part_of(t.name) for t in spec.tools}
        projectors = {p.name: ShapeProjector(p.shapes) for p in (*spec.parts, spec)}
        self.projectors = {name: projectors[part.name] for name, part in self.part.items()}
        self.exposure = ExposurePolicy(spec.tools, spec.toolsets, settings.exposure,
                                       spec.default_toolsets)
        self.views = SurfaceViews(spec)
        self._local_caller: Caller | None = None  # stdio, in-memory: always the same caller

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        return self.schemas.get(name)

    def caller_of(self, request: Any) -> Caller:
        """The caller of this request (see ghmcp_runtime.guards.caller for the rules); an X-MCP-*
        header the server cannot apply is JSON-RPC -32602, whatever the method. Resolved once
        per HTTP request (kept in its ASGI scope) and once for all requests without one."""
        scope = getattr(request, "scope", None) if request is not None else None
        if request is None and self._local_caller is not None:
            return self._local_caller
        if isinstance(scope, dict) and isinstance(known := scope.get(_CALLER_SCOPE_KEY), Caller):
            return known
        try:
            caller = resolve_caller(request, server_token=self.settings.token,
                                    key=self.identity_key, exposure=self.exposure)
        except ExposureError as err:
            raise rpc_error(INVALID_PARAMS, str(err)) from None
        if request is None:
            self._local_caller = caller
        elif isinstance(scope, dict):
            scope[_CALLER_SCOPE_KEY] = caller
        return caller

    def surface_of(self, caller: Caller) -> Surface:
        return caller.surface if caller.surface is not None else self.exposure.base

    def view_of(self, caller: Caller) -> SurfaceView:
        return self.views.view(self.surface_of(caller))

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        caller = self.caller_of(ctx.request)
        return ListToolsResult(tools=list(self.view_of(caller).tools), ttl_ms=LIST_TTL_MS,
                               cache_scope=cache_scope(caller))
