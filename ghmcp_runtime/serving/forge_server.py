"""A forge's one server (`github-mcp`, `forgejo-mcp`), made of its per-file servers: every
override file of the forge is one or more toolsets of it (docs/ARCHITECTURE.md).

`forge_server` composes the parts' `ServerSpec`s: their tools (sorted by name), toolsets,
resource templates and error rules, each tool keeping its own part (`ServerSpec.part_of`: shapes
and error rules are the part's). Its capability summary is the forge's own lines, then the
toolsets a surface shows, then each shown part's lines the forge's do not replace (a forge line
`Key: ...` replaces every part line with the same key), so a narrowed surface never describes
a toolset it hides. Imports stay cheap: a forge server's `server.py` calls this at import.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ghmcp_runtime.core.model import ErrorCode, ServerSpec, StaticResource, ToolSpec

FINGERPRINT_LINE = "\nCapability fingerprint: "


def _key(line: str) -> str | None:
    """`Key` of a summary line `Key: text` (a few words before the first colon)."""
    head, sep, _ = line.partition(":")
    return head.strip().lower() if sep and 0 < len(head.split()) <= 4 else None


@dataclass(frozen=True, slots=True)
class ToolsetLine:
    name: str
    description: str
    tools: int  # shown on the surface


def toolsets_line(toolsets: Sequence[ToolsetLine]) -> str:
    shown = "; ".join(f"{t.name} ({t.tools} tool{'s' if t.tools != 1 else ''}): {t.description}"
                      for t in toolsets)
    return f"Toolsets here: {shown or 'none'}"


def composed_summary(own: str, toolsets: Sequence[ToolsetLine],
                     parts: Iterable[tuple[Sequence[str], str]]) -> str:
    """The forge's summary lines, the toolsets shown, then each shown part's lines labelled with
    its toolsets (a line several parts share, once with all their labels), except those whose key
    a forge line has. `parts`: (its toolsets, its summary)."""
    lines = [line for line in own.splitlines() if line.strip()]
    replaced = {k for k in map(_key, lines) if k}
    lines.append(toolsets_line(toolsets))
    labels: dict[str, list[str]] = {}
    for names, summary in parts:
        for line in summary.splitlines():
            if line.strip() and _key(line) not in replaced:
                labels.setdefault(line, []).extend(n for n in names if n not in labels.get(line, ()))
    lines += [f"[{', '.join(names)}] {line}" for line, names in labels.items()]
    return "\n".join(lines)


def surface_summary(spec: ServerSpec, tools: frozenset[str]) -> str:
    """The forge server's summary for a surface showing `tools` (the whole forge: every tool)."""
    counts: dict[str, int] = {}
    for tool in spec.tools:
        if tool.name in tools and tool.toolset is not None:
            counts[tool.toolset] = counts.get(tool.toolset, 0) + 1
    shown = [ToolsetLine(name, text, counts[name]) for name, text in spec.toolsets.items()
             if name in counts]
    parts = [(tuple(n for n in part.toolsets if n in counts), part.summary) for part in spec.parts
             if any(t.name in tools for t in part.tools)]
    return composed_summary(spec.summary, shown, parts)


def forge_server(
    *,
    name: str,
    title: str,
    version: str,
    fingerprint: str,
    summary: str,
    parts: Sequence[ServerSpec],
    default_toolsets: Sequence[str],
    resources: Sequence[StaticResource],
    error_codes: Sequence[ErrorCode],
    inputs: Mapping[str, Mapping[str, tuple[str, ...]]],
) -> ServerSpec:
    """One server over `parts` (every per-file server of one forge, in file order)."""
    if not parts:
        raise ValueError(f"{name}: a forge server needs at least one per-file server")
    first = parts[0]
    tools: list[ToolSpec] = sorted((t for p in parts for t in p.tools), key=lambda t: t.name)
    clash = sorted(n for n, c in Counter(t.name for t in tools).items() if c > 1)
    if clash:  # the generator refuses this; a hand-assembled server must not shadow a tool
        raise ValueError(f"{name}: tool {clash[0]} is declared by two per-file servers")
    spec = ServerSpec(
        name=name, title=title, version=version, fingerprint=fingerprint, instructions="",
        tools=tuple(tools), error_codes=tuple(error_codes),
        shapes={}, resources=tuple(resources),
        templates=tuple(t for p in parts for t in p.templates),
        summary=summary, toolsets={k: v for p in parts for k, v in p.toolsets.items()},
        forge=first.forge, api_version=first.api_version, parts=tuple(parts),
        default_toolsets=tuple(default_toolsets), inputs=inputs,
    )
    full = surface_summary(spec, frozenset(t.name for t in tools))
    return replace(spec, instructions=full + FINGERPRINT_LINE + fingerprint)


def missing_inputs(spec: ServerSpec, tools: frozenset[str]) -> list[str]:
    """Sentences for each tool shown whose identifier comes only from tools not shown (the
    toolsets to add named): an agent given only it could not find the value it must pass."""
    toolset_of = {t.name: t.toolset for t in spec.tools}
    out = []
    for tool in sorted(tools):
        for param, producers in spec.inputs.get(tool, {}).items():
            if producers and not set(producers) & tools:
                sets = sorted({toolset_of[p] or p for p in producers})
                out.append(f"{tool} takes {param}, which only toolset{'s' * (len(sets) > 1)} "
                           f"{' or '.join(sets)} return{'s' * (len(sets) == 1)}")
    return out


def forge_exposure_text(spec: ServerSpec, tools: frozenset[str], meta: Sequence[str] = ()) -> str:
    """What a narrowed surface shows, by toolset; what it leaves out and how to get it (`meta`:
    the --dynamic-toolsets tools: list, show, enable); and the tools whose identifiers only a
    toolset it leaves out returns."""
    members: dict[str, list[str]] = {name: [] for name in spec.toolsets}
    for tool in spec.tools:
        if tool.toolset is not None:
            members[tool.toolset].append(tool.name)
    whole = [n for n, m in members.items() if m and set(m) <= tools]
    some = {n: sorted(set(m) & tools) for n, m in members.items() if n not in whole and set(m) & tools}
    absent = [n for n, m in members.items() if not set(m) & tools]
    shown = [f"every tool of toolset{'s' * (len(whole) > 1)} {', '.join(whole)}"] if whole else []
    shown += [f"{', '.join(names)} of {name}" for name, names in some.items()]
    counted = [t.name for t in spec.tools if t.toolset is not None]
    why = ("the toolsets enabled so far" if meta
           else "its operator's flags, or this request's headers")
    text = (f"Exposure: this endpoint serves part of {spec.name} ({why}). Tools here: "
            f"{'; '.join(shown) or 'none'} "
            f"({len(tools & set(counted))} of {len(counted)}; any other tool named in this summary "
            f"is absent and unknown when called).")
    if meta:
        list_tool, _, enable_tool = meta
        text += (f" Dynamic toolsets: {list_tool} lists every toolset, {enable_tool} enables "
                 f"some (their tools then join tools/list; over HTTP send the X-MCP-Toolsets "
                 f"header it returns).")
        if absent:
            text += f" Not enabled: {', '.join(absent)}."
    elif absent:
        text += (f" Toolsets not here: {', '.join(absent)} (the operator's --toolsets, or the "
                 f"X-MCP-Toolsets header over HTTP, adds them).")
    missing = missing_inputs(spec, tools)
    if missing:
        text += f" Inputs from elsewhere: {'; '.join(missing)}."
    return text
