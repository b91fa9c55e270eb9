"""The MCP server around a ServerSpec: its settings, the low-level server and the console entry.

Start-up loads only what `initialize` and `tools/list` need (settings, the caller's surface,
discovery); tools/call, resources/read and completion load the engine, the upstream client and the
idempotency store with the first of them (serving.tool_calls; issue 24, cold start). Every check
of the configuration still runs at start."""

from __future__ import annotations

import argparse
import hashlib
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

import anyio
from mcp import MCPError
from mcp.server import CacheHint, NotificationOptions, Server, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    CancelledNotificationParams,
    InputRequiredResult,
)
from starlette.applications import Starlette

from ghmcp_runtime.calls.http_cache import parse_setting as parse_http_cache
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.logs import UVICORN_LOG_CONFIG, log_event, route_library_logs
from ghmcp_runtime.core.model import ServerSpec, ToolSpec
from ghmcp_runtime.guards.caller import Caller, identity_key, usable_token
from ghmcp_runtime.guards.exposure import ExposureError, add_exposure_arguments, exposure_flags
from ghmcp_runtime.guards.host_guard import (
    LOCAL_ORIGINS,
    host_patterns,
    is_loopback,
    server_token_refusal,
)
from ghmcp_runtime.guards.token_access import TokenAccess
from ghmcp_runtime.serving.discovery import LIST_TTL_MS, SurfaceDiscovery, fingerprint_line
from ghmcp_runtime.serving.environment import help_epilog
from ghmcp_runtime.serving.forge_server import missing_inputs
from ghmcp_runtime.serving.resources import ResourceRuntime, internal_rpc_error, new_request_id
from ghmcp_runtime.serving.served import Served
from ghmcp_runtime.serving.settings import Settings
from ghmcp_runtime.stores.setting import store_kind

if TYPE_CHECKING:
    from ghmcp_runtime.calls.context import CursorCodec, Idempotency, ToolContext, Upstream
    from ghmcp_runtime.serving.tool_calls import ToolRuntime

__all__ = ["Settings", "build_server", "guarded", "http_app", "run", "serve_stdio"]

TOOLS_LIST_CACHE = CacheHint(ttl_ms=LIST_TTL_MS, scope="public")
SCOPES_COMMAND = "list-scopes"  # `<server> list-scopes …` (serving.scope_listing)
# what build_server made each server from (http_app reads its callers' tokens through it)
_SERVED: WeakKeyDictionary[Server[Any], Served] = WeakKeyDictionary()
P = TypeVar("P")
R = TypeVar("R")


def open_idempotency(settings: Settings) -> Idempotency | None:
    """The shared (Redis) idempotency store, opened now so a bad URL stops the start; None for
    the in-memory one, which the first tool call builds (ValueError: neither)."""
    if store_kind(settings.idempotency_store) == "memory":
        return None
    from ghmcp_runtime.stores.idempotency import IdempotencyRunner
    from ghmcp_runtime.stores.redis_store import open_store

    return IdempotencyRunner(open_store(settings.idempotency_store, settings.keys_per_caller,
                                         settings.shared_keys))


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
            request_id = new_request_id()
            log_event("handler_crashed", level=logging.ERROR, exc_info=True,
                      handler=handler.__name__, request_id=request_id)
            raise internal_rpc_error(request_id) from None

    return run


class _Calls:
    """The server's tool calls, loaded with the first tools/call, resources/read or completion;
    the upstream client with the first request that needs the forge."""

    def __init__(self, served: Served, upstream: Upstream | None, cursors: CursorCodec | None,
                 idempotency: Idempotency | None) -> None:
        self.served = served
        self._upstream = upstream
        self.parts = (cursors, idempotency)
        self._runtime: ToolRuntime | None = None

    @property
    def upstream(self) -> Upstream:
        if self._upstream is None:
            from ghmcp_runtime.serving.upstream_client import default_upstream

            self._upstream = default_upstream(self.served)
        return self._upstream

    @property
    def runtime(self) -> ToolRuntime:
        if self._runtime is None:
            from ghmcp_runtime.serving.tool_calls import ToolRuntime

            self._runtime = ToolRuntime(self.served, self.upstream, *self.parts)
        return self._runtime

    async def read_access(self, token: str) -> TokenAccess:
        """What the forge tells of `token` (calls.scope_read), through the upstream client."""
        from ghmcp_runtime.calls.scope_read import read_access
        from ghmcp_runtime.calls.upstream import ForgeUpstream

        upstream = self.upstream
        forge = self.served.spec.forge
        if not isinstance(upstream, ForgeUpstream):  # a test's stand-in, which cannot be asked
            return TokenAccess(forge.scopes.kind(token))
        return await read_access(upstream, forge, token)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        return await self.runtime.call_tool(ctx, params)

    def context_for(
        self, tool: ToolSpec, caller: Caller, args: Mapping[str, Any], request_id: str
    ) -> ToolContext:
        return self.runtime.context_for(tool, caller, args, request_id)


def lockdown_refusal(spec: ServerSpec, settings: Settings) -> str | None:
    """Lockdown asked of a server none of whose rows carry text it could withhold: it would
    silently do nothing, so the server refuses to start."""
    if not settings.lockdown or spec.declares_lockdown:
        return None
    from ghmcp_runtime.guards.lockdown import withholds_nothing

    return (f"--lockdown (GHMCP_LOCKDOWN) withholds text by authors without push access, but "
            f"{withholds_nothing(spec)}: drop the flag, or serve a server that declares one")


def build_server(
    spec: ServerSpec,
    settings: Settings,
    *,
    upstream: Upstream | None = None,
    cursors: CursorCodec | None = None,
    idempotency: Idempotency | None = None,
    notify: bool = True,
) -> Server[Any]:
    """The low-level MCP server for `spec`. Components default from `settings`; tests inject.

    Without an HTTP request (stdio, in-memory) calls use `settings.token`; over HTTP each
    caller's own bearer token (see ghmcp_runtime.guards.caller). `notify`: whether tool-list
    changes (--dynamic-toolsets) can reach the client; stateless HTTP cannot carry them."""
    settings.check(spec.forge)
    refused = lockdown_refusal(spec, settings)
    if refused is not None:
        raise ValueError(refused)
    parse_http_cache(settings.http_cache)  # a ValueError names the choices
    if idempotency is None:
        idempotency = open_idempotency(settings)
    served = Served(spec, settings)
    listen = None
    if served.dynamic is not None and notify:
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        served.bus = InMemorySubscriptionBus()
        listen = ListenHandler(served.bus)
    spec = served.spec
    for sentence in missing_inputs(spec, served.exposure.base.tools):
        log_event("config_warning", level=logging.WARNING,
                  reason=f"{sentence}, which this server's flags do not select: add it to --toolsets")
    calls = _Calls(served, upstream, cursors, idempotency)
    served.read_tokens_with(calls.read_access)
    resources = (ResourceRuntime(spec, served.caller_of, calls.context_for, served.view_of)
                 if spec.resources or spec.templates else None)
    base = served.views.view(served.exposure.base)
    server: Server[Any] = Server(
        spec.name,
        version=spec.version,
        title=spec.title,
        description=fingerprint_line(base),
        instructions=base.instructions,
        cache_hints={"tools/list": TOOLS_LIST_CACHE, "server/discover": TOOLS_LIST_CACHE},
        get_tool_input_schema=served.input_schema,
        on_list_tools=guarded(served.list_tools),
        on_call_tool=guarded(calls.call_tool),
        on_list_resources=guarded(resources.list_resources) if resources else None,
        on_list_resource_templates=guarded(resources.list_templates) if resources else None,
        on_read_resource=guarded(resources.read) if resources else None,
        on_completion=guarded(resources.complete) if resources and spec.templates else None,
        on_subscriptions_listen=listen,
        # the operator's token is read at start; over HTTP each caller's with its first request
        lifespan=_reading_local_token(served, at_start=notify),
    )
    SurfaceDiscovery(server, served.caller_of, served.view_of, served.exposure.base,
                     served.list_ttl_ms).install(guarded)
    server.add_notification_handler("notifications/cancelled", CancelledNotificationParams,
                                    served.cancel_notified)
    # MRTR: the requestState of a confirmation is sealed (AES-GCM) and bound to the tool, its
    # arguments and the caller; replicas sharing GHMCP_SERVER_SECRET accept each other's
    secret = settings.server_secret
    security = (RequestStateSecurity(keys=[hashlib.sha256(b"ghmcp-request-state:" + secret).hexdigest()])
                if secret else RequestStateSecurity.ephemeral())
    server.middleware.append(RequestStateBoundary(security, default_audience=spec.name))
    _SERVED[server] = served
    return server


def _reading_local_token(served: Served, *, at_start: bool
                         ) -> Callable[[Server[Any]], AbstractAsyncContextManager[dict[str, Any]]]:
    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            if at_start:
                await served.learn_local()
        except Exception:  # never a reason not to serve: the tools stay, the forge judges calls
            log_event("token_scopes_unread", level=logging.WARNING, exc_info=True)
        yield {}

    return lifespan


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
    server = server or build_server(spec, settings, notify=False)
    assert settings.server_secret is not None
    auth = HttpAuth(
        resource_url=settings.public_url or _endpoint_url(host, port),
        authorization_servers=(settings.authorization_server
                               or forge.oauth_server(settings.api_url_for(forge)),),
        scopes=forge.oauth_scopes,
        resource_name=spec.title,
        allow_server_token=allow_server_token,
    )
    served = _SERVED.get(server)
    return streamable_http_app(
        server, auth=auth, identity_key=identity_key(settings.server_secret),
        access=served.book if served else None, server_token=settings.token if allow_server_token else None,
        hosts=host_patterns(host, allowed_hosts), origins=[*LOCAL_ORIGINS, *allowed_origins],
    )


async def serve_stdio(server: Server[Any], tools_changed: bool = False) -> None:
    """`tools_changed`: the tool list may change (--dynamic-toolsets), as 2025-era clients are told
    (2026-07-28 ones learn it from the subscriptions/listen the server then serves)."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(
            NotificationOptions(tools_changed=tools_changed)))


def _parser(spec: ServerSpec) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=spec.name, description=f"{spec.title}. `{spec.name} {SCOPES_COMMAND} "
                                "--help`: the token scopes a selection of tools needs.",
                                epilog=help_epilog(spec.forge),
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
    add_exposure_arguments(p, spec.toolsets, spec.forge.display_name, spec.default_toolsets)
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
    """Console-script entry: serve `spec` over stdio (default) or streamable HTTP; `list-scopes`
    prints the token scopes a selection of its tools needs (serving.scope_listing)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == [SCOPES_COMMAND]:
        from ghmcp_runtime.serving.scope_listing import list_scopes

        raise SystemExit(list_scopes(spec, argv[1:], sys.stdout))
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
        idempotency = open_idempotency(settings)
    except ValueError as exc:
        parser.error(f"--idempotency-store: {exc}")
    try:
        settings.check(forge)
    except ValueError as exc:
        parser.error(str(exc))
    refused = lockdown_refusal(spec, settings)
    if refused is not None:
        parser.error(refused)
    if args.allow_server_token and args.transport == "http":
        refusal = server_token_refusal(args.host, args.allowed_host, args.allowed_origin,
                                       settings.public_url)
        if refusal is not None:
            parser.error(refusal)
        if not settings.token:
            parser.error(f"--allow-server-token needs {forge.token_env}")
    _startup_warnings(args, settings, forge)
    if idempotency is not None:
        from ghmcp_runtime.stores.redis_store import eviction_warnings

        for reason in eviction_warnings(settings.idempotency_store, settings.http_cache):
            log_event("config_warning", level=logging.WARNING, reason=reason)
    settings = settings.with_secret()
    try:
        server = build_server(spec, settings, idempotency=idempotency,
                              notify=args.transport == "stdio")
    except ExposureError as exc:
        parser.error(str(exc))
    started = {"server": spec.name, "version": spec.version, "transport": args.transport}
    if args.transport == "stdio":
        log_event("server_started", **started)
        anyio.run(serve_stdio, server, settings.exposure.dynamic)
        return
    import uvicorn  # only the HTTP transport needs it

    log_event("server_started", **started, url=_endpoint_url(args.host, args.port))

    app = http_app(spec, settings, host=args.host, port=args.port,
                   allowed_hosts=args.allowed_host, allowed_origins=args.allowed_origin,
                   allow_server_token=args.allow_server_token, server=server)
    uvicorn.run(app, host=args.host, port=args.port, log_config=UVICORN_LOG_CONFIG)
