"""The MCP server around a ServerSpec: tools/list, tools/call, settings and the console entry."""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, replace
from typing import Any, TypeVar

import anyio
from mcp import MCPError
from mcp.server import CacheHint, Server, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import NoBackChannelError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette

from ghmcp_runtime.calls.context import CursorCodec, Idempotency, ToolContext, Upstream
from ghmcp_runtime.calls.cursors import HmacCursorCodec
from ghmcp_runtime.calls.http_cache import ENV as HTTP_CACHE_ENV
from ghmcp_runtime.calls.http_cache import HttpCache
from ghmcp_runtime.calls.http_cache import parse_setting as parse_http_cache
from ghmcp_runtime.calls.upstream import ForgeUpstream, check_api_url
from ghmcp_runtime.cleaning.outbound import (
    input_required_result,
    rpc_error,
    tool_error,
    tool_result,
    visible,
)
from ghmcp_runtime.core.concurrent import DEFAULT_INFLIGHT_PER_CALLER, MAX_CONCURRENT
from ghmcp_runtime.core.errors import INTERNAL_MESSAGE, ToolError
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.forges import GITHUB
from ghmcp_runtime.core.logs import UVICORN_LOG_CONFIG, call_fields, log_event, route_library_logs
from ghmcp_runtime.core.model import ServerSpec, ToolSpec
from ghmcp_runtime.core.projection import ShapeProjector
from ghmcp_runtime.engine.batch import Pacer
from ghmcp_runtime.engine.confirm import FORM, QUESTION, InputRequired, accepted
from ghmcp_runtime.guards.caller import Caller, identity_key, resolve_caller, usable_token
from ghmcp_runtime.guards.exposure import (
    ExposureError,
    ExposureFlags,
    ExposurePolicy,
    Surface,
    add_exposure_arguments,
    exposure_flags,
)
from ghmcp_runtime.guards.host_guard import (
    LOCAL_ORIGINS,
    host_patterns,
    is_loopback,
    server_token_refusal,
)
from ghmcp_runtime.guards.lockdown import Lockdown, TrustCache, requested, unavailable
from ghmcp_runtime.guards.validation import ArgumentValidator, plain
from ghmcp_runtime.serving.discovery import (
    LIST_TTL_MS,
    SurfaceDiscovery,
    cache_scope,
    fingerprint_line,
)
from ghmcp_runtime.serving.environment import help_epilog
from ghmcp_runtime.serving.resources import ResourceRuntime, internal_rpc_error
from ghmcp_runtime.serving.surface import SurfaceView, SurfaceViews
from ghmcp_runtime.stores.idempotency import DEFAULT_KEYS_PER_CALLER, IdempotencyRunner
from ghmcp_runtime.stores.redis_store import REDIS_SCHEMES, eviction_warnings, open_store

TOOLS_LIST_CACHE = CacheHint(ttl_ms=LIST_TTL_MS, scope="public")
LOW_RATE_LIMIT_FRACTION = 0.1
_TOOL_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_TRUE = ("1", "true", "yes", "on")
_CALLER_SCOPE_KEY = "ghmcp.caller"  # the request's resolved Caller, in its ASGI scope
P = TypeVar("P")
R = TypeVar("R")


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


def _bounded(cache: HttpCache | None, settings: Settings) -> HttpCache | None:
    if cache is None:
        return None
    return replace(cache, max_bytes=settings.http_cache_max_bytes,
                   max_bytes_per_caller=settings.http_cache_max_bytes_per_caller)


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
        refused = unavailable(forge) if self.lockdown else None
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


def error_text(err: ToolError) -> str:
    """One or two plain sentences: the message, then the next step in words."""
    text = err.message
    if err.repair:
        step = str(err.repair.get("next_step", "")).replace("_", " ")
        text += f" Next step ({step}): call {err.repair.get('tool')} with repair.arguments."
    elif err.temporary and err.retry_after_ms is not None:
        text += f" Retry in about {max(1, round(err.retry_after_ms / 1000))} s."
    return text


def unknown_tool(name: str) -> MCPError:
    """JSON-RPC -32602, as the MCP spec lists for an unknown tool; the name only when tame."""
    shown = f": {name}" if _TOOL_NAME.fullmatch(name) else ""
    return rpc_error(INVALID_PARAMS, f"Unknown tool{shown}; call tools/list for the available tools.")


def _request_id() -> str:
    return "req_" + secrets.token_hex(6)


def guarded(
    handler: Callable[[ServerRequestContext[Any], P], Awaitable[R]],
) -> Callable[[ServerRequestContext[Any], P], Awaitable[R]]:
    """A JSON-RPC handler whose unexpected exceptions become -32603 with a generic message (the
    SDK would answer code 0 with the exception text); MCPError passes through."""

    async def run(ctx: ServerRequestContext[Any], params: P) -> R:
        try:
            return await handler(ctx, params)
        except MCPError:
            raise
        except Exception:
            request_id = _request_id()
            log_event("handler_crashed", level=logging.ERROR, exc_info=True,
                      handler=handler.__name__, request_id=request_id)
            raise internal_rpc_error(request_id) from None

    return run


class _ToolRuntime:
    def __init__(
        self,
        spec: ServerSpec,
        settings: Settings,
        upstream: Upstream,
        cursors: CursorCodec,
        idempotency: Idempotency,
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.upstream = upstream
        self.cursors = cursors
        self.idempotency = idempotency
        self.identity_key = identity_key(settings.server_secret or secrets.token_bytes(32))
        self.projector = ShapeProjector(spec.shapes)
        self.trust = TrustCache()
        self.tools = {t.name: t for t in spec.tools}
        self.validators = {t.name: ArgumentValidator(t.input_schema, t.input_checks) for t in spec.tools}
        self.schemas = {t.name: plain(t.input_schema) for t in spec.tools}
        self.exposure = ExposurePolicy(spec.tools, spec.toolsets, settings.exposure)
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

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        request_id = _request_id()
        caller = self.caller_of(ctx.request)
        with call_fields(caller=caller.identity, request_id=request_id):
            tool = self.tools.get(params.name)
            if tool is None or tool.name not in self.surface_of(caller).tools:
                log_event("tool_call", tool=params.name[:64], ms=0,
                          outcome="unknown_tool" if tool is None else "hidden_tool")
                raise unknown_tool(params.name)
            host = _CallHost(self, caller, ctx, params)
            return await self._call_logged(tool, caller, params.arguments, request_id, host)

    async def _call_logged(
        self, tool: ToolSpec, caller: Caller, arguments: Mapping[str, Any] | None, request_id: str,
        host: _CallHost | None = None,
    ) -> CallToolResult | InputRequiredResult:
        start = time.perf_counter()
        outcome = "ok"
        try:
            payload = await self._call(tool, caller, arguments, request_id, host)
            return tool_result(payload)
        except InputRequired as asked:
            outcome = "input_required"
            return input_required_result(QUESTION, asked.message, FORM, asked.digest)
        except ToolError as err:
            outcome = err.code
            # a handled outcome needs no traceback; kept, it would hold every frame (and the
            # arguments in them) in a reference cycle until the next full garbage collection
            err.__traceback__ = None
            return self._error(err, request_id, caller)
        except Exception:
            outcome = "internal_error"
            log_event("tool_crashed", level=logging.ERROR, exc_info=True, tool=tool.name)
            return self._error(ToolError("internal_error", INTERNAL_MESSAGE), request_id, caller)
        finally:
            log_event("tool_call", tool=tool.name, outcome=outcome,
                      ms=round((time.perf_counter() - start) * 1000))

    async def _call(
        self, tool: ToolSpec, caller: Caller, arguments: Mapping[str, Any] | None, request_id: str,
        host: _CallHost | None,
    ) -> dict[str, Any]:
        result, tctx = await self.run_tool(tool, caller, arguments, request_id, host=host)
        payload = {**result, "request_id": request_id}
        remaining, limit = tctx.rate_limit.get("remaining"), tctx.rate_limit.get("limit")
        if remaining is not None and limit and remaining < limit * LOW_RATE_LIMIT_FRACTION:
            payload["rate_limit_remaining"] = remaining
        return payload

    async def run_tool(
        self, tool: ToolSpec, caller: Caller, arguments: Mapping[str, Any] | None, request_id: str,
        *, host: _CallHost | None, dry_run: bool = False, paced: Pacer | None = None,
    ) -> tuple[Mapping[str, Any], ToolContext]:
        """Validate the arguments, run the handler, release lockdown: a tool's result and its
        context (a direct call, or one a batch makes: `paced` items one request at a time)."""
        args = arguments if arguments is not None else {}
        validator = self.validators[tool.name]
        invalid = validator.validate(args)
        if invalid is not None:
            raise invalid
        args = validator.normalize(args)
        repos = self.surface_of(caller).repos
        if repos is not None:
            repos.check_arguments(args)
        tctx = self.context_for(tool, caller, args, request_id)
        tctx.host, tctx.dry_run, tctx.pace = host, dry_run, paced
        if paced is not None:
            tctx.slots = anyio.CapacityLimiter(1)
        try:
            result = await tool.handler(tctx, args)
            await tctx.release_held()
        except ToolError as err:
            tctx.writes.annotate(err)  # whatever built the error, it says what was applied
            if err.temporary and err.repair is None and set(args) <= set(tool.echo_safe):
                err.repair = {"next_step": "retry_after_wait", "tool": tool.name, "arguments": dict(args)}
            raise
        if not isinstance(result, Mapping):
            raise TypeError(f"handler of {tool.name} returned {type(result).__name__}, not a mapping")
        return result, tctx

    def context_for(
        self, tool: ToolSpec, caller: Caller, args: Mapping[str, Any], request_id: str
    ) -> ToolContext:
        # a forge without trust checks has no lockdown rules either (the generator refuses them)
        forge = self.spec.forge
        locked = (self.settings.lockdown or requested(caller.headers)) and forge.trust is not None
        return ToolContext(
            tool=tool, request_id=request_id, identity=caller.identity,
            arguments=args, upstream=self.upstream, cursors=self.cursors,
            idempotency=self.idempotency, projector=self.projector, credential=caller.credential,
            forge=self.spec.forge,
            lockdown=Lockdown(self.spec.shapes, self.trust, forge) if locked else None,
            repos=self.surface_of(caller).repos,
            slots=anyio.CapacityLimiter(self.settings.max_concurrent),
            error_rules=self.spec.error_rules,
        )

    def _error(self, err: ToolError, request_id: str, caller: Caller) -> CallToolResult:
        envelope = self.view_of(caller).envelope(err, request_id)
        return tool_error(envelope, error_text(err))


@dataclass(slots=True)
class _CallHost:
    """`context.Host` for one tools/call: other tools run as the same caller, progress goes to
    the request's progressToken, confirmations go to the client (ghmcp_runtime.engine.confirm)."""

    runtime: _ToolRuntime
    caller: Caller
    request: ServerRequestContext[Any]
    params: CallToolRequestParams
    pacer: Pacer | None = None

    @property
    def write_interval_s(self) -> float:
        return self.runtime.settings.write_interval_s

    @property
    def max_wait_s(self) -> float:
        return self.runtime.settings.batch_max_wait_s

    async def run_tool(self, ctx: ToolContext, name: str, args: Mapping[str, Any], *, dry_run: bool,
                       paced: bool) -> dict[str, Any]:
        if paced and self.pacer is None:
            self.pacer = Pacer(self.write_interval_s)  # one pace for every item of the call
        try:
            result, _ = await self.runtime.run_tool(
                self.runtime.tools[name], self.caller, args, ctx.request_id, host=self,
                dry_run=dry_run, paced=self.pacer if paced else None)
        except ToolError as err:
            if err.repair is not None and err.repair.get("tool") not in self.runtime.surface_of(self.caller).tools:
                err.repair = None  # no repair through a tool this caller cannot see
            raise
        return dict(result)

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        await self.request.session.report_progress(done, total, message)  # no-op without a token

    async def confirm(self, message: str, digest: str) -> None:
        caps = self.request.session.client_capabilities
        asks = caps.elicitation if caps is not None else None
        if asks is None or (asks.form is None and asks.url is not None):
            return  # the client cannot show a form: the explicit arguments are the confirmation
        if self.request.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = (self.params.input_responses or {}).get(QUESTION)
            if answer is None or self.params.request_state != digest or not hasattr(answer, "action"):
                raise InputRequired(message, digest)  # answered with input_required (MRTR)
            accepted(answer.action, getattr(answer, "content", None))
            return
        if not self.request.session.can_send_request:
            return  # stateless HTTP: no channel to ask on; the explicit path stands
        try:
            result = await self.request.session.elicit_form(visible(message), FORM,
                                                            related_request_id=self.request.request_id)
        except NoBackChannelError:
            return
        accepted(result.action, result.content)


def build_server(
    spec: ServerSpec,
    settings: Settings,
    *,
    upstream: Upstream | None = None,
    cursors: CursorCodec | None = None,
    idempotency: Idempotency | None = None,
) -> Server[Any]:
    """The low-level MCP server for `spec`. Components default from `settings`; tests inject.

    Without an HTTP request (stdio, in-memory) calls use `settings.token`; over HTTP each
    caller's own bearer token (see ghmcp_runtime.guards.caller)."""
    settings.check(spec.forge)
    if upstream is None:
        upstream = ForgeUpstream(
            forge=spec.forge,
            base_url=settings.api_url_for(spec.forge),
            api_version=spec.api_version,
            timeout=(settings.timeout_s, settings.connect_timeout_s),
            cache=_bounded(parse_http_cache(settings.http_cache), settings),
            inflight_per_caller=settings.inflight_per_caller,
            user_agent=f"{spec.name}/{spec.version}",
        )
    runtime = _ToolRuntime(
        spec,
        settings,
        upstream,
        cursors or HmacCursorCodec(settings.server_secret),
        idempotency or IdempotencyRunner(open_store(settings.idempotency_store, settings.keys_per_caller)),
    )
    resources = (ResourceRuntime(spec, runtime.caller_of, runtime.context_for, runtime.view_of)
                 if spec.resources or spec.templates else None)
    base = runtime.views.view(runtime.exposure.base)
    server: Server[Any] = Server(
        spec.name,
        version=spec.version,
        title=spec.title,
        description=fingerprint_line(base),
        instructions=base.instructions,
        cache_hints={"tools/list": TOOLS_LIST_CACHE, "server/discover": TOOLS_LIST_CACHE},
        get_tool_input_schema=runtime.input_schema,
        on_list_tools=guarded(runtime.list_tools),
        on_call_tool=guarded(runtime.call_tool),
        on_list_resources=guarded(resources.list_resources) if resources else None,
        on_list_resource_templates=guarded(resources.list_templates) if resources else None,
        on_read_resource=guarded(resources.read) if resources else None,
        on_completion=guarded(resources.complete) if resources and spec.templates else None,
    )
    SurfaceDiscovery(server, runtime.caller_of, runtime.view_of, runtime.exposure.base).install(guarded)
    # MRTR: the requestState of a confirmation is sealed (AES-GCM) and bound to the tool, its
    # arguments and the caller; replicas sharing GHMCP_SERVER_SECRET accept each other's
    secret = settings.server_secret
    security = (RequestStateSecurity(keys=[hashlib.sha256(b"ghmcp-request-state:" + secret).hexdigest()])
                if secret else RequestStateSecurity.ephemeral())
    server.middleware.append(RequestStateBoundary(security, default_audience=spec.name))
    return server


def _endpoint_url(host: str, port: int) -> str:
    name = f"[{host}]" if ":" in host else host
    return f"http://{name}:{port}/mcp"


def http_app(
    spec: ServerSpec,
    settings: Settings | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    allow_server_token: bool = False,
    server: Server[Any] | None = None,
) -> Starlette:
    """Streamable HTTP (stateless, JSON responses) as an ASGI app, e.g. for `uvicorn`.

    Every request needs its caller's `Authorization: Bearer` token (401 with the RFC 9728
    challenge otherwise). `allow_server_token` lets requests without the header use the
    operator's token (GITHUB_TOKEN, FORGEJO_TOKEN…); it is refused unless `host`, every allowed
    Host and Origin and the public URL are loopback (host_guard.server_token_refusal)."""
    from ghmcp_runtime.serving.http_auth import HttpAuth
    from ghmcp_runtime.serving.http_transport import streamable_http_app

    forge = spec.forge
    settings = (settings or Settings.from_env(forge=forge)).with_secret()
    refusal = server_token_refusal(host, allowed_hosts, allowed_origins, settings.public_url)
    if allow_server_token and refusal is not None:
        raise ValueError(refusal)
    if allow_server_token and not settings.token:
        raise ValueError(f"--allow-server-token needs {forge.token_env}")
    server = server or build_server(spec, settings)
    assert settings.server_secret is not None
    auth = HttpAuth(
        resource_url=settings.public_url or _endpoint_url(host, port),
        authorization_servers=(settings.authorization_server
                               or forge.oauth_server(settings.api_url_for(forge)),),
        scopes=forge.oauth_scopes,
        resource_name=spec.title,
        allow_server_token=allow_server_token,
    )
    return streamable_http_app(
        server, auth=auth, identity_key=identity_key(settings.server_secret),
        hosts=host_patterns(host, allowed_hosts), origins=[*LOCAL_ORIGINS, *allowed_origins],
    )


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _parser(spec: ServerSpec) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=spec.name, description=spec.title, epilog=help_epilog(spec.forge),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default): one client speaks on stdin/stdout, acting with "
                        f"{spec.forge.token_env}; http: streamable HTTP at http://HOST:PORT/mcp, each "
                        "caller sends its own token")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT|:*]",
                   help="extra Host header value to accept over HTTP (repeatable)")
    p.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                   help="extra Origin header value to accept over HTTP (repeatable)")
    p.add_argument("--idempotency-store", default=None,
                   help="'memory' (default, one process) or redis://HOST:PORT/DB shared by "
                        "replicas (env GHMCP_IDEMPOTENCY_STORE; needs GHMCP_SERVER_SECRET)")
    p.add_argument("--allow-server-token", action="store_true",
                   help="HTTP: let requests without an Authorization header act with "
                        f"{spec.forge.token_env} (loopback only: refused with a non-loopback "
                        "--allowed-host, --allowed-origin or GHMCP_PUBLIC_URL, which mean a proxy "
                        "in front; anyone who can reach the port can act as you)")
    p.add_argument("--lockdown", action="store_true",
                   help="withhold issue and comment text by authors without push access to public "
                        "repositories (env GHMCP_LOCKDOWN=1; HTTP callers may also send "
                        "X-MCP-Lockdown: true)")
    add_exposure_arguments(p, spec.toolsets, spec.forge.display_name)
    return p


def _startup_warnings(args: argparse.Namespace, settings: Settings, forge: ForgeProfile) -> None:
    env = forge.token_env
    if settings.token and not usable_token(settings.token):
        log_event("config_warning", level=logging.WARNING,
                  reason=f"{env} is not a well-formed token; calls will be refused")
    if args.transport != "http":
        return
    if args.allow_server_token:
        log_event("config_warning", level=logging.WARNING, host=args.host,
                  reason=f"--allow-server-token: requests without Authorization act with "
                         f"{env}; any local process can use it")
    elif settings.token:
        log_event("config_warning", level=logging.WARNING,
                  reason=f"{env} is ignored over HTTP: each caller sends its own token")
    if not is_loopback(args.host) and not args.allowed_host:
        log_event("http_bind_warning", level=logging.WARNING, host=args.host,
                  hint="only loopback Host headers are accepted; add --allowed-host")
    if not is_loopback(args.host) and not settings.public_url:
        log_event("config_warning", level=logging.WARNING,
                  reason="GHMCP_PUBLIC_URL is not set: the 401 challenge points clients at "
                         f"{_endpoint_url(args.host, args.port)}")


def run(spec: ServerSpec, argv: Sequence[str] | None = None) -> None:
    """Console-script entry: serve `spec` over stdio (default) or streamable HTTP."""
    route_library_logs()
    parser = _parser(spec)
    args = parser.parse_args(argv)
    forge = spec.forge
    try:
        settings = Settings.from_env(forge=forge)
    except ValueError as exc:
        parser.error(str(exc))
    settings = replace(settings, idempotency_store=args.idempotency_store or settings.idempotency_store,
                       lockdown=args.lockdown or settings.lockdown,
                       exposure=exposure_flags(args, settings.exposure))
    try:
        store = open_store(settings.idempotency_store, settings.keys_per_caller)
    except ValueError as exc:
        parser.error(f"--idempotency-store: {exc}")
    try:
        settings.check(forge)
    except ValueError as exc:
        parser.error(str(exc))
    if args.allow_server_token and args.transport == "http":
        refusal = server_token_refusal(args.host, args.allowed_host, args.allowed_origin,
                                       settings.public_url)
        if refusal is not None:
            parser.error(refusal)
        if not settings.token:
            parser.error(f"--allow-server-token needs {forge.token_env}")
    _startup_warnings(args, settings, forge)
    if settings.idempotency_store.startswith(REDIS_SCHEMES):
        for reason in eviction_warnings(settings.idempotency_store, settings.http_cache):
            log_event("config_warning", level=logging.WARNING, reason=reason)
    settings = settings.with_secret()
    try:
        server = build_server(spec, settings, idempotency=IdempotencyRunner(store))
    except ExposureError as exc:
        parser.error(str(exc))
    started = {"server": spec.name, "version": spec.version, "transport": args.transport}
    if args.transport == "stdio":
        log_event("server_started", **started)
        anyio.run(serve_stdio, server)
        return
    import uvicorn  # only the HTTP transport needs it

    log_event("server_started", **started, url=_endpoint_url(args.host, args.port))

    app = http_app(spec, settings, host=args.host, port=args.port,
                   allowed_hosts=args.allowed_host, allowed_origins=args.allowed_origin,
                   allow_server_token=args.allow_server_token, server=server)
    uvicorn.run(app, host=args.host, port=args.port, log_config=UVICORN_LOG_CONFIG)
