"""`--dynamic-toolsets`: a server that starts with three tools and grows when the model enables a
toolset.

`<prefix>list_toolsets` lists every toolset (what its tools do, how many, enabled or not),
`<prefix>get_toolset_tools` shows one toolset's tools without enabling it, and
`<prefix>enable_toolsets` enables one or more. They are ordinary tools of the server: validated
against their published inputSchema, refused when the caller's surface hides them, answered with
the error envelope; every exposure flag bounds what they enable (guards.exposure.enable).

Where an enable goes depends on the transport:

* stdio and in memory (one client per process): the process's surface grows, and the client is
  told (`notifications/tools/list_changed` on a 2025-era connection, a `ToolsListChanged` event on
  the `subscriptions/listen` streams of a 2026-07-28 one);
* stateless HTTP: no connection remembers anything, so nothing changes on the server and no other
  caller is affected; the answer says which `X-MCP-Toolsets` header value to send with later
  requests (each request's surface is the toolsets its header names, within the operator's
  bounds, plus these three tools).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ghmcp_runtime.core.errors import ENVELOPE_OUTPUT_SCHEMA
from ghmcp_runtime.core.model import Annotations, ServerSpec, ToolSpec
from ghmcp_runtime.guards.exposure import ExposurePolicy, Surface
from ghmcp_runtime.serving.forge_server import missing_inputs

LIST, SHOW, ENABLE = "list_toolsets", "get_toolset_tools", "enable_toolsets"
HEADER = "X-MCP-Toolsets"
_READ = Annotations(read_only=True, open_world=False)
_STRINGS = {"type": "array", "items": {"type": "string"}}


def prefix(spec: ServerSpec) -> str:
    """The forge's tool prefix (`github_`), as every tool name of the server starts with it."""
    return spec.tools[0].name.split("_", 1)[0] + "_" if spec.tools else ""


def _closed(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": required,
            "additionalProperties": False}


def _output(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    success = _closed({**properties, "request_id": {"type": "string"}}, [*required, "request_id"])
    return {"type": "object", "oneOf": [success, ENVELOPE_OUTPUT_SCHEMA]}


class DynamicToolsets:
    """The three tools, and the surface of the process's one client (stdio, in memory)."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.prefix = prefix(spec)
        self.names = {kind: self.prefix + kind for kind in (LIST, SHOW, ENABLE)}
        self.exposure: ExposurePolicy | None = None
        self.surface: Surface | None = None  # set by `bind`; grows with each enable

    def bind(self, exposure: ExposurePolicy) -> None:
        self.exposure, self.surface = exposure, exposure.base

    def tools(self) -> tuple[ToolSpec, ...]:
        toolsets = list(self.spec.toolsets)
        name = {"type": "string", "enum": toolsets}
        list_name, show_name, enable_name = (self.names[k] for k in (LIST, SHOW, ENABLE))
        return (
            self._tool(
                list_name, "List toolsets",
                f"This server's toolsets: what each one's tools do, how many, and whether they are "
                f"enabled. Call it first, then {enable_name}.\nExample: {{}}",
                _closed({}, []),
                _output({"toolsets": {"type": "array", "items": _closed({
                    "name": {"type": "string"}, "description": {"type": "string"},
                    "tools": {"type": "integer", "description": "Tools it adds here."},
                    "enabled": {"type": "boolean"}, "default": {"type": "boolean"}},
                    ["name", "description", "tools", "enabled", "default"])}}, ["toolsets"]),
                self.list_toolsets),
            self._tool(
                show_name, "Show a toolset's tools",
                f"A toolset's tools (name, title, read-only or not), without enabling it.\n"
                f"Example: {{\"toolset\":\"{toolsets[0]}\"}}",
                _closed({"toolset": name}, ["toolset"]),
                _output({"toolset": {"type": "string"}, "enabled": {"type": "boolean"},
                         "tools": {"type": "array", "items": _closed({
                             "name": {"type": "string"}, "title": {"type": "string"},
                             "read_only": {"type": "boolean"}}, ["name", "title", "read_only"])}},
                        ["toolset", "enabled", "tools"]),
                self.get_toolset_tools),
            self._tool(
                enable_name, "Enable toolsets",
                f"Add toolsets' tools to tools/list; the client is told the list changed. Over "
                f"HTTP nothing changes here: send the returned {HEADER} header with later "
                f"requests.\nExample: {{\"toolsets\":[\"{toolsets[0]}\"]}}",
                _closed({"toolsets": {"type": "array", "items": name, "minItems": 1,
                                      "maxItems": len(toolsets), "uniqueItems": True}}, ["toolsets"]),
                _output({"toolsets": {**_STRINGS, "description": "Enabled now, these included."},
                         "added_tools": _STRINGS,
                         "applied": {"type": "boolean", "description": "false over HTTP: send "
                                     "send_header to use them."},
                         "notified": {"type": "boolean"},
                         "send_header": _closed({HEADER: {"type": "string"}}, [HEADER]),
                         "unavailable": {**_STRINGS, "description": "Toolsets whose tools the "
                                         "operator's flags hide; omitted when none."},
                         "missing_inputs": {**_STRINGS, "description": "Tools here whose ids only "
                                            "a toolset not enabled returns; omitted when none."}},
                        ["toolsets", "added_tools", "applied", "notified"]),
                self.enable_toolsets),
        )

    def _tool(self, name: str, title: str, description: str, input_schema: dict[str, Any],
              output_schema: dict[str, Any], handler: Any) -> ToolSpec:
        return ToolSpec(name=name, title=title, description=description, input_schema=input_schema,
                        output_schema=output_schema, annotations=_READ,
                        error_codes=("invalid_field", "internal_error"), operations=(),
                        handler=handler, meta={}, field_map={}, echo_safe=("toolset", "toolsets"))

    # -- the handlers (ctx: the call's ToolContext; ctx.host: the server around it) ----------

    def _surface(self, ctx: Any) -> Surface:
        caller = ctx.host.caller
        if caller.surface is not None and caller.surface.per_request:
            return caller.surface  # type: ignore[no-any-return]
        assert self.surface is not None
        return self.surface

    def _members(self, toolset: str) -> list[ToolSpec]:
        bounds = self.exposure.bounds if self.exposure else frozenset()
        return [t for t in self.spec.tools if t.toolset == toolset and t.name in bounds]

    def _enabled(self, toolset: str, surface: Surface) -> bool:
        members = self._members(toolset)
        return bool(members) and all(t.name in surface.tools for t in members)

    async def list_toolsets(self, ctx: Any, args: Mapping[str, Any]) -> dict[str, Any]:
        surface = self._surface(ctx)
        default = set(self.spec.default_toolsets or self.spec.toolsets)
        return {"toolsets": [{"name": name, "description": text, "tools": len(self._members(name)),
                              "enabled": self._enabled(name, surface), "default": name in default}
                             for name, text in self.spec.toolsets.items()]}

    async def get_toolset_tools(self, ctx: Any, args: Mapping[str, Any]) -> dict[str, Any]:
        name = args["toolset"]
        return {"toolset": name, "enabled": self._enabled(name, self._surface(ctx)),
                "tools": [{"name": t.name, "title": t.title, "read_only": t.annotations.read_only}
                          for t in self._members(name)]}

    async def enable_toolsets(self, ctx: Any, args: Mapping[str, Any]) -> dict[str, Any]:
        assert self.exposure is not None
        asked = list(args["toolsets"])
        before = self._surface(ctx)
        after = self.exposure.enable(before, asked)
        added = sorted(after.tools - before.tools)
        out: dict[str, Any] = {
            "toolsets": [n for n in self.spec.toolsets if self._enabled(n, after)],
            "added_tools": added, "applied": not before.per_request, "notified": False}
        if before.per_request:
            out["send_header"] = {HEADER: ",".join(out["toolsets"])}
        else:
            self.surface = after
            if added:
                out["notified"] = await ctx.host.tools_changed()
        if unavailable := [n for n in asked if not self._members(n)]:
            out["unavailable"] = unavailable
        if missing := missing_inputs(self.spec, after.tools):
            out["missing_inputs"] = missing
        return out
