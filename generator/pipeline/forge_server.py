"""One server per forge (`github-mcp`, `forgejo-mcp`): every override file of a forge is one or
more toolsets of it (docs/ARCHITECTURE.md, "One server per forge").

What spans a forge's override files is checked here, once all of them are built: tool, toolset
and resource-template names are unique across the forge (a clash is refused where the second
file declares it), the files agree on the API version they send, and with a forge file
(`overrides/forges/<forge>.yaml`) its default toolsets exist and its budget on what a model reads
of them holds. Composability is lint's rule, run per file with the forge's other files as peers.

The forge's package is thin: it depends on the per-file servers' distributions and composes their
`ServerSpec`s at import (`ghmcp_runtime.serving.forge_server`), so no generated code is written
twice; beside it the generator writes the forge's capability summary, error catalog and a
toolset index (TOOLS.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from generator import NAME, __version__
from generator.base.diagnostics import Diagnostic, Level, Where, closest
from generator.base.yamlsrc import Located
from generator.build.wire import canonical, compact_bytes, model_visible
from generator.language.forge_file import ForgeFile
from generator.lint.compose import providers
from generator.packaging.registry_entry import one_line_description
from generator.packaging.requirements import Packaging, distribution_problems
from generator.pipeline.forge_part import Part, PartTool, annotations_of, tool_scopes
from generator.render.files import FileMap, distribution_files, environment, format_python
from ghmcp_runtime.core.forges import FORGES
from ghmcp_runtime.core.model import ErrorCode
from ghmcp_runtime.core.token_scopes import ToolScopes, combined
from ghmcp_runtime.serving import capability_docs
from ghmcp_runtime.serving.capability_docs import ResourceLine, ToolLine
from ghmcp_runtime.serving.forge_server import ToolsetLine, composed_summary


@dataclass(frozen=True, slots=True)
class ForgeDecl:
    """A parsed forge file."""

    file: ForgeFile
    located: Located
    display: str  # repository-relative path
    text: str

    @property
    def forge(self) -> str:
        return self.file.server.forge


def _error(where: Where, message: str, hint: str, rule: str = "forge") -> Diagnostic:
    return Diagnostic(Level.ERROR, where, message, hint, rule)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def forge_checks(forge: str, parts: Sequence[Part], decl: ForgeDecl | None) -> list[Diagnostic]:
    """What spans the override files of `forge` (in file order): names, API version, and the
    forge file's own declarations against them."""
    problems: list[Diagnostic] = []
    shown = FORGES[forge].display_name if forge in FORGES else forge
    owner = decl.file.server.name if decl else f"the {shown} server"
    first_tool: dict[str, Where] = {}
    first_toolset: dict[str, Where] = {}
    first_template: dict[str, Where] = {}
    for part in parts:
        for tool in part.tools:
            if tool.name in first_tool:
                problems.append(_error(tool.where, f"tool {tool.name} is also declared at "
                                       f"{first_tool[tool.name]}: tool names are unique across {owner}",
                                       "rename one of them (keep the forge's tool prefix)"))
            first_tool.setdefault(tool.name, tool.where)
        for name, _, where in part.toolsets:
            if name in first_toolset:
                problems.append(_error(where, f"toolset {name} is also declared at "
                                       f"{first_toolset[name]}: toolset names are unique across {owner}",
                                       "rename one, or move the tools into the file that declares it"))
            first_toolset.setdefault(name, where)
        for template in part.templates:
            if template.uri_template in first_template:
                problems.append(_error(template.where, f"resource template {template.uri_template} is "
                                       f"also declared at {first_template[template.uri_template]}",
                                       f"resource templates are unique across {owner}: pick another URI"))
            first_template.setdefault(template.uri_template, template.where)
    later = next((p for p in parts if p.api_version != parts[0].api_version), None)
    if later is not None:
        problems.append(_error(later.api_version_where,
                               f"the override files of {shown} send different API versions "
                               f"({', '.join(sorted({str(p.api_version) for p in parts}))})",
                               f"one server sends one version header: give every {shown} file the same "
                               "server.api_version"))
    problems += _code_clashes(parts)
    problems += _scope_clashes(parts)
    if decl is not None:
        problems += _decl_checks(decl, parts, first_toolset)
    return problems


def _scope_clashes(parts: Sequence[Part]) -> list[Diagnostic]:
    """Two files declaring one operation's scopes differently would publish two requirements for
    the same request: the forge's server must say one thing."""
    seen: dict[str, tuple[Any, str]] = {}
    out = []
    for part in parts:
        for op_id, declared, where in part.scopes:
            if op_id in seen and seen[op_id][0] != declared:
                out.append(_error(where, f"scopes: {op_id} is declared otherwise in {seen[op_id][1]}",
                                  "an operation needs the same of a token in every file: make the "
                                  "declarations equal", rule="scopes"))
            seen.setdefault(op_id, (declared, part.overrides_file))
    return out


def _code_clashes(parts: Sequence[Part]) -> list[Diagnostic]:
    """A code temporary in one file and not in another would give one server two meanings."""
    seen: dict[str, tuple[bool, str]] = {}
    out = []
    for part in parts:
        for code in part.error_codes:
            if code.code in seen and seen[code.code][0] != code.temporary:
                out.append(_error(code.where, f"error code {code.code} is temporary={code.temporary} "
                                  f"here and temporary={seen[code.code][0]} in {seen[code.code][1]}",
                                  "a code means one thing across the forge's server: rename one"))
            seen.setdefault(code.code, (code.temporary, part.overrides_file))
    return out


def _decl_checks(decl: ForgeDecl, parts: Sequence[Part],
                 toolsets: Mapping[str, Where]) -> list[Diagnostic]:
    s = decl.file.server
    at = decl.located.where
    out = [_error(at(("server", key)), message, hint)
           for key, message, hint in distribution_problems(s.name, s.version)]
    for i, name in enumerate(decl.file.default_toolsets):
        if name not in toolsets:
            guess = closest(name, list(toolsets))
            out.append(_error(at(("default_toolsets", i)),
                              f"default toolset {name!r} is not a toolset of any {s.forge} override file",
                              f"did you mean {guess!r}?" if guess else
                              f"one of: {', '.join(toolsets) or 'none declared'}"))
    for part in parts:
        if not part.toolsets:
            out.append(_error(part.server_where, f"{part.name} declares no toolsets, so {s.name} could "
                              "not select its tools", "declare `toolsets:` and name one in every tool"))
        if part.package == s.package or part.name == s.name:
            out.append(_error(at(("server", "package")), f"{s.name} ({s.package}) takes the name "
                              f"of the override file {part.overrides_file}'s server",
                              "give the forge server a name and package of its own"))
    budget = s.model_budget_bytes
    if budget is not None and not any(p.level is Level.ERROR for p in out):
        default = set(decl.file.default_toolsets)
        tools = [t.wire for p in parts for t in p.tools if t.toolset in default]
        size = compact_bytes(model_visible(tools))
        if size > budget:
            out.append(_error(at(("server", "model_budget_bytes")), f"the default toolsets' "
                              f"model-visible tools/list (name, description, inputSchema) is {size:,} "
                              f"bytes ({len(tools)} tools), over the budget of {budget:,}",
                              "take a toolset out of default_toolsets, shorten its tools, or raise "
                              "server.model_budget_bytes deliberately", "budget-model"))
    return out


# -- the forge package -------------------------------------------------------------------------


def cross_toolset_inputs(parts: Sequence[Part]) -> dict[str, dict[str, tuple[str, ...]]]:
    """tool -> identifier parameter -> the tools returning it, for the identifiers no tool of the
    tool's own toolset returns: selecting its toolset alone would leave the agent without them."""
    tools = [t for p in parts for t in p.tools]
    toolset = {t.name: t.toolset for t in tools}
    fields = {t.name: t.fields for t in tools}
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for part in parts:
        own = {t.name for t in part.tools}
        for tool in part.tools:
            found = providers(tool.name, tool.ids, fields, own)
            needs = {param: tuple(found[param]) for param in tool.ids
                     if found[param] and all(toolset[p] != tool.toolset for p in found[param])}
            if needs:
                out[tool.name] = needs
    return dict(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class _Toolset:
    name: str
    description: str
    part: Part
    tools: tuple[PartTool, ...]
    default: bool

    @property
    def model_bytes(self) -> int:
        """What a model reads of its tools (name, description, inputSchema)."""
        return compact_bytes(model_visible([t.wire for t in self.tools]))

    @property
    def wire_bytes(self) -> int:
        return compact_bytes({"tools": [t.wire for t in self.tools]})

    @property
    def scopes(self) -> ToolScopes:
        """What a token needs to use every tool of the toolset."""
        return combined((tool_scopes(t) for t in self.tools), FORGES[self.part.forge].scopes)


def _toolsets(parts: Sequence[Part], default: Sequence[str]) -> list[_Toolset]:
    return [_Toolset(name, text, p, tuple(t for t in p.tools if t.toolset == name), name in default)
            for p in parts for name, text, _ in p.toolsets]


def _totals(toolsets: Sequence[_Toolset]) -> list[tuple[str, tuple[int, int, int], ToolScopes]]:
    """(label, (tools, model-visible bytes, tools/list bytes), token scopes) of the default set
    and of all."""
    out = []
    for label, chosen in (("default set", [t for t in toolsets if t.default]), ("all", toolsets)):
        tools = [tool.wire for t in chosen for tool in t.tools]
        model = FORGES[chosen[0].part.forge].scopes if chosen else None
        needs = combined((t.scopes for t in chosen), model) if model else ToolScopes()
        out.append((label, (len(tools), compact_bytes(model_visible(tools)),
                            compact_bytes({"tools": tools})), needs))
    return out


def forge_summary(decl: ForgeDecl, parts: Sequence[Part]) -> str:
    """The whole forge surface's summary, as the runtime composes it (serving.forge_server)."""
    toolsets = [ToolsetLine(t.name, t.description, len(t.tools))
                for t in _toolsets(parts, ()) if t.tools]
    return composed_summary(decl.file.server.summary, toolsets,
                            [(tuple(n for n, _, _ in p.toolsets), p.summary) for p in parts])


def merged_codes(parts: Sequence[Part]) -> list[ErrorCode]:
    """The forge's error catalog: one entry per distinct wording of a code, with its tools."""
    entries: dict[tuple[str, bool, str, str], set[str]] = {}
    for part in parts:
        for e in part.error_codes:
            entries.setdefault((e.code, e.temporary, e.description, e.repair), set()).update(e.tools)
    return [ErrorCode(code=c, temporary=t, description=d, repair=r, tools=tuple(sorted(tools)))
            for (c, t, d, r), tools in entries.items()]


def render_forge(decl: ForgeDecl, parts: Sequence[Part], packaging: Packaging) -> FileMap:
    """The forge's package: server.py composing the per-file servers, its documents, pyproject."""
    s = decl.file.server
    summary = forge_summary(decl, parts)
    codes = merged_codes(parts)
    inputs = cross_toolset_inputs(parts)
    surface = {"parts": [p.fingerprint for p in parts], "summary": summary,
               "default_toolsets": decl.file.default_toolsets,
               "resources": [r.model_dump() for r in decl.file.resources], "inputs": inputs,
               "error_codes": [[e.code, e.temporary, e.description, e.repair, list(e.tools or ())]
                               for e in codes]}
    fp = f"{s.name}@{s.version}+{sha256_text(canonical(surface))[:12]}"
    tools = sorted((t for p in parts for t in p.tools), key=lambda t: t.name)
    toolsets = _toolsets(parts, decl.file.default_toolsets)
    env = environment()
    context: dict[str, Any] = {
        "generator": NAME, "overrides_file": decl.display, "server": s, "decl": decl.file,
        "default_toolsets": tuple(decl.file.default_toolsets),
        "imports": sorted([("ghmcp_runtime.core.model", "StaticResource"),
                           ("ghmcp_runtime.serving.forge_server", "forge_server"),
                           ("ghmcp_runtime.serving.package_data", "PackageData"),
                           *((f"{p.package}.server", f"SERVER as {p.package.upper()}") for p in parts)]),
        "forge": FORGES[s.forge].display_name, "parts": parts, "fingerprint": fp,
        "private_scope": FORGES[s.forge].scopes.private_scope,
        "inputs": inputs, "toolsets": toolsets, "totals": _totals(toolsets),
        "tool_bytes": {t.name: compact_bytes(model_visible([t.wire])[0]) for t in tools},
        "tool_hints": {t.name: capability_docs.hints(annotations_of(t)) for t in tools},
        "overrides_files": [p.overrides_file for p in parts],
    }
    pkg = s.package
    files: FileMap = {}
    for template, target in (("package_init.py.jinja", f"{pkg}/__init__.py"),
                             ("main.py.jinja", f"{pkg}/__main__.py"),
                             ("forge_server.py.jinja", f"{pkg}/server.py")):
        files[target] = format_python(env.get_template(template).render(**context), template)
    files[f"{pkg}/py.typed"] = ""
    files[f"{pkg}/summary.md"] = capability_docs.summary_markdown(
        title=s.title, summary=summary, fingerprint=fp,
        tools=[ToolLine(t.name, t.title, annotations_of(t)) for t in tools],
        resources=[*(ResourceLine(r.uri, r.title, r.description.strip()) for r in decl.file.resources),
                   *(ResourceLine(t.uri_template, t.title, t.description, t.tool)
                     for p in parts for t in p.templates)])
    files[f"{pkg}/errors.json"] = capability_docs.error_catalog(fingerprint=fp, codes=codes, users={})
    files[f"{pkg}/TOOLS.md"] = env.get_template("forge_TOOLS.md.jinja").render(**context)
    requirements = sorted({packaging.runtime_pin, *(f"{p.name}=={p.version}" for p in parts)},
                          key=str.lower)
    files.update(distribution_files(env, context, description=one_line_description(s.description, s.title),
                                    forge=s.forge, packaging=packaging, requirements=requirements))
    files[f"{pkg}/MANIFEST.json"] = json.dumps({
        "fingerprint": fp,
        "generator": {"name": NAME, "version": __version__},
        "forge_file": {"file": decl.display, "sha256": sha256_text(decl.text)},
        "parts": {p.package: p.fingerprint for p in parts},
        "files": {path.split("/", 1)[1]: sha256_text(text) for path, text in sorted(files.items())},
        "tools": len(tools),
    }, indent=2, sort_keys=True) + "\n"
    return files


def forge_table(decl: ForgeDecl, parts: Sequence[Part], out: TextIO) -> None:
    """`make generate`'s summary of a forge server: its toolsets' bytes, the default set's and
    all of them, against the forge file's budget on what a model reads of the default set."""
    s = decl.file.server
    toolsets = _toolsets(parts, decl.file.default_toolsets)
    print(f"{s.name} ({s.package}): {len(toolsets)} toolsets from {len(parts)} override file(s)",
          file=out)
    print(f"{'toolset':<28} {'tools':>5} {'model-visible':>13} {'tools/list':>10}  default", file=out)
    for t in toolsets:
        print(f"{t.name:<28} {len(t.tools):>5} {t.model_bytes:>13} {t.wire_bytes:>10}  "
              f"{'yes' if t.default else ''}", file=out)
    for label, (count, seen, wire), _ in _totals(toolsets):
        budget = s.model_budget_bytes if label == "default set" else None
        note = f"  budget {budget} ({100 * seen // budget}%)" if budget else ""
        print(f"{label:<28} {count:>5} {seen:>13} {wire:>10}{note}", file=out)
