"""The MCP server around a ServerSpec: tools/list, tools/call, settings and the console entry."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import httpx
from mcp.server import CacheHint, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from starlette.applications import Starlette

from ghmcp_runtime.context import CursorCodec, Idempotency, ToolContext, Upstream
from ghmcp_runtime.cursors import HmacCursorCodec
from ghmcp_runtime.errors import ToolError
from ghmcp_runtime.idempotency import IdempotencyRunner
from ghmcp_runtime.lockdown import Lockdown, TrustCache, requested
from ghmcp_runtime.logs import log_event
from ghmcp_runtime.model import ServerSpec, ToolSpec
from ghmcp_runtime.projection import ShapeProjector
from ghmcp_runtime.redis_store import open_store
from ghmcp_runtime.resources import ResourceRuntime
from ghmcp_runtime.upstream import DEFAULT_API_URL, GitHubUpstream
from ghmcp_runtime.validation import ArgumentValidator, plain

TOOLS_LIST_CACHE = CacheHint(ttl_ms=300_000, scope="public")
LOW_RATE_LIMIT_FRACTION = 0.1
LOCAL_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOCAL_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    github_token: str | None = field(default=None, repr=False)
    api_url: str = DEFAULT_API_URL
    cursor_secret: bytes | None = field(default=None, repr=False)
    timeout_s: float = 20.0
    connect_timeout_s: float = 5.0
    idempotency_store: str = "memory"
    lockdown: bool = False  # withhold text by authors without push access (HTTP callers can also ask)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        secret = env.get("GHMCP_CURSOR_SECRET", "")
        return cls(
            github_token=env.get("GITHUB_TOKEN", "").strip() or None,
            api_url=env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL,
            cursor_secret=secret.encode() if secret else None,
            timeout_s=_float_env(env, "GHMCP_TIMEOUT_S", 20.0),
            connect_timeout_s=_float_env(env, "GHMCP_CONNECT_TIMEOUT_S", 5.0),
            idempotency_store=env.get("GHMCP_IDEMPOTENCY_STORE", "").strip() or "memory",
            lockdown=env.get("GHMCP_LOCKDOWN", "").strip().lower() in ("1", "true", "yes", "on"),
        )


def identity_of(credential: str | None) -> str:
    if not credential:
        return "anonymous"
    return "u_" + hashlib.sha256(credential.encode()).hexdigest()[:16]


def bearer_token(request: Any) -> str | None:
    """The token of an `Authorization: Bearer` header on an HTTP request (None on stdio)."""
    headers = getattr(request, "headers", None)
    value = headers.get("authorization") if headers is not None else None
    if not isinstance(value, str):
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def wire_tool(tool: ToolSpec) -> Tool:
    return Tool.model_validate(
        {
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "inputSchema": plain(tool.input_schema),
            "outputSchema": plain(tool.output_schema),
            "annotations": tool.annotations.wire(),
            **({"_meta": plain(tool.meta)} if tool.meta else {}),
        }
    )


def error_text(err: ToolError) -> str:
    """One or two plain sentences: the message, then the next step in words."""
    text = err.message
    if err.repair:
        step = str(err.repair.get("next_step", "")).replace("_", " ")
        text += f" Next step ({step}): call {err.repair.get('tool')} with repair.arguments."
    elif err.temporary and err.retry_after_ms is not None:
        text += f" Retry in about {max(1, round(err.retry_after_ms / 1000))} s."
    return text


INTERNAL = "The server failed unexpectedly on this call; it was logged under the request_id."


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
        self.projector = ShapeProjector(spec.shapes)
        self.trust = TrustCache()
        self.tools = {t.name: t for t in spec.tools}
        self.validators = {t.name: ArgumentValidator(t.input_schema) for t in spec.tools}
        self.schemas = {t.name: plain(t.input_schema) for t in spec.tools}
        self.listing = ListToolsResult(tools=[wire_tool(t) for t in spec.tools])

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        return self.schemas.get(name)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self.listing

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        request_id = "req_" + secrets.token_hex(6)
        start = time.perf_counter()
        outcome = "ok"
        try:
            payload = await self._call(ctx, params, request_id)
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            return CallToolResult(content=[TextContent(type="text", text=text)],
                                  structured_content=payload)
        except ToolError as err:
            outcome = err.code
            return self._error(err, request_id)
        except Exception:
            outcome = "internal_error"
            log_event("tool_crashed", level=logging.ERROR, exc_info=True,
                      tool=params.name[:64], request_id=request_id)
            return self._error(ToolError("internal_error", INTERNAL), request_id)
        finally:
            log_event("tool_call", tool=params.name[:64], request_id=request_id, outcome=outcome,
                      ms=round((time.perf_counter() - start) * 1000))

    async def _call(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams, request_id: str
    ) -> dict[str, Any]:
        tool = self.tools.get(params.name)
        if tool is None:
            raise ToolError(
                "invalid_field",
                "There is no tool with this name; call tools/list to see the available tools.",
                details={"field": "name", "reason": "not a tool of this server"},
            )
        args = params.arguments if params.arguments is not None else {}
        validator = self.validators[tool.name]
        invalid = validator.validate(args)
        if invalid is not None:
            raise invalid
        args = validator.normalize(args)
        tctx = self.context_for(tool, ctx.request, args, request_id)
        try:
            result = await tool.handler(tctx, args)
            await tctx.release_held()
        except ToolError as err:
            if err.temporary and err.repair is None and set(args) <= set(tool.echo_safe):
                err.repair = {"next_step": "retry_after_wait", "tool": tool.name, "arguments": dict(args)}
            raise
        if not isinstance(result, Mapping):
            raise TypeError(f"handler of {tool.name} returned {type(result).__name__}, not a mapping")
        payload = {**result, "request_id": request_id}
        remaining, limit = tctx.rate_limit.get("remaining"), tctx.rate_limit.get("limit")
        if remaining is not None and limit and remaining < limit * LOW_RATE_LIMIT_FRACTION:
            payload["rate_limit_remaining"] = remaining
        return payload

    def context_for(
        self, tool: ToolSpec, request: Any, args: Mapping[str, Any], request_id: str
    ) -> ToolContext:
        credential = bearer_token(request) or self.settings.github_token
        locked = self.settings.lockdown or requested(request)
        return ToolContext(
            tool=tool, request_id=request_id, identity=identity_of(credential),
            arguments=args, upstream=self.upstream, cursors=self.cursors,
            idempotency=self.idempotency, projector=self.projector, credential=credential,
            lockdown=Lockdown(self.spec.shapes, self.trust) if locked else None,
        )

    def _error(self, err: ToolError, request_id: str) -> CallToolResult:
        envelope = err.envelope(request_id=request_id, fingerprint=self.spec.fingerprint)
        return CallToolResult(content=[TextContent(type="text", text=error_text(err))],
                              structured_content=envelope, is_error=True)


def build_server(
    spec: ServerSpec,
    settings: Settings,
    *,
    upstream: Upstream | None = None,
    cursors: CursorCodec | None = None,
    idempotency: Idempotency | None = None,
) -> Server[Any]:
    """The low-level MCP server for `spec`. Components default from `settings`; tests inject."""
    if upstream is None:
        upstream = GitHubUpstream(
            base_url=settings.api_url,
            api_version=spec.api_version,
            timeout=httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s),
        )
    runtime = _ToolRuntime(
        spec,
        settings,
        upstream,
        cursors or HmacCursorCodec(settings.cursor_secret),
        idempotency or IdempotencyRunner(open_store(settings.idempotency_store)),
    )
    resources = ResourceRuntime(spec, runtime.context_for) if spec.resources or spec.templates else None
    return Server(
        spec.name,
        version=spec.version,
        title=spec.title,
        description=f"Capability fingerprint {spec.fingerprint}",
        instructions=spec.instructions,
        cache_hints={"tools/list": TOOLS_LIST_CACHE, "server/discover": TOOLS_LIST_CACHE},
        get_tool_input_schema=runtime.input_schema,
        on_list_tools=runtime.list_tools,
        on_call_tool=runtime.call_tool,
        on_list_resources=resources.list_resources if resources else None,
        on_list_resource_templates=resources.list_templates if resources else None,
        on_read_resource=resources.read if resources else None,
        on_completion=resources.complete if resources and spec.templates else None,
    )


def transport_security(
    host: str, allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = ()
) -> TransportSecuritySettings:
    """DNS-rebinding protection stays on: loopback names, the bound host, and what you allow."""
    hosts = [*LOCAL_HOSTS, *allowed_hosts]
    if host not in ("0.0.0.0", "::", "127.0.0.1", "localhost", "::1"):
        hosts += [host, f"{host}:*"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[*LOCAL_ORIGINS, *allowed_origins],
    )


def http_app(
    spec: ServerSpec,
    settings: Settings | None = None,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    server: Server[Any] | None = None,
) -> Starlette:
    """Streamable HTTP (stateless, JSON responses) as an ASGI app, e.g. for `uvicorn`."""
    server = server or build_server(spec, settings or Settings.from_env())
    return server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        host=host,
        transport_security=transport_security(host, allowed_hosts, allowed_origins),
    )


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _parser(spec: ServerSpec) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=spec.name, description=spec.title)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT|:*]",
                   help="extra Host header value to accept over HTTP (repeatable)")
    p.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                   help="extra Origin header value to accept over HTTP (repeatable)")
    p.add_argument("--idempotency-store", default=None,
                   help="'memory' (default, one process) or redis://HOST:PORT/DB shared by "
                        "replicas (env GHMCP_IDEMPOTENCY_STORE)")
    p.add_argument("--lockdown", action="store_true",
                   help="withhold issue and comment text by authors without push access to public "
                        "repositories (env GHMCP_LOCKDOWN=1; HTTP callers may also send "
                        "X-MCP-Lockdown: true)")
    return p


def run(spec: ServerSpec, argv: Sequence[str] | None = None) -> None:
    """Console-script entry: serve `spec` over stdio (default) or streamable HTTP."""
    parser = _parser(spec)
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        parser.error(str(exc))
    settings = replace(settings, idempotency_store=args.idempotency_store or settings.idempotency_store,
                       lockdown=args.lockdown or settings.lockdown)
    try:
        store = open_store(settings.idempotency_store)
    except ValueError as exc:
        parser.error(f"--idempotency-store: {exc}")
    server = build_server(spec, settings, idempotency=IdempotencyRunner(store))
    if args.transport == "stdio":
        anyio.run(serve_stdio, server)
        return
    import uvicorn  # only the HTTP transport needs it

    if args.host not in ("127.0.0.1", "localhost", "::1") and not args.allowed_host:
        log_event("http_bind_warning", level=logging.WARNING, host=args.host,
                  hint="only loopback Host headers are accepted; add --allowed-host")
    app = http_app(spec, settings, host=args.host, allowed_hosts=args.allowed_host,
                   allowed_origins=args.allowed_origin, server=server)
    uvicorn.run(app, host=args.host, port=args.port)
