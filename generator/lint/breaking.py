"""Breaking changes of the wire surface against the committed tools.json; refused unless declared."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.base.diagnostics import Diagnostic, Level, Where
from generator.base.yamlsrc import Located
from generator.build.ir import IRServer
from generator.build.wire import wire_tool
from generator.language.overrides import BreakingChange, OverrideFile
from generator.spec.schemas import schema_types

UPPER = ("maxLength", "maxItems", "maximum", "exclusiveMaximum")
LOWER = ("minLength", "minItems", "minimum", "exclusiveMinimum")
RULE = "breaking-change"
Wire = Mapping[str, Any]


@dataclass(frozen=True, slots=True, order=True)
class Change:
    tool: str
    kind: str
    field: str
    detail: str

    def line(self) -> str:
        field = f" {self.field}" if self.field else ""
        return f"{self.tool}: {self.kind}{field} ({self.detail})"


def show_types(types: set[str]) -> str:
    return "|".join(sorted(types)) or "any"


def join_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _input(tool: str, old: Wire, new: Wire, path: str) -> Iterator[Change]:
    """Changes that can reject arguments the old schema accepted."""
    before, after = schema_types(old), schema_types(new)
    if before and after and not before <= after:
        yield Change(tool, "narrowed-type", path, f"{show_types(before)} -> {show_types(after)}")
    if "enum" in new:
        if "enum" not in old:
            yield Change(tool, "narrowed-enum", path, f"now limited to {json.dumps(new['enum'])}")
        else:
            gone = [v for v in old["enum"] if v not in new["enum"]]
            if gone:
                yield Change(tool, "narrowed-enum", path, f"no longer accepts {json.dumps(gone)}")
    for key in (*UPPER, *LOWER):
        was, now = old.get(key), new.get(key)
        if now is not None and (was is None or (now < was if key in UPPER else now > was)):
            yield Change(tool, "narrowed-bound", path, f"{key} {was if was is not None else 'none'} -> {now}")
    for key in ("pattern", "format"):
        if new.get(key) is not None and new.get(key) != old.get(key):
            yield Change(tool, "narrowed-bound", path, f"{key} {json.dumps(old.get(key))} -> "
                                                      f"{json.dumps(new[key])}")
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        yield from _input(tool, old["items"], new["items"], f"{path}[]")
    props_old, props_new = old.get("properties", {}), new.get("properties", {})
    for name in sorted(props_old):
        if name not in props_new:
            yield Change(tool, "removed-property", join_path(path, name),
                         f"was {show_types(schema_types(props_old[name]))}")
        else:
            yield from _input(tool, props_old[name], props_new[name], join_path(path, name))
    was_required = set(old.get("required", []))
    for name in new.get("required", []):
        if name not in was_required:
            state = "was optional" if name in props_old else "new and required"
            yield Change(tool, "newly-required", join_path(path, name), state)


def _output(tool: str, old: Wire, new: Wire, path: str) -> Iterator[Change]:
    """Changes that can surprise a client reading results shaped by the old schema."""
    before, after = schema_types(old), schema_types(new)
    if before and after and not after <= before:
        yield Change(tool, "retyped-output-field", path or "/", f"{show_types(before)} -> {show_types(after)}")
    if "enum" in old and "enum" in new:
        added = [v for v in new["enum"] if v not in old["enum"]]
        if added:
            yield Change(tool, "retyped-output-field", path or "/", f"may now be {json.dumps(added)}")
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        yield from _output(tool, old["items"], new["items"], f"{path}[]")
    props_old, props_new = old.get("properties", {}), new.get("properties", {})
    now_required = set(new.get("required", []))
    for name in sorted(props_old):
        if name not in props_new and name in now_required:
            continue  # still always present, now of any type: nothing a reader relied on is gone
        if name not in props_new:
            yield Change(tool, "removed-output-field", join_path(path, name),
                         f"was {show_types(schema_types(props_old[name]))}")
            continue
        if name in old.get("required", []) and name not in now_required:
            yield Change(tool, "optional-output-field", join_path(path, name), "was always present")
        yield from _output(tool, props_old[name], props_new[name], join_path(path, name))


def output_branches(schema: Wire) -> dict[str, Wire]:
    """The success payload and the error envelope of an outputSchema, by label."""
    out: dict[str, Wire] = {}
    for branch in schema.get("oneOf", [schema]):
        names = {*branch.get("properties", {}), *branch.get("required", [])}
        label = "error" if "code" in names and "temporary" in names else ""
        out.setdefault(label, branch)
    return out


def _annotations(tool: str, old: Wire, new: Wire) -> Iterator[Change]:
    if old.get("readOnlyHint") is True and new.get("readOnlyHint") is not True:
        yield Change(tool, "changed-annotations", "readOnlyHint", "true -> false")
    if old.get("destructiveHint") is not True and new.get("destructiveHint") is True:
        yield Change(tool, "changed-annotations", "destructiveHint", "now true")
    if old.get("idempotentHint") is True and new.get("idempotentHint") is not True:
        yield Change(tool, "changed-annotations", "idempotentHint", "true -> false")


def _tool(name: str, old: Wire, new: Wire) -> Iterator[Change]:
    yield from _input(name, old.get("inputSchema", {}), new.get("inputSchema", {}), "")
    before, after = output_branches(old.get("outputSchema", {})), output_branches(new.get("outputSchema", {}))
    for label in sorted(before.keys() & after.keys()):
        yield from _output(name, before[label], after[label], label)
    yield from _annotations(name, old.get("annotations", {}), new.get("annotations", {}))


def diff_surfaces(old: Sequence[Wire], new: Sequence[Wire],
                  old_codes: Mapping[str, Sequence[str]] | None,
                  new_codes: Mapping[str, Sequence[str]],
                  renames: Mapping[str, str]) -> list[Change]:
    """Every breaking change from `old` to `new`; `renames` maps old names to new ones."""
    before = {t["name"]: t for t in old}
    after = {t["name"]: t for t in new}
    changes: list[Change] = []
    for name in sorted(before):
        target = name if name in after else renames.get(name)
        if target is None or target not in after:
            changes.append(Change(name, "removed-tool", "", "no longer listed"))
            continue
        if target != name:
            changes.append(Change(name, "renamed-tool", "", f"now {target}"))
        changes.extend(_tool(target, before[name], after[target]))
        if old_codes is not None:
            gone = sorted(set(old_codes.get(name, ())) - set(new_codes.get(target, ())))
            changes.extend(Change(target, "removed-error-code", code, "no longer emitted")
                           for code in gone)
    return sorted(set(changes))


def declaration_for(change: Change, declarations: Sequence[BreakingChange]) -> BreakingChange | None:
    for decl in declarations:
        if decl.kind == change.kind and decl.tool == change.tool \
                and decl.field in (None, change.field):
            return decl
    return None


def check_breaking(server: IRServer, overrides: OverrideFile, located: Located,
                   baseline: Mapping[str, str]) -> tuple[list[Diagnostic], list[str]]:
    """Undeclared breaking changes as errors, and the declared ones as report lines."""
    key = f"{server.package}/tools.json"
    if key not in baseline:
        return [], []
    try:
        old = json.loads(baseline[key])["tools"]
        manifest = json.loads(baseline.get(f"{server.package}/MANIFEST.json", "{}"))
    except (ValueError, KeyError, TypeError) as exc:
        return [Diagnostic(Level.ERROR, Where(located.file), f"the committed {key} does not parse: {exc}",
                           "restore it from version control (never edit generated/ by hand)", RULE)], []
    names = {t.name for t in server.tools}
    renames: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for i, tool in enumerate(overrides.tools):
        if tool.renamed_from is None:
            continue
        if tool.renamed_from in names:
            problems.append(Diagnostic(Level.ERROR, located.where(("tools", i, "renamed_from")),
                                       f"{tool.name}: renamed_from names {tool.renamed_from}, which is "
                                       "still a tool", "drop renamed_from or the old tool", RULE))
        renames[tool.renamed_from] = tool.name
    for i, meaning in enumerate(overrides.breaking_changes):
        if meaning.kind == "changed-meaning" and meaning.tool not in names:
            problems.append(Diagnostic(Level.ERROR, located.where(("breaking_changes", i, "tool")),
                                       f"changed-meaning names {meaning.tool}, which is not a tool",
                                       "a change of meaning is published for a current tool", RULE))
    codes = manifest.get("error_codes") if isinstance(manifest, dict) else None
    changes = diff_surfaces(old, [wire_tool(t) for t in server.tools], codes,
                            {t.name: t.error_codes for t in server.tools}, renames)
    index = {t.name: i for i, t in enumerate(overrides.tools)}
    notes: list[str] = []
    undeclared: list[Change] = []
    for change in changes:
        if change.kind == "renamed-tool":
            notes.append(f"renamed: {change.line()}")
            continue
        decl = declaration_for(change, overrides.breaking_changes)
        if decl is None:
            undeclared.append(change)
        else:
            notes.append(f"declared: {change.line()}: {decl.reason.strip()}")
    if undeclared:
        anchor = ("breaking_changes",) if "breaking_changes" in located.data else ()
        problems.append(Diagnostic(
            Level.ERROR, located.where(anchor) if anchor else Where(located.file),
            f"{len(undeclared)} undeclared breaking change(s) against the committed {key}",
            "declare each accepted one under breaking_changes: [{kind, tool, field, reason}] "
            "(a rename: renamed_from on the tool), or undo it", RULE))
    for change in undeclared:
        where = located.where(("tools", index[change.tool])) if change.tool in index \
            else located.where(("tools",))
        problems.append(Diagnostic(Level.ERROR, where, change.line(), "", RULE))
    return problems, notes


def publish_renames(server: IRServer, overrides: OverrideFile) -> IRServer:
    """Append renamed tools, and declared changes of meaning no schema shows, to the capability
    summary (the instructions agents read)."""
    lines = []
    renamed = sorted((t.renamed_from, t.name) for t in overrides.tools if t.renamed_from)
    if renamed:
        lines.append("Renamed tools (old name -> new name): "
                     + "; ".join(f"{a} -> {b}" for a, b in renamed) + ".")
    meanings = [c for c in overrides.breaking_changes if c.kind == "changed-meaning"]
    if meanings:
        lines.append("Changed meanings: " + "; ".join(
            f"{c.tool}{' ' + c.field if c.field else ''}: {c.reason.strip().rstrip('.')}" for c in meanings) + ".")
    if not lines:
        return server
    return dataclasses.replace(server, summary="\n".join([server.summary, *lines]))
