"""What describes an active surface: its tools/list, templates, capability summary,
instructions, error catalog and fingerprint, built once per distinct surface.

The whole surface is described by the generated files (`tools.json`, `summary.md`,
`errors.json`, FINGERPRINT). A narrowed one (exposure flags, X-MCP-* headers) gets its own
documents, listing only what it exposes, and its own fingerprint, derived from the whole
surface's and from what the narrowing left (tools, repository allowlist), so equal surfaces
share a fingerprint however they were chosen.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from mcp.types import Tool

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.model import ErrorCode, ServerSpec, TemplateResource, ToolSpec
from ghmcp_runtime.guards.allowlist import REPO_NOT_ALLOWED
from ghmcp_runtime.guards.exposure import Surface
from ghmcp_runtime.guards.validation import plain
from ghmcp_runtime.serving.capability_docs import (
    ResourceLine,
    ToolLine,
    error_catalog,
    summary_markdown,
)
from ghmcp_runtime.serving.forge_server import forge_exposure_text, surface_summary

FINGERPRINT_LINE = "\nCapability fingerprint: "


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


@dataclass(frozen=True, slots=True, kw_only=True)
class SurfaceView:
    surface: Surface  # tools and allowlist; its per_request is whichever equal surface came first
    narrowed: bool
    fingerprint: str
    instructions: str
    summary: str  # the capability-summary resource
    errors: str  # the error-catalog resource
    tools: Sequence[Tool]  # tools/list, in the generated order
    templates: tuple[TemplateResource, ...]

    def document(self, content: str) -> str | None:
        return {"summary": self.summary, "errors": self.errors}.get(content)

    def envelope(self, err: ToolError, request_id: str) -> dict[str, Any]:
        """The error envelope on this surface: its fingerprint, and no repair through a tool it
        hides (an agent following it would only meet an unknown tool)."""
        if err.repair is not None and err.repair.get("tool") not in self.surface.tools:
            err.repair = None
        return err.envelope(request_id=request_id, fingerprint=self.fingerprint)


def exposure_text(spec: ServerSpec, surface: Surface, meta: Sequence[str] = ()) -> str:
    """The sentence the summary and instructions add for a narrowed surface (`meta`: the
    --dynamic-toolsets tools, list, show, enable)."""
    if spec.parts or meta:
        text = forge_exposure_text(spec, surface.tools, meta)
    else:
        names = sorted(surface.tools)
        text = (f"Exposure: this endpoint is narrowed by its operator's flags or this request's "
                f"headers. Tools here: {', '.join(names) or 'none'} ({len(names)} of "
                f"{len(spec.tools)}; every other tool named in this summary is absent and unknown "
                f"when called).")
    writes = {t.name for t in spec.tools if not t.annotations.read_only}
    if writes and not writes & surface.tools and not meta:  # enabling may add writes
        text += f" Read-only: no tool here writes to {spec.forge.display_name}."
    if surface.repos is not None:
        allowed = ", ".join(surface.repos.patterns()) or "none"
        text += (f" Repositories: only {allowed} (owner/* is every repository of that owner); "
                 f"any other is refused with repo_not_allowed before anything is sent, "
                 f"searches are confined to these, and rows of other repositories in an answer "
                 f"(sub-issues, blockers) are left out and counted in outside_allowlist (absent when "
                 f"none was).")
    return text


def _fingerprint(base: str, surface: Surface) -> str:
    name = base.rpartition("+")[0] or base
    what = {"base": base, "tools": sorted(surface.tools),
            "repos": list(surface.repos.patterns()) if surface.repos is not None else None}
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode("utf-8")).hexdigest()[:12]
    return f"{name}+{digest}"


class SurfaceViews:
    """The views of one server's surfaces (bounded cache: surfaces come from request headers)."""

    def __init__(self, spec: ServerSpec, meta: Sequence[str] = ()) -> None:
        """`meta`: the --dynamic-toolsets tools (list, show, enable), never part of the whole
        surface, so every surface holding them is described as narrowed."""
        self.spec = spec
        self.meta = tuple(meta)
        self.wire = [(t.name, wire_tool(t)) for t in spec.tools]
        self.full = Surface(frozenset(t.name for t in spec.tools if t.name not in self.meta))
        self.summary = spec.summary or spec.instructions.rsplit(FINGERPRINT_LINE, 1)[0]
        self._users = {t.name: frozenset(t.error_codes) for t in spec.tools}
        self.view = lru_cache(maxsize=256)(self._build)

    def _build(self, surface: Surface) -> SurfaceView:
        spec = self.spec
        narrowed = surface != self.full
        fingerprint = _fingerprint(spec.fingerprint, surface) if narrowed else spec.fingerprint
        exposure = exposure_text(spec, surface, self.meta) if narrowed else None
        summary = surface_summary(spec, surface.tools) if spec.parts else self.summary
        instructions = (f"{summary}\n{exposure}{FINGERPRINT_LINE}{fingerprint}" if exposure
                        else spec.instructions)
        templates = tuple(t for t in spec.templates if t.tool in surface.tools)
        return SurfaceView(
            surface=surface, narrowed=narrowed, fingerprint=fingerprint,
            instructions=instructions,
            summary=summary_markdown(
                title=spec.title, summary=summary, fingerprint=fingerprint,
                tools=[ToolLine(t.name, t.title, t.annotations) for t in spec.tools
                       if t.name in surface.tools],
                resources=[*(ResourceLine(r.uri, r.title, r.description) for r in spec.resources),
                           *(ResourceLine(t.uri_template, t.title, t.description, t.tool)
                             for t in templates)],
                exposure=exposure),
            errors=self._errors(surface, fingerprint),
            tools=[tool for name, tool in self.wire if name in surface.tools],
            templates=templates,
        )

    def _errors(self, surface: Surface, fingerprint: str) -> str:
        codes: list[ErrorCode] = []
        for e in self.spec.error_codes:
            emitters = (e.tools if e.tools is not None
                        else [n for n, used in self._users.items() if e.code in used])
            shown = tuple(sorted(n for n in emitters if n in surface.tools))
            # a code no tool of the whole server emits is one the override file declared: it stays
            if shown or not emitters:
                codes.append(replace(e, tools=shown))
        if surface.repos is not None:
            codes.append(replace(REPO_NOT_ALLOWED, tools=tuple(sorted(surface.tools))))
        return error_catalog(fingerprint=fingerprint, codes=codes, users={})
