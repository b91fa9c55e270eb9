"""resources/list, resources/templates/list, resources/read and completion/complete.

Template reads run a hook on behalf of the tool that reaches the same content, so they share its
validation, credentials, cursors and error codes. Failures are JSON-RPC errors whose `data` is the
tool envelope with `code`/`message` renamed `machine_code`/`human_message`.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.shared.uri_template import UriTemplate
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CompleteRequestParams,
    CompleteResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
)

from ghmcp_runtime.cleaning.outbound import (
    Clean,
    completion,
    resource_json,
    resource_result,
    rpc_error,
)
from ghmcp_runtime.core.errors import INTERNAL_MESSAGE, ToolError, jsonrpc_data
from ghmcp_runtime.core.logs import call_fields, log_event
from ghmcp_runtime.core.model import (
    OUTSIDE_ALLOWLIST_FIELD,
    ServerSpec,
    StaticResource,
    TemplateResource,
    ToolSpec,
)
from ghmcp_runtime.guards.caller import Caller
from ghmcp_runtime.guards.validation import ArgumentValidator
from ghmcp_runtime.serving.discovery import cache_scope
from ghmcp_runtime.serving.surface import SurfaceView

if TYPE_CHECKING:  # contexts come from the tool calls, loaded with the first read (serving.app)
    from ghmcp_runtime.calls.context import ToolContext

# JSON-RPC codes: the caller's request is at fault (-32602, also "resource not found"), or the
# read failed for another reason (a server-defined code outside the reserved range).
CALLER_CODES = frozenset({"invalid_field", "cursor_expired", "repo_not_allowed"})
READ_FAILED = -31001
MAX_COMPLETIONS = 100
# completion context: a template has a handful of variables, each a short name or number
MAX_CONTEXT_ARGUMENTS = 16
MAX_CONTEXT_VALUE_CHARS = 256

CallerFactory = Callable[[Any], Caller]
ContextFactory = Callable[[ToolSpec, Caller, Mapping[str, Any], str], "ToolContext"]
ViewFactory = Callable[[Caller], SurfaceView]


def new_request_id() -> str:
    return "req_" + secrets.token_hex(6)


def internal_rpc_error(request_id: str) -> MCPError:
    """-32603 with a generic message: never the exception's text."""
    return rpc_error(INTERNAL_ERROR, INTERNAL_MESSAGE, {"request_id": request_id})


def _coerce(variables: Mapping[str, str | list[str]], schema: Mapping[str, Any]) -> dict[str, Any]:
    """URI variables are strings; give tool parameters their declared JSON types."""
    props: Mapping[str, Any] = schema.get("properties", {})
    out: dict[str, Any] = {}
    for name, raw in variables.items():
        kind = props.get(name, {}).get("type")
        if isinstance(raw, list):
            out[name] = raw
        elif kind == "integer" and raw.isdigit():
            out[name] = int(raw)
        elif kind == "array":
            out[name] = [part for part in raw.split(",") if part]
        else:
            out[name] = raw
    return out


class ResourceRuntime:
    def __init__(
        self, spec: ServerSpec, caller_of: CallerFactory, make_context: ContextFactory,
        view_of: ViewFactory,
    ) -> None:
        self.spec = spec
        self.caller_of = caller_of
        self.make_context = make_context
        self.view_of = view_of
        self.tools = {t.name: t for t in spec.tools}
        self.static = {r.uri: r for r in spec.resources}
        self.templates = [(t, UriTemplate.parse(t.uri_template)) for t in spec.templates]
        self.by_template = {t.uri_template: t for t in spec.templates}
        self.variables = {t.uri_template: set(parsed.variable_names) for t, parsed in self.templates}
        self.validators = {
            t.uri_template: ArgumentValidator({
                "type": "object",
                "properties": {
                    name: schema
                    for name, schema in self.tools[t.tool].input_schema["properties"].items()
                    if name in parsed.variable_names
                },
            }, {name: check for name, check in (self.tools[t.tool].input_checks or {}).items()
                if name in parsed.variable_names})
            for t, parsed in self.templates
        }

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        caller = self.caller_of(ctx.request)
        view = self.view_of(caller)
        return ListResourcesResult(
            resources=[
                Resource(uri=r.uri, name=r.name, title=r.title, description=r.description,
                         mime_type=r.mime_type, size=len(_text(r, view).encode("utf-8")))
                for r in self.spec.resources
            ],
            ttl_ms=min((r.ttl_ms for r in self.spec.resources), default=0),
            cache_scope=cache_scope(caller),
        )

    async def list_templates(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        caller = self.caller_of(ctx.request)
        view = self.view_of(caller)
        return ListResourceTemplatesResult(
            resource_templates=[
                ResourceTemplate(uri_template=t.uri_template, name=t.name, title=t.title,
                                 description=t.description, mime_type=t.mime_type)
                for t in view.templates
            ],
            ttl_ms=300_000,
            cache_scope=cache_scope(caller),
        )

    async def read(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        uri = str(params.uri)
        request_id = new_request_id()
        caller = self.caller_of(ctx.request)
        view = self.view_of(caller)
        static = self.static.get(uri)
        if static is not None:
            scope = "private" if cache_scope(caller) == "private" else static.cache_scope
            return resource_result(uri, static.mime_type, Clean(_text(static, view)),
                                   ttl_ms=static.ttl_ms, cache_scope=scope)
        for template, parsed in self.templates:
            variables = parsed.match(uri)
            if variables is not None and template in view.templates:
                with call_fields(caller=caller.identity, request_id=request_id):
                    return await self._read_template(caller, view, template, uri, variables,
                                                     request_id)
        raise self._error(ToolError(
            "invalid_field",
            "No resource has this URI; see resources/list and resources/templates/list.",
            details={"field": "uri", "reason": "no resource or template matches"},
        ), uri, request_id, view, extra={"uri": uri})

    async def _read_template(
        self, caller: Caller, view: SurfaceView, template: TemplateResource, uri: str,
        variables: Mapping[str, str | list[str]], request_id: str,
    ) -> ReadResourceResult:
        tool = self.tools[template.tool]
        args = _coerce(variables, tool.input_schema)
        outcome = "ok"
        try:
            problem = self.validators[template.uri_template].validate(args)
            if problem is not None:
                problem.details = {**(problem.details or {}), "field": "uri"}
                raise problem
            if view.surface.repos is not None:
                view.surface.repos.check_arguments(args, field="uri")
            tctx = self.make_context(tool, caller, args, request_id)
            body = await template.handler(tctx, args)
            await tctx.release_held()
            if tctx.outside_allowlist and isinstance(body, dict):
                body = {**body, OUTSIDE_ALLOWLIST_FIELD: tctx.outside_allowlist}
        except ToolError as err:
            outcome = err.code
            err.__traceback__ = None  # as in tool_calls.ToolRuntime: no cycle holding the arguments
            raise self._error(err, uri, request_id, view) from None
        except Exception:
            outcome = "internal_error"
            log_event("resource_crashed", level=logging.ERROR, exc_info=True,
                      template=template.name)
            raise internal_rpc_error(request_id) from None
        finally:
            log_event("resource_read", template=template.name, outcome=outcome)
        return resource_json(uri, template.mime_type, body, ttl_ms=template.ttl_ms,
                             cache_scope=template.cache_scope)

    def _error(self, err: ToolError, uri: str, request_id: str, view: SurfaceView,
               extra: Mapping[str, Any] | None = None) -> MCPError:
        # a read has one input, its URI: every field-level detail points there
        details = {k: v for k, v in (err.details or {}).items() if k not in ("field", "fields")}
        err.details = {**details, "field": "uri", "reason": details.get("reason", err.message)}
        envelope = view.envelope(err, request_id)
        data = {**jsonrpc_data(envelope, resource_uri=uri), **(extra or {})}
        is_caller = err.code in CALLER_CODES or err.code.endswith("_not_found")
        return rpc_error(INVALID_PARAMS if is_caller else READ_FAILED, err.message, data)

    async def complete(
        self, ctx: ServerRequestContext[Any], params: CompleteRequestParams
    ) -> CompleteResult:
        ref = params.ref
        template = self.by_template.get(ref.uri) if isinstance(ref, ResourceTemplateReference) else None
        handler = template.completions.get(params.argument.name) if template else None
        caller = self.caller_of(ctx.request)
        view = self.view_of(caller)
        if (template is None or handler is None or template not in view.templates
                or len(params.argument.value) > MAX_CONTEXT_VALUE_CHARS):
            # no completion, a template hidden from this caller, or a value longer than any
            # name or number it could complete
            return _completion([])
        chosen = self._context_arguments(params, template)
        repos = view.surface.repos
        if repos is not None:
            if not chosen.get("owner") and repos.single_owner():
                chosen["owner"] = str(repos.single_owner())
            if not repos.allows_context(chosen):
                return _completion([])  # nothing of a repository outside it is even asked for
        request_id = new_request_id()
        tctx = self.make_context(self.tools[template.tool], caller, chosen, request_id)
        with call_fields(caller=caller.identity, request_id=request_id):
            try:
                found = await handler(tctx, params.argument.value, chosen)
            except ToolError:
                found = []  # completion is best-effort; the read itself reports the error
            except Exception:
                log_event("completion_crashed", level=logging.ERROR, exc_info=True,
                          template=template.name)
                raise internal_rpc_error(request_id) from None
        if repos is not None:
            found = repos.completions(params.argument.name, found, chosen.get("owner"))
        prefix = params.argument.value.lower()
        return _completion(sorted({v for v in found if v.lower().startswith(prefix)}, key=str.lower))

    def _context_arguments(
        self, params: CompleteRequestParams, template: TemplateResource
    ) -> dict[str, str]:
        """The template variables already chosen, bounded: the template's own variables only,
        each cut to a length no owner, repository or number reaches."""
        raw = (params.context.arguments or {}) if params.context else {}
        if len(raw) > MAX_CONTEXT_ARGUMENTS:
            raise rpc_error(INVALID_PARAMS, "Too many context arguments for this template.")
        names = self.variables[template.uri_template]
        return {k: str(v)[:MAX_CONTEXT_VALUE_CHARS] for k, v in raw.items() if k in names}


def _text(resource: StaticResource, view: SurfaceView) -> str:
    """A static resource's text; the summary and error catalog of the caller's surface."""
    return view.document(resource.content) or resource.text


def _completion(values: list[str]) -> CompleteResult:
    return completion(values, MAX_COMPLETIONS)
