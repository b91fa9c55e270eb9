"""What a server shows each caller, built at start: the caller of a request, its surface (the
tools, templates and repositories it may reach) and that surface's `tools/list`; and what refuses
a bad declaration before the server answers (argument validators: formats the runtime cannot
check; the shape projector: unknown transforms). The calls themselves (serving.tool_calls) load
with the first one."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.types import (
    INVALID_PARAMS,
    CancelledNotificationParams,
    ListToolsResult,
    PaginatedRequestParams,
)

from ghmcp_runtime.cleaning.outbound import rpc_error
from ghmcp_runtime.core.logs import log_event
from ghmcp_runtime.core.model import ServerSpec
from ghmcp_runtime.core.projection import ShapeProjector
from ghmcp_runtime.core.token_scopes import SCOPES_META
from ghmcp_runtime.guards.caller import (
    Caller,
    caller_id,
    identity_key,
    resolve_caller,
    usable_token,
)
from ghmcp_runtime.guards.exposure import ExposureError, ExposurePolicy, Surface
from ghmcp_runtime.guards.token_access import TokenAccess, hidden
from ghmcp_runtime.guards.validation import ArgumentValidator, plain
from ghmcp_runtime.serving.access_book import ACCESS_SCOPE_KEY, AccessBook, Reader
from ghmcp_runtime.serving.cancellation import InFlight
from ghmcp_runtime.serving.discovery import LIST_TTL_MS, cache_scope
from ghmcp_runtime.serving.dynamic_toolsets import DynamicToolsets
from ghmcp_runtime.serving.settings import Settings
from ghmcp_runtime.serving.surface import SurfaceView, SurfaceViews

if TYPE_CHECKING:
    from mcp.server.subscriptions import SubscriptionBus

_CALLER_SCOPE_KEY = "ghmcp.caller"  # the request's resolved Caller, in its ASGI scope


class Served:
    def __init__(self, spec: ServerSpec, settings: Settings) -> None:
        # --dynamic-toolsets: three more tools, and the surface of the process's one client
        self.dynamic = DynamicToolsets(spec) if settings.exposure.dynamic else None
        if self.dynamic is not None:
            if not spec.toolsets:
                raise ExposureError(f"--dynamic-toolsets: {spec.name} declares no toolsets")
            spec = replace(spec, tools=(*spec.tools, *self.dynamic.tools()))
        self.spec = spec
        self.settings = settings
        self.bus: SubscriptionBus | None = None  # where tool-list changes go (build_server sets it)
        self.identity_key = identity_key(settings.server_secret or secrets.token_bytes(32))
        self.tools = {t.name: t for t in spec.tools}
        self.schemas = {t.name: plain(t.input_schema) for t in spec.tools}
        self.validators = {t.name: ArgumentValidator(t.input_schema, t.input_checks) for t in spec.tools}
        # each tool runs with its own part's shapes and error rules (a forge server's parts)
        self.part = {t.name: spec.part_of(t.name) for t in spec.tools}
        projectors = {p.name: ShapeProjector(p.shapes) for p in (*spec.parts, spec)}
        self.projectors = {name: projectors[part.name] for name, part in self.part.items()}
        meta = tuple(self.dynamic.names.values()) if self.dynamic else ()
        self.exposure = ExposurePolicy(spec.tools, spec.toolsets, settings.exposure,
                                       spec.default_toolsets, meta)
        if self.dynamic is not None:
            self.dynamic.bind(self.exposure)
        self.views = SurfaceViews(spec, meta)
        self.in_flight = InFlight()  # running calls, for notifications/cancelled (cancellation.py)
        self._local_caller: Caller | None = None  # stdio, in-memory: always the same caller
        self._hidden = lru_cache(maxsize=256)(self._hidden_tools)
        # what each token can use (serving.access_book); None: --token-scopes off, or no reader
        self.book: AccessBook | None = None
        self._local_access: TokenAccess | None = None

    def read_tokens_with(self, read: Reader) -> None:
        """Read tokens' scopes with `read` (build_server binds the upstream client's), unless
        turned off or no tool publishes what it needs (nothing could be hidden)."""
        if self.settings.token_scopes and any(SCOPES_META in t.meta for t in self.spec.tools):
            self.book = AccessBook(read)

    async def learn_local(self) -> None:
        """The operator's token's access, read once at start (stdio, in-memory): the one caller
        without an HTTP request sees its surface from the first request on."""
        token = self.settings.token
        if self.book is None or not token or not usable_token(token):
            return
        self._local_access = await self.book.learn(caller_id(self.identity_key, token), token)
        self._local_caller = None

    def _with_access(self, caller: Caller, access: TokenAccess | None, over_http: bool) -> Caller:
        if access is None:
            return caller
        step_up = access.can_step_up(over_http)
        return replace(caller, access=access, step_up=step_up, hidden=self._hidden(access, step_up))

    def _hidden_tools(self, access: TokenAccess, step_up: bool) -> frozenset[str]:
        return hidden(self.spec.tools, access, self.spec.forge.scopes, step_up=step_up)

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
        if request is not None:
            self._check_lockdown_header(caller)
        known = self._local_access if request is None else (
            scope.get(ACCESS_SCOPE_KEY) if isinstance(scope, dict) else None)
        caller = self._with_access(caller, known if isinstance(known, TokenAccess) else None,
                                   over_http=request is not None)
        if request is None:
            self._local_caller = caller
        elif isinstance(scope, dict):
            scope[_CALLER_SCOPE_KEY] = caller
        return caller

    def _check_lockdown_header(self, caller: Caller) -> None:
        """`X-MCP-Lockdown: true` on a server that would withhold nothing is refused like any
        X-MCP-* header it cannot apply: served anyway, the caller would believe text withheld."""
        from ghmcp_runtime.guards.lockdown import requested, withholds_nothing

        if requested(caller.headers) and (why := withholds_nothing(self.spec)) is not None:
            raise rpc_error(INVALID_PARAMS, f"X-MCP-Lockdown: {why}; drop the header, or call a server "
                                            "that declares lockdown rules")

    async def cancel_notified(self, ctx: ServerRequestContext[Any], params: CancelledNotificationParams) -> None:
        """`notifications/cancelled`: stop the caller's own running call of that id, if any
        (over stdio the SDK has cancelled it already; over stateless HTTP only this finds it)."""
        try:
            caller = self.caller_of(ctx.request)
        except MCPError:
            return  # an X-MCP-* header it cannot apply: no caller, nothing to stop
        if self.in_flight.cancel(caller.identity, params.request_id):
            log_event("call_cancelled", caller=caller.identity, reason="notifications/cancelled")

    def surface_of(self, caller: Caller) -> Surface:
        """The caller's surface (flags, headers, enabled toolsets) without what its token
        cannot use."""
        if caller.surface is not None and (caller.surface.per_request or self.dynamic is None):
            surface = caller.surface
        elif self.dynamic is not None and self.dynamic.surface is not None:
            surface = self.dynamic.surface  # the process's one client: what it enabled so far
        else:
            surface = self.exposure.base
        return self.exposure.with_access(surface, caller.hidden)

    def list_ttl_ms(self, caller: Caller) -> int:
        """How long a client may keep a list: not at all over HTTP with --dynamic-toolsets, where
        the same client's next request may name other toolsets in its headers (a client's cache
        is not keyed by them); a list_changed notification evicts it elsewhere."""
        per_request = caller.surface is not None and caller.surface.per_request
        return 0 if self.dynamic is not None and per_request else LIST_TTL_MS

    def view_of(self, caller: Caller) -> SurfaceView:
        return self.views.view(self.surface_of(caller))

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        caller = self.caller_of(ctx.request)
        return ListToolsResult(tools=list(self.view_of(caller).tools),
                               ttl_ms=self.list_ttl_ms(caller), cache_scope=cache_scope(caller))
