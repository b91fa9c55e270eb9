"""What one override file is to its forge: the facts the checks that span a forge, the other files'
composability and the forge server's package read of it (generator/pipeline/forge_server.py), without
its IR. A `Part` is derived from the built IR, and round-trips through JSON, so a file whose
inputs did not change contributes to its forge from the result cache (generator/pipeline/result_cache.py)
without being parsed, built or linted again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from generator.base.diagnostics import Where
from generator.base.yamlsrc import Located
from generator.build.field_notes import explain_fields
from generator.build.ir import IRServer
from generator.build.wire import fingerprint, wire_tool
from generator.language.overrides import OverrideFile
from generator.lint.breaking import publish_renames
from generator.lint.compose import identifier_params, output_fields
from ghmcp_runtime.core.model import Annotations
from ghmcp_runtime.core.token_scopes import ToolScopes


@dataclass(frozen=True, slots=True)
class PartTool:
    name: str
    title: str
    toolset: str | None
    wire: dict[str, Any]  # exactly as tools/list publishes it
    fields: tuple[str, ...]  # every property name of its success output, at any depth
    ids: tuple[str, ...]  # its identifier parameters (generator/lint/compose.py)
    error_codes: tuple[str, ...]
    where: Where


@dataclass(frozen=True, slots=True)
class PartCode:
    code: str
    temporary: bool
    description: str
    repair: str
    tools: tuple[str, ...]
    where: Where


@dataclass(frozen=True, slots=True)
class PartTemplate:
    uri_template: str
    title: str
    description: str
    tool: str
    where: Where


@dataclass(frozen=True, slots=True)
class Part:
    overrides_file: str
    name: str
    package: str
    version: str
    forge: str
    api_version: str | None
    summary: str  # as published (declared breaking changes appended)
    fingerprint: str
    toolsets: tuple[tuple[str, str, Where], ...]  # (name, what its tools do, where declared)
    tools: tuple[PartTool, ...]
    templates: tuple[PartTemplate, ...]
    error_codes: tuple[PartCode, ...]
    server_where: Where
    api_version_where: Where
    # what each operation the file's tools call needs of a token, as declared (ToolScopes.meta())
    scopes: tuple[tuple[str, dict[str, Any], Where], ...] = ()


def part_of(server: IRServer, overrides: OverrideFile, located: Located) -> Part:
    """The facts of a built override file (before lint: what its forge needs of it)."""
    published = explain_fields(publish_renames(server, overrides))
    wire = [wire_tool(t) for t in server.tools]
    return Part(
        overrides_file=server.overrides_file, name=server.name, package=server.package,
        version=server.version, forge=server.forge, api_version=server.api_version,
        summary=published.summary, fingerprint=fingerprint(published, {"tools": wire}),
        toolsets=tuple((name, text, located.where(("toolsets", name))) for name, text in server.toolsets),
        tools=tuple(PartTool(name=t.name, title=t.title, toolset=t.toolset, wire=w,
                             fields=tuple(sorted(set(output_fields(t.success_schema)))),
                             ids=tuple(identifier_params(t)), error_codes=tuple(t.error_codes),
                             where=t.where)
                    for t, w in zip(server.tools, wire, strict=True)),
        templates=tuple(PartTemplate(t.uri_template, t.title, t.description, t.tool,
                                     located.where(("resource_templates", i, "uri_template")))
                        for i, t in enumerate(server.templates)),
        error_codes=tuple(PartCode(e.code, e.temporary, e.description, e.repair, tuple(e.tools),
                                   located.where(("error_codes", e.code)))
                          for e in server.error_codes),
        server_where=located.where(("server",)),
        api_version_where=located.where(("server", "api_version")),
        scopes=tuple((op_id, scopes.meta(), located.where(("scopes", op_id)))
                     for op_id, scopes in server.operation_scopes),
    )


def tool_scopes(tool: PartTool) -> ToolScopes:
    """What a part's tool needs of a token (what its `_meta` publishes)."""
    return ToolScopes.of(tool.wire.get("_meta", {})) or ToolScopes()


def annotations_of(tool: PartTool) -> Annotations:
    """The runtime's Annotations of a part's tool (from the hints it publishes)."""
    hints = tool.wire["annotations"]
    return Annotations(read_only=hints["readOnlyHint"], open_world=hints["openWorldHint"],
                       destructive=hints.get("destructiveHint"), idempotent=hints.get("idempotentHint"))


# -- JSON ------------------------------------------------------------------------------------------


def _where(w: Where) -> list[Any]:
    return [w.file, w.line, w.col]


def _from_where(data: list[Any]) -> Where:
    return Where(data[0], data[1], data[2])


def to_json(part: Part) -> str:
    return json.dumps({
        "overrides_file": part.overrides_file, "name": part.name, "package": part.package,
        "version": part.version, "forge": part.forge, "api_version": part.api_version,
        "summary": part.summary, "fingerprint": part.fingerprint,
        "toolsets": [[n, d, _where(w)] for n, d, w in part.toolsets],
        "tools": [{"name": t.name, "title": t.title, "toolset": t.toolset, "wire": t.wire,
                   "fields": list(t.fields), "ids": list(t.ids), "error_codes": list(t.error_codes),
                   "where": _where(t.where)} for t in part.tools],
        "templates": [[t.uri_template, t.title, t.description, t.tool, _where(t.where)]
                      for t in part.templates],
        "error_codes": [[c.code, c.temporary, c.description, c.repair, list(c.tools), _where(c.where)]
                        for c in part.error_codes],
        "server_where": _where(part.server_where), "api_version_where": _where(part.api_version_where),
        "scopes": [[op_id, meta, _where(w)] for op_id, meta, w in part.scopes],
    }, sort_keys=True, ensure_ascii=False)


def from_json(text: str) -> Part:
    d = json.loads(text)
    return Part(
        overrides_file=d["overrides_file"], name=d["name"], package=d["package"], version=d["version"],
        forge=d["forge"], api_version=d["api_version"], summary=d["summary"], fingerprint=d["fingerprint"],
        toolsets=tuple((n, t, _from_where(w)) for n, t, w in d["toolsets"]),
        tools=tuple(PartTool(name=t["name"], title=t["title"], toolset=t["toolset"], wire=t["wire"],
                             fields=tuple(t["fields"]), ids=tuple(t["ids"]),
                             error_codes=tuple(t["error_codes"]), where=_from_where(t["where"]))
                    for t in d["tools"]),
        templates=tuple(PartTemplate(u, ti, de, to, _from_where(w)) for u, ti, de, to, w in d["templates"]),
        error_codes=tuple(PartCode(c, te, de, r, tuple(tl), _from_where(w))
                          for c, te, de, r, tl, w in d["error_codes"]),
        server_where=_from_where(d["server_where"]), api_version_where=_from_where(d["api_version_where"]),
        scopes=tuple((op_id, meta, _from_where(w)) for op_id, meta, w in d.get("scopes", [])),
    )
