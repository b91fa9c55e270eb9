"""The reviewer's Markdown: what a change does to each server's published tool surface.

Pure: two sides (the committed review artifacts at a base ref and in the working tree), the head's
declarations and lint findings in, Markdown and the undeclared-breaking-change flag out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from generator.base.diagnostics import Diagnostic
from generator.build.wire import compact_bytes
from generator.language.overrides import BreakingChange
from generator.lint.breaking import (
    LOWER,
    UPPER,
    Change,
    declaration_for,
    diff_surfaces,
    join_path,
    output_branches,
    show_types,
)
from generator.review.contract import (
    Facts,
    code,
    schema_lines,
    server_lines,
    tool_changes,
    tool_lines,
)
from generator.spec.schemas import schema_types

Wire = Mapping[str, Any]
BOUNDS = (*UPPER, *LOWER, "pattern", "format", "multipleOf", "minProperties", "maxProperties",
          "uniqueItems")
KIND_ORDER = ("property", "required", "type", "enum", "bound", "annotation", "error code", "endpoint",
              "error mapping", "confirmation", "idempotency", "scopes", "title", "description", "other")
ABSENT = object()


@dataclass(frozen=True, slots=True)
class Surface:
    """One server's published surface: `tools.json` by tool name, error codes from `errors.json`."""

    tools: Mapping[str, Wire]
    codes: Mapping[str, tuple[str, ...]] | None  # None when errors.json is missing
    budget: int | None = None  # server.tools_budget_bytes, from MANIFEST.json
    # MANIFEST.json's `review` (generator/render/review_facts.py): per-tool calls, error mappings,
    # confirmation, idempotency; the server's spec patches, error rules, budgets ({} when absent)
    review: Facts = field(default_factory=dict)

    def facts(self, tool: str) -> Facts | None:
        found = self.review.get("tools", {}).get(tool)
        return found if isinstance(found, Mapping) else None


@dataclass(frozen=True, slots=True)
class Side:
    surfaces: Mapping[str, Surface]  # by package
    spec: tuple[str, ...] = ()  # "package version" of every spec named in MANIFEST.json


@dataclass(frozen=True, slots=True)
class Contract:
    """What the head's override file for one package declares about breaking changes."""

    overrides_file: str
    declarations: tuple[BreakingChange, ...] = ()
    renames: Mapping[str, str] = field(default_factory=dict)  # old name -> new name


@dataclass(frozen=True, slots=True)
class Delta:
    kind: str  # one of KIND_ORDER
    where: str  # Markdown: input `title`, output `labels[]`, tool
    text: str = ""  # Markdown
    words: str = ""  # a word diff, shown as a text block


# --- text helpers ---------------------------------------------------------------------------------


def block(text: str, indent: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    lines = [f"{fence}text", *text.split("\n"), fence]
    return "\n".join(f"{indent}{line}" if line else "" for line in lines)


def value(item: Any) -> str:
    return "(absent)" if item is ABSENT else code(json.dumps(item, ensure_ascii=False))


def title(item: Any) -> str:
    return code(item) if isinstance(item, str) and item.strip() else value(item)


def word_diff(old: str, new: str) -> str:
    """`git diff --word-diff=plain` notation: [-removed-]{+added+}."""
    a, b = re.findall(r"\s+|\S+", old), re.findall(r"\s+|\S+", new)
    out: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append("".join(a[i1:i2]))
            continue
        if i2 > i1:
            out.append(f"[-{''.join(a[i1:i2])}-]")
        if j2 > j1:
            out.append(f"{{+{''.join(b[j1:j2])}+}}")
    return "".join(out)


def size(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def before_after(a: int | None, b: int | None) -> str:
    if a == b:
        return size(a)
    delta = f" ({b - a:+,})" if a is not None and b is not None else ""
    return f"{size(a)} → {size(b)}{delta}"


# --- per-tool deltas ------------------------------------------------------------------------------


def _where(scope: str, path: str) -> str:
    return f"{scope} {code(path)}" if path else f"{scope} (root)"


def _schema(old: Wire, new: Wire, scope: str, path: str) -> Iterator[Delta]:
    props_old, props_new = old.get("properties", {}), new.get("properties", {})
    req_old, req_new = set(old.get("required", [])), set(new.get("required", []))
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key, ABSENT), new.get(key, ABSENT)
        if a == b:
            continue
        here = _where(scope, path)
        if key == "properties" and isinstance(props_old, dict) and isinstance(props_new, dict):
            for name in sorted(props_old.keys() | props_new.keys()):
                sub = _where(scope, join_path(path, name))
                if name not in props_new:
                    yield Delta("property", sub, f"removed (was {show_types(schema_types(props_old[name]))})")
                elif name not in props_old:
                    yield Delta("property", sub, added_property(props_new[name], name in req_new))
                else:
                    yield from _schema(props_old[name], props_new[name], scope, join_path(path, name))
        elif key == "required":
            both = props_old.keys() & props_new.keys()
            for name in sorted((req_old ^ req_new) & both):
                state = "now required" if name in req_new else "no longer required"
                yield Delta("required", _where(scope, join_path(path, name)), state)
        elif key == "items" and isinstance(a, dict) and isinstance(b, dict):
            yield from _schema(a, b, scope, f"{path}[]")
        elif key == "enum" and isinstance(a, list) and isinstance(b, list):
            parts = [f"{verb} {', '.join(value(v) for v in values)}" for verb, values in
                     (("added", [v for v in b if v not in a]), ("removed", [v for v in a if v not in b]))
                     if values]
            yield Delta("enum", here, "; ".join(parts) or "reordered")
        elif key == "type":
            yield Delta("type", here, f"{show_types(schema_types(old))} → {show_types(schema_types(new))}")
        elif key in BOUNDS:
            yield Delta("bound", here, f"{code(key)} {value(a)} → {value(b)}")
        elif key == "description":
            yield Delta("description", here, words=word_diff(_text(a), _text(b)))
        elif key == "title":
            yield Delta("title", here, f"{title(a)} → {title(b)}")
        else:
            yield Delta("other", here, f"{code(key)} {value(a)} → {value(b)}")


LIMITS = ("enum", "default", "const", *BOUNDS)


def added_property(schema: Wire, required: bool) -> str:
    """`added (string, required; maxLength 256): the description`: what a reviewer weighs."""
    facts = [show_types(schema_types(schema)), *(["required"] if required else [])]
    limits = [f"{code(key)} {value(schema[key])}" for key in LIMITS if key in schema]
    items = schema.get("items")
    if isinstance(items, dict):
        limits += [f"items {code(key)} {value(items[key])}" for key in LIMITS if key in items]
    text = f"added ({', '.join(facts)}{'; ' + ', '.join(limits) if limits else ''})"
    description = " ".join(_text(schema.get("description")).split())
    return f"{text}: {description}" if description else text


def _text(item: Any) -> str:
    return item if isinstance(item, str) else ""


def _output(old: Wire, new: Wire) -> Iterator[Delta]:
    root_old = {k: v for k, v in old.items() if k != "oneOf"}
    root_new = {k: v for k, v in new.items() if k != "oneOf"}
    if "oneOf" in old and "oneOf" in new:
        yield from _schema(root_old, root_new, "output", "")
    before, after = output_branches(old), output_branches(new)
    for label in sorted(before.keys() | after.keys()):
        scope = "error envelope" if label else "output"
        if label not in after:
            yield Delta("other", scope, "branch removed from the outputSchema")
        elif label not in before:
            yield Delta("other", scope, "branch added to the outputSchema")
        else:
            yield from _schema(before[label], after[label], scope, "")


def tool_deltas(old: Wire, new: Wire, codes_old: Sequence[str] | None,
                codes_new: Sequence[str] | None, facts_old: Facts | None = None,
                facts_new: Facts | None = None) -> list[Delta]:
    deltas: list[Delta] = []
    if old.get("title") != new.get("title"):
        deltas.append(Delta("title", "tool", f"{title(old.get('title', ABSENT))} → "
                                             f"{title(new.get('title', ABSENT))}"))
    if old.get("description") != new.get("description"):
        deltas.append(Delta("description", "tool",
                            words=word_diff(_text(old.get("description")), _text(new.get("description")))))
    deltas.extend(_schema(old.get("inputSchema", {}), new.get("inputSchema", {}), "input", ""))
    deltas.extend(_output(old.get("outputSchema", {}), new.get("outputSchema", {})))
    hints_old, hints_new = old.get("annotations", {}), new.get("annotations", {})
    for hint in sorted(hints_old.keys() | hints_new.keys()):
        a, b = hints_old.get(hint, ABSENT), hints_new.get(hint, ABSENT)
        if a != b:
            deltas.append(Delta("annotation", code(hint), f"{value(a)} → {value(b)}"))
    if codes_old is not None and codes_new is not None and set(codes_old) != set(codes_new):
        parts = [f"{verb} {', '.join(code(c) for c in sorted(values))}" for verb, values in
                 (("added", set(codes_new) - set(codes_old)), ("removed", set(codes_old) - set(codes_new)))
                 if values]
        deltas.append(Delta("error code", "tool", "; ".join(parts)))
    deltas += [Delta(kind, where, text) for kind, where, text in tool_changes(facts_old, facts_new)]
    # `_meta` holds the tool's scopes, compared through its facts
    known = set(old.keys() | new.keys()) - {"name", "title", "description", "inputSchema",
                                              "outputSchema", "annotations", "_meta"}
    for key in sorted(known):
        if old.get(key, ABSENT) != new.get(key, ABSENT):
            deltas.append(Delta("other", "tool", f"{code(key)} {value(old.get(key, ABSENT))} → "
                                                 f"{value(new.get(key, ABSENT))}"))
    return sorted(deltas, key=lambda d: KIND_ORDER.index(d.kind))


def render_deltas(deltas: Sequence[Delta]) -> list[str]:
    lines: list[str] = []
    for d in deltas:
        head = f"- {d.kind} · {d.where}"
        if d.words:
            lines += [f"{head}:", block(d.words, "  ")]
        else:
            lines.append(f"{head}: {d.text}")
    return lines


def describe_added(tool: Wire, codes: Sequence[str] | None, facts: Facts | None = None) -> list[str]:
    """A new tool in full: inputs with their enums and defaults, outputs object by object, the
    endpoints it calls, its error mappings with repairs, confirmation and idempotency."""
    success = output_branches(tool.get("outputSchema", {})).get("", {})
    hints = ", ".join(f"{k} {json.dumps(v)}" for k, v in sorted(tool.get("annotations", {}).items()))
    lines = [f"- title: {title(tool.get('title', ABSENT))}",
             f"- annotations: {hints or 'none'}",
             "- input:", *(schema_lines(tool.get("inputSchema", {})) or ["  - none"]),
             "- output (success):", *(schema_lines(success, required=()) or ["  - none"])]
    if codes is not None:
        lines.append(f"- error codes: {', '.join(code(c) for c in codes) or 'none'}")
    lines += tool_lines(facts)
    return [*lines, "- description:", block(_text(tool.get("description")), "  ")]


# --- one server ----------------------------------------------------------------------------------


@dataclass(slots=True)
class ServerReview:
    package: str
    lines: list[str]
    counts: dict[str, int]
    tools_bytes: tuple[int | None, int | None]
    undeclared: int


def _codes(surface: Surface | None, name: str) -> tuple[str, ...] | None:
    if surface is None or surface.codes is None:
        return None
    return surface.codes.get(name, ())


def _tools_list_bytes(surface: Surface | None) -> int | None:
    return None if surface is None else compact_bytes({"tools": list(surface.tools.values())})


def _tokens(a: int | None, b: int | None) -> str:
    return before_after(*(None if n is None else n // 4 for n in (a, b)))


def _table(old: Mapping[str, Wire], new: Mapping[str, Wire], rows: Sequence[tuple[str | None, str | None]],
           changed: Mapping[str, object]) -> list[str]:
    """One row per tool: (old name, new name), None on the side where the tool does not exist."""
    lines = ["| tool | change | bytes | ~tokens |", "|---|---|---|---|"]
    for a, b in sorted(rows, key=lambda r: str(r[1] or r[0])):
        size_old = compact_bytes(old[a]) if a else None
        size_new = compact_bytes(new[b]) if b else None
        status = ("added" if a is None else "removed" if b is None else
                  f"renamed from {code(a)}" if a != b else "changed" if a in changed else "unchanged")
        lines.append(f"| {code(b or a or '')} | {status} | {before_after(size_old, size_new)} "
                     f"| {_tokens(size_old, size_new)} |")
    return lines


def _breaking(changes: Sequence[Change], contract: Contract | None) -> tuple[list[str], int]:
    lines, undeclared = [], 0
    for change in changes:
        field = f" {code(change.field)}" if change.field else ""
        what = f"{code(change.tool)}: {change.kind}{field} ({change.detail})"
        if change.kind == "renamed-tool":
            lines.append(f"- ✓ declared (renamed_from) · {what}")
            continue
        decl = declaration_for(change, contract.declarations) if contract else None
        if decl is None:
            undeclared += 1
            lines.append(f"- ✗ **undeclared** · {what}")
        else:
            lines.append(f"- ✓ declared · {what}: {' '.join(decl.reason.split())}")
    return lines, undeclared


def _inert(changes: Sequence[Change], contract: Contract | None) -> list[str]:
    """Declarations no change of this diff needs, once and collapsed: they are history."""
    if contract is None:
        return []
    used = {id(declaration_for(c, contract.declarations)) for c in changes}
    inert = [f"- {d.kind} · {code(d.tool)}" + (f" {code(d.field)}" if d.field else "")
             for d in contract.declarations if id(d) not in used and d.kind != "changed-meaning"]
    if not inert:
        return []
    return [f"<details><summary>{len(inert)} declared breaking change(s) in "
            f"{contract.overrides_file} not in this change (inert; remove when convenient)</summary>",
            "", *inert, "", "</details>", ""]


def _budget(base: Surface | None, head: Surface | None) -> list[str]:
    a, b = (s.budget if s else None for s in (base, head))
    if a is None or b is None or a == b:
        return []
    return [f"`server.tools_budget_bytes` {before_after(a, b)}", ""]


def _meanings(contract: Contract | None) -> list[str]:
    """Declared changes of meaning: no diff shows them; the capability summary publishes them."""
    return [f"- {code(d.tool)}" + (f" {code(d.field)}" if d.field else "") + f": {' '.join(d.reason.split())}"
            for d in (contract.declarations if contract else ()) if d.kind == "changed-meaning"]


def review_server(package: str, base: Surface | None, head: Surface | None,
                  contract: Contract | None) -> ServerReview:
    old = dict(base.tools) if base else {}
    new = dict(head.tools) if head else {}
    renames = {a: b for a, b in (contract.renames if contract else {}).items()
               if a in old and a not in new and b in new and b not in old}
    removed = sorted(old.keys() - new.keys() - renames.keys())
    added = sorted(new.keys() - old.keys() - set(renames.values()))
    pairs = {name: name for name in old.keys() & new.keys()} | renames
    changed = {a: tool_deltas(old[a], new[b], _codes(base, a), _codes(head, b),
                              base.facts(a) if base else None, head.facts(b) if head else None)
               for a, b in pairs.items()}
    changed = {a: d for a, d in changed.items() if d or a in renames}
    compare_codes = base is not None and head is not None and head.codes is not None
    changes = diff_surfaces(list(old.values()), list(new.values()),
                            base.codes if base is not None and compare_codes else None,
                            head.codes if head is not None and head.codes is not None else {}, renames)
    breaking, undeclared = _breaking(changes, contract)
    counts = {"added": len(added), "removed": len(removed), "changed": len(changed),
              "unchanged": len(pairs) - len(changed)}
    sizes = (_tools_list_bytes(base), _tools_list_bytes(head))
    lines = [f"### {package}", ""]
    if base is None:
        lines += ["New server.", ""]
    if head is None:
        lines += ["Server removed (no `tools.json` in the working tree).", ""]
    if head is not None and head.review:  # spec patches, server-wide rules, every budget
        server = server_lines(base.review if base else None, head.review)
        lines += [*server, ""] if server else []
    else:
        lines += _budget(base, head)
    if not (added or removed or changed):
        lines += ["No change to the tool surface.", ""]
        return ServerReview(package, lines, counts, sizes, undeclared)
    lines += [", ".join(f"{v} {k}" for k, v in counts.items()) + " tools; `tools/list` "
              f"{before_after(*sizes)} B, ~tokens {_tokens(*sizes)}", "",
              *_table(old, new, [*pairs.items(), *((a, None) for a in removed), *((None, b) for b in added)],
                      changed)]
    lines.append("")
    if breaking:
        lines += ["#### Breaking changes", "", *breaking, ""]
    if contract is None and head is not None and changes:
        lines += ["No override file in the working tree loads for this package (see the lint "
                  "findings), so no change counts as declared.", ""]
    meanings = _meanings(contract)
    if meanings:
        lines += ["#### Changed meanings (published in the capability summary)", "", *meanings, ""]
    lines += _inert(changes, contract)
    for a in sorted(changed, key=lambda n: renames.get(n, n)):
        b = renames.get(a, a)
        heading = f"#### {code(b)} (renamed from {code(a)})" if a != b else f"#### {code(b)} (changed)"
        lines += [heading, "", *(render_deltas(changed[a]) or ["- no change besides the name"]), ""]
    for b in added:
        lines += [f"#### {code(b)} (added)", "", *describe_added(new[b], _codes(head, b),
                                                                 head.facts(b) if head else None), ""]
    for a in removed:
        lines += [f"#### {code(a)} (removed)", "", f"- was: {title(old[a].get('title', ABSENT))}", ""]
    return ServerReview(package, lines, counts, sizes, undeclared)


# --- the whole report -----------------------------------------------------------------------------


def review(base: Side, head: Side, contracts: Mapping[str, Contract], findings: Sequence[Diagnostic],
           base_label: str, overrides_files: int, stale: Sequence[str] = ()) -> tuple[str, int]:
    """The Markdown report and the number of undeclared breaking changes; `stale` (where generated/
    was not regenerated) comes first."""
    packages = sorted(base.surfaces.keys() | head.surfaces.keys())
    servers = [review_server(p, base.surfaces.get(p), head.surfaces.get(p), contracts.get(p))
               for p in packages]
    undeclared = sum(s.undeclared for s in servers)
    lines = []
    if stale:
        lines += ["**Stale: `generated/` was not regenerated after an override change; run `make generate` "
                  "and commit it. This review shows what `generated/` holds, not what the override "
                  "files say.**", "", *(f"- {line}" for line in stale), ""]
    lines += ["## Tool surface review", "",
             f"Base {code(base_label)} → working tree; {len(servers)} server(s)."]
    if base.spec != head.spec:
        lines.append(f"Spec moved: {', '.join(map(code, base.spec)) or 'none'} → "
                     f"{', '.join(map(code, head.spec)) or 'none'}.")
    lines.append("")
    if undeclared:
        lines += [f"**{undeclared} undeclared breaking change(s).** Declare each accepted one under "
                  "`breaking_changes` in the override file (a rename: `renamed_from` on the tool), "
                  "or undo it.", ""]
    lines += ["| server | added | removed | changed | unchanged | `tools/list` bytes | undeclared breaking |",
              "|---|---|---|---|---|---|---|"]
    for s in servers:
        c = s.counts
        lines.append(f"| {s.package} | {c['added']} | {c['removed']} | {c['changed']} | {c['unchanged']} "
                     f"| {before_after(*s.tools_bytes)} | {s.undeclared} |")
    lines.append("")
    for s in servers:
        lines += s.lines
    lines += ["### Lint findings", ""]
    if findings:
        lines += [block("\n".join(d.render() for d in findings)), ""]
    else:
        lines += [f"None in {overrides_files} override file(s).", ""]
    return "\n".join(lines).rstrip("\n") + "\n", undeclared
