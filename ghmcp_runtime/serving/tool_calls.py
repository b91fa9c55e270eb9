"""tools/call: validate the arguments, run the tool's handler with its context, answer with its
result or error envelope. Loaded with the first call (serving.app), with the engine, the upstream
client and the idempotency store it builds on; `initialize` and `tools/list` need none of them."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.subscriptions import ToolsListChanged
from mcp.shared.exceptions import NoBackChannelError
from mcp.types import INVALID_PARAMS, CallToolRequestParams, CallToolResult, InputRequiredResult
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from ghmcp_runtime.calls.context import Changes, CursorCodec, Idempotency, ToolContext, Upstream
from ghmcp_runtime.calls.cursors import HmacCursorCodec
from ghmcp_runtime.cleaning.outbound import (
    input_required_result,
    rpc_error,
    tool_error,
    tool_result,
    visible,
)
from ghmcp_runtime.core.errors import INTERNAL_MESSAGE, ToolError
from ghmcp_runtime.core.logs import call_fields, log_event
from ghmcp_runtime.core.model import OUTSIDE_ALLOWLIST_FIELD, ToolSpec
from ghmcp_runtime.engine.confirm import FORM, QUESTION, InputRequired, accepted
from ghmcp_runtime.engine.pacing import Pacer, Pacers
from ghmcp_runtime.guards.caller import Caller
from ghmcp_runtime.guards.lockdown import Lockdown, TrustCache, requested
from ghmcp_runtime.guards.output_check import OutputCheck
from ghmcp_runtime.serving.access_book import CHALLENGE_SCOPE_KEY
from ghmcp_runtime.serving.cancellation import Connection, connection_of
from ghmcp_runtime.serving.resources import new_request_id
from ghmcp_runtime.serving.served import Served
from ghmcp_runtime.serving.upstream_client import default_upstream
from ghmcp_runtime.stores.idempotency import IdempotencyRunner
from ghmcp_runtime.stores.redis_store import open_store

LOW_RATE_LIMIT_FRACTION = 0.1
_TOOL_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def error_text(err: ToolError) -> str:
    """One or two plain sentences: the message, then the next step in words."""
    text = err.message
    if err.repair:
        step = str(err.repair.get("next_step", "")).replace("_", " ")
        text += f" Next step ({step}): call {err.repair.get('tool')} with repair.arguments."
    elif err.temporary and err.retry_after_ms is not None:
        text += f" Retry in about {max(1, round(err.retry_after_ms / 1000))} s."
    return text


def invalid_answer(tctx: ToolContext) -> ToolError:
    """internal_error for an answer that fails the tool's own outputSchema; after writes, a
    warning that they may have taken effect (the answer saying which cannot be sent)."""
    message = INTERNAL_MESSAGE
    if tctx.changes.count:
        message += (f" It had sent {tctx.changes.count} write request(s), which may have taken effect: "
                    "read the resource before repeating the call.")
    return tctx.writes.annotate(ToolError("internal_error", message))


def unknown_tool(name: str) -> MCPError:
    """JSON-RPC -32602, as the MCP spec lists for an unknown tool; the name only when tame."""
    shown = f": {name}" if _TOOL_NAME.fullmatch(name) else ""
    return rpc_error(INVALID_PARAMS, f"Unknown tool{shown}; call tools/list for the available tools.")


def default_idempotency(served: Served) -> IdempotencyRunner:
    settings = served.settings
    return IdempotencyRunner(open_store(settings.idempotency_store, settings.keys_per_caller,
                                         settings.shared_keys))


class ToolRuntime:
    def __init__(
        self,
        served: Served,
        upstream: Upstream | None = None,
        cursors: CursorCodec | None = None,
        idempotency: Idempotency | None = None,
    ) -> None:
        """The calls of `served`; components default from its settings (tests inject them)."""
        self.served = served
        self.spec = served.spec
        self.settings = served.settings
        self.tools = served.tools
        self.upstream = upstream or default_upstream(served)
        self.cursors = cursors or HmacCursorCodec(self.settings.server_secret)
        self.idempotency = idempotency or default_idempotency(served)
        self.projectors = served.projectors
        self.validators = served.validators
        self.trust = TrustCache()
        self.output_check = OutputCheck()
        self.pacers = Pacers(self.settings.write_interval_s)  # batches' writes, per token
        self.caller_of = served.caller_of
        self.surface_of = served.surface_of
        self.view_of = served.view_of

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        request_id = new_request_id()
        caller = self.caller_of(ctx.request)
        with call_fields(caller=caller.identity, request_id=request_id):
            tool = self.tools.get(params.name)
            if tool is None or tool.name not in self.surface_of(caller).tools:
                log_event("tool_call", tool=params.name[:64], ms=0,
                          outcome="unknown_tool" if tool is None else "hidden_tool")
                raise unknown_tool(params.name)
            host = CallHost(self, caller, ctx, params, anyio.Event(), connection_of(ctx.request))
            with self.served.in_flight.running(caller.identity, ctx.request_id, host.stop):
                result = await self._call_logged(tool, caller, params.arguments, request_id, host)
            if isinstance(result, CallToolResult) and result.is_error:
                self._refused(tool, caller, result, ctx.request)
            return result

    def _refused(self, tool: ToolSpec, caller: Caller, result: CallToolResult, request: Any) -> None:
        """After a failed call: a token the forge rejected, or refused for a scope its read said
        it had, is read again next time (its scopes changed); a caller that can step its token
        up gets the scope challenge with the answer (http_auth.ScopeChallenge)."""
        data = result.structured_content or {}
        code = data.get("code")
        access = caller.access
        if code not in ("insufficient_scope", "invalid_credential") or access is None:
            return
        model = self.spec.forge.scopes
        if self.served.book is not None and (code == "invalid_credential" or not access.missing(tool, model)):
            self.served.book.forget(caller.identity)
        scope = getattr(request, "scope", None)
        if code == "insufficient_scope" and caller.step_up and isinstance(scope, dict):
            details = data.get("details")
            needed = details.get("required_scopes") if isinstance(details, dict) else None
            wanted = set(needed) if isinstance(needed, list) else set(access.missing(tool, model))
            scope[CHALLENGE_SCOPE_KEY] = tuple(sorted((access.scopes or frozenset()) | wanted))

    async def _call_logged(
        self, tool: ToolSpec, caller: Caller, arguments: Mapping[str, Any] | None, request_id: str,
        host: CallHost | None = None,
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
        host: CallHost | None,
    ) -> dict[str, Any]:
        result, tctx = await self.run_tool(tool, caller, arguments, request_id, host=host)
        payload = {**result, "request_id": request_id}
        if tctx.outside_allowlist and OUTSIDE_ALLOWLIST_FIELD in tool.success_fields:
            payload[OUTSIDE_ALLOWLIST_FIELD] = tctx.outside_allowlist
        remaining, limit = tctx.rate_limit.get("remaining"), tctx.rate_limit.get("limit")
        if remaining is not None and limit and remaining < limit * LOW_RATE_LIMIT_FRACTION:
            payload["rate_limit_remaining"] = remaining
        problem = self.output_check.problem(tool, payload)
        if problem is not None:
            log_event("output_invalid", level=logging.ERROR, tool=tool.name, where=problem)
            raise invalid_answer(tctx)
        return payload

    async def run_tool(
        self, tool: ToolSpec, caller: Caller, arguments: Mapping[str, Any] | None, request_id: str,
        *, host: CallHost | None, dry_run: bool = False, paced: Pacer | None = None,
        changes: Changes | None = None,
    ) -> tuple[Mapping[str, Any], ToolContext]:
        """Validate the arguments, run the handler, release lockdown: a tool's result and its
        context (a direct call, or one a batch makes: `paced` items one request at a time, what
        they change counted in the batch's `changes`)."""
        args = arguments if arguments is not None else {}
        validator = self.validators[tool.name]
        invalid = validator.validate(args)
        if invalid is not None:
            raise invalid
        args = validator.normalize(args)
        repos = self.surface_of(caller).repos
        if repos is not None:
            repos.check_arguments(args)
        if caller.step_up and caller.access is not None:  # kept though its scopes fall short
            missing = caller.access.missing(tool, self.spec.forge.scopes)
            if missing:
                raise ToolError(
                    "insufficient_scope",
                    f"The token lacks a scope this tool needs (details.required_scopes); nothing "
                    f"was sent to {self.spec.forge.display_name}. Authorize the scope and repeat.",
                    details={"required_scopes": list(missing),
                             "reason": "the token lacks a scope this tool needs"})
        tctx = self.context_for(tool, caller, args, request_id)
        tctx.host, tctx.dry_run, tctx.pace = host, dry_run, paced
        if changes is not None:
            tctx.changes = changes
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
        part = self.served.part[tool.name]
        locked = (self.settings.lockdown or requested(caller.headers)) and forge.trust is not None
        return ToolContext(
            tool=tool, request_id=request_id, identity=caller.identity,
            arguments=args, upstream=self.upstream, cursors=self.cursors,
            idempotency=self.idempotency, projector=self.projectors[tool.name],
            credential=caller.credential, forge=forge,
            lockdown=Lockdown(part.shapes, self.trust, forge) if locked else None,
            repos=self.surface_of(caller).repos,
            slots=anyio.CapacityLimiter(self.settings.max_concurrent),
            error_rules=part.error_rules,
        )

    def _error(self, err: ToolError, request_id: str, caller: Caller) -> CallToolResult:
        envelope = self.view_of(caller).envelope(err, request_id)
        return tool_error(envelope, error_text(err))


@dataclass(slots=True)
class CallHost:
    """`context.Host` for one tools/call: other tools run as the same caller, progress goes to
    the request's progressToken, confirmations go to the client (ghmcp_runtime.engine.confirm)."""

    runtime: ToolRuntime
    caller: Caller
    request: ServerRequestContext[Any]
    params: CallToolRequestParams
    stop: anyio.Event  # set by the caller's notifications/cancelled (cancellation.py)
    connection: Connection | None = None  # over HTTP: the connection the answer goes back on
    pacer: Pacer | None = None

    @property
    def write_interval_s(self) -> float:
        return self.runtime.settings.write_interval_s

    @property
    def max_wait_s(self) -> float:
        return self.runtime.settings.batch_max_wait_s

    def offers(self, name: str) -> bool:
        return name in self.runtime.surface_of(self.caller).tools

    async def run_tool(self, ctx: ToolContext, name: str, args: Mapping[str, Any], *, dry_run: bool,
                       paced: bool) -> dict[str, Any]:
        if name not in (*ctx.tool.runs, *ctx.tool.may_run) or not self.offers(name):
            # exposure hides a composite with the tools it declares it runs, so this is a
            # defect (a hook running an undeclared tool): the whole call fails, internal_error
            raise RuntimeError(f"{ctx.tool.name} ran {name}, which it does not declare or the "
                               "caller's surface hides")
        if paced and self.pacer is None:
            self.pacer = self.runtime.pacers.of(self.caller.identity)  # one pace per token
        try:
            result, _ = await self.runtime.run_tool(
                self.runtime.tools[name], self.caller, args, ctx.request_id, host=self,
                dry_run=dry_run, paced=self.pacer if paced else None, changes=ctx.changes)
        except ToolError as err:
            if err.repair is not None and err.repair.get("tool") not in self.runtime.surface_of(self.caller).tools:
                err.repair = None  # no repair through a tool this caller cannot see
            raise
        return dict(result)

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        await self.request.session.report_progress(done, total, message)  # no-op without a token

    async def cancelled(self) -> None:
        if self.connection is None:
            await self.stop.wait()
            return
        connection = self.connection
        async with anyio.create_task_group() as group:  # only a call that asks watches its client

            async def gone() -> None:
                await connection.closed()
                self.stop.set()

            group.start_soon(gone)
            await self.stop.wait()
            group.cancel_scope.cancel()

    async def tools_changed(self) -> bool:
        """2026-07-28: an event on the server's subscriptions/listen streams; the 2025 era: the
        notification on this connection. Without a bus (stateless HTTP) neither can reach it."""
        bus = self.runtime.served.bus
        if bus is None:
            return False
        if self.request.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await bus.publish(ToolsListChanged())
        else:
            await self.request.session.send_tool_list_changed()
        return True

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

