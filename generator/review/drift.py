"""`python -m generator drift --to NEW_SPEC`: what changed upstream for the operations we use."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base.diagnostics import DiagnosticError
from generator.base.yamlsrc import Located
from generator.language.overrides import OverrideFile, ShapeField, parse_overrides, tool_operations
from generator.spec.patches import apply_patches
from generator.spec.pinned import (
    SPEC_DIR,
    SpecError,
    SpecOperation,
    index_operations,
    load_pinned_spec,
    read_document_bytes,
    request_body_schema,
    resolve_ref,
    spec_dir,
)
from generator.spec.schemas import object_branches

JSON = Any
Steps = tuple[str, ...]
BOUNDS = ("maxLength", "minLength", "maxItems", "minItems", "maximum", "minimum", "pattern", "format")
MAX_DEPTH = 8
MAX_LOCATIONS = 3


@dataclass(frozen=True, slots=True)
class Usage:
    """What the override file builds on: tools per operation, mapped fields, shape paths."""

    tools: dict[str, list[str]]  # operationId -> tools
    params: dict[tuple[str, str, str], list[str]]  # (operationId, in, name) -> tool.param
    shapes: dict[str, list[tuple[str, Steps]]]  # component schema -> (shape.field, path)


def _steps(source: str) -> Steps:
    return tuple(p for p in re.split(r"\.|(\[\])", source) if p)


def _show(steps: Steps) -> str:
    out = ""
    for step in steps:
        out += step if step == "[]" or not out else f".{step}"
    return out or "/"


def usage(overrides: OverrideFile) -> Usage:
    tools: dict[str, list[str]] = defaultdict(list)
    params: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for tool in overrides.tools:
        for op in tool_operations(tool):
            tools[op].append(tool.name)
        for p in tool.params:
            match = re.fullmatch(r"([\w\-/]+)#(path|query|body)\.([\w\-\[\]]+)", p.source or "")
            if match:
                op_id, where, name = match.groups()
                params[(op_id, where, name)].append(f"{tool.name}.{p.name}")
    shapes: dict[str, list[tuple[str, Steps]]] = defaultdict(list)

    def fields(shape: str, defs: list[ShapeField], prefix: Steps, label: str) -> Iterator[tuple[str, Steps]]:
        for f in defs:
            if f.source:
                steps = prefix + _steps(f.source)
                yield f"shape {shape}.{label}{f.name}", steps
                yield from fields(shape, f.fields or [], steps, f"{label}{f.name}.")

    for name, shape in sorted(overrides.shapes.items()):
        for source in shape.sources:
            shapes[source].extend(fields(name, shape.fields, (), ""))
    return Usage(dict(tools), dict(params), dict(shapes))


# -- schema facts ----------------------------------------------------------------------------


def _types(doc: JSON, node: JSON) -> set[str]:
    node = resolve_ref(doc, node)
    if not isinstance(node, Mapping):
        return set()
    out: set[str] = set()
    kind = node.get("type")
    if isinstance(kind, list):
        out.update(str(k) for k in kind)
    elif kind is not None:
        out.add(str(kind))
    elif "properties" in node:
        out.add("object")
    for key in ("oneOf", "anyOf"):
        for branch in node.get(key, []):
            out |= _types(doc, branch)
    if node.get("nullable"):
        out.add("null")
    return out


def _fmt_types(types: set[str]) -> str:
    return "|".join(sorted(types)) or "any"


def _leaf_changes(doc_a: JSON, a: JSON, doc_b: JSON, b: JSON, bounds: bool) -> list[str]:
    a, b = resolve_ref(doc_a, a), resolve_ref(doc_b, b)
    out: list[str] = []
    ta, tb = _types(doc_a, a), _types(doc_b, b)
    if ta != tb:
        out.append(f"retyped {_fmt_types(ta)} -> {_fmt_types(tb)}")
    ea = [v for v in a.get("enum", []) if v is not None]
    eb = [v for v in b.get("enum", []) if v is not None]
    if ea != eb and (ea or eb):
        added, removed = [v for v in eb if v not in ea], [v for v in ea if v not in eb]
        parts = ([f"added {json.dumps(added)}"] if added else []) + (
            [f"removed {json.dumps(removed)}"] if removed else [])
        if not ea:
            parts = [f"now limited to {json.dumps(eb)}"]
        elif not eb:
            parts = ["no longer limited"]
        if parts:
            out.append("enum " + ", ".join(parts))
    if bounds:
        for key in BOUNDS:
            if a.get(key) != b.get(key):
                out.append(f"{key} {_value(a.get(key))} -> {_value(b.get(key))}")
    if bool(a.get("deprecated")) != bool(b.get("deprecated")):
        out.append("now deprecated" if b.get("deprecated") else "no longer deprecated")
    return out


def _value(value: JSON) -> str:
    return "none" if value is None else json.dumps(value)


def _signature(doc: JSON, node: JSON) -> str:
    node = resolve_ref(doc, node)
    if not isinstance(node, Mapping):
        return json.dumps(node)
    return json.dumps({k: v for k, v in node.items() if k not in ("description", "example", "examples")},
                      sort_keys=True)


# -- per operation ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Side:
    doc: JSON
    op: SpecOperation


def _params(side: Side) -> dict[tuple[str, str], JSON]:
    out: dict[tuple[str, str], JSON] = {}
    for raw in [*side.op.path_item.get("parameters", []), *side.op.node.get("parameters", [])]:
        p = resolve_ref(side.doc, raw)
        out[(str(p.get("in")), str(p.get("name")))] = p
    return out


def _param_lines(op_id: str, old: Side, new: Side, use: Usage) -> Iterator[tuple[str, list[str]]]:
    before, after = _params(old), _params(new)
    gone = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    renamed: dict[tuple[str, str], tuple[str, str]] = {}
    for key in gone:
        same = [k for k in added if k[0] == key[0] and k not in renamed.values()
                and _signature(old.doc, before[key].get("schema", {}))
                == _signature(new.doc, after[k].get("schema", {}))]
        if len(same) == 1:
            renamed[key] = same[0]

    def affects(where: str, name: str) -> list[str]:
        return use.params.get((op_id, where, name), [])

    for key in gone:
        if key in renamed:
            yield f"parameter {key[0]}.{key[1]} renamed to {renamed[key][1]} (same schema)", affects(*key)
        else:
            yield f"parameter {key[0]}.{key[1]} removed", affects(*key)
    for key in added:
        if key not in renamed.values():
            req = "required" if after[key].get("required") else "optional"
            kind = _fmt_types(_types(new.doc, after[key].get("schema", {})))
            yield f"parameter {key[0]}.{key[1]} added ({req}, {kind})", []
    for key in sorted(set(before) & set(after)):
        was, now = bool(before[key].get("required")), bool(after[key].get("required"))
        if was != now:
            yield f"parameter {key[0]}.{key[1]} {'now required' if now else 'now optional'}", affects(*key)
        if bool(before[key].get("deprecated")) != bool(after[key].get("deprecated")):
            state = "now deprecated" if after[key].get("deprecated") else "no longer deprecated"
            yield f"parameter {key[0]}.{key[1]} {state}", affects(*key)
        for change in _leaf_changes(old.doc, before[key].get("schema", {}),
                                    new.doc, after[key].get("schema", {}), bounds=True):
            yield f"parameter {key[0]}.{key[1]} {change}", affects(*key)


def _body(side: Side) -> tuple[dict[str, JSON], set[str]]:
    props: dict[str, JSON] = {}
    required: set[str] = set()
    for branch in object_branches(side.doc, request_body_schema(side.doc, side.op)):
        for name, node in branch.get("properties", {}).items():
            props.setdefault(name, node)
        required.update(branch.get("required", []))
    return props, required


def _body_lines(op_id: str, old: Side, new: Side, use: Usage) -> Iterator[tuple[str, list[str]]]:
    (before, req_before), (after, req_after) = _body(old), _body(new)
    for name in sorted(set(before) | set(after)):
        tools = use.params.get((op_id, "body", name), [])
        if name not in after:
            yield f"request body property {name} removed", tools
        elif name not in before:
            req = "required" if name in req_after else "optional"
            yield f"request body property {name} added ({req}, {_fmt_types(_types(new.doc, after[name]))})", []
        else:
            if (name in req_before) != (name in req_after):
                yield (f"request body property {name} "
                       f"{'now required' if name in req_after else 'now optional'}"), tools
            for change in _leaf_changes(old.doc, before[name], new.doc, after[name], bounds=True):
                yield f"request body property {name} {change}", tools


@dataclass(frozen=True, slots=True)
class _Hit:
    steps: Steps
    kind: str
    detail: str
    comps: tuple[tuple[str, Steps], ...]  # enclosing component schemas and where each is rooted


def _component(node: JSON) -> str | None:
    ref = node.get("$ref") if isinstance(node, Mapping) else None
    prefix = "#/components/schemas/"
    return ref[len(prefix):] if isinstance(ref, str) and ref.startswith(prefix) else None


def _walk(old: JSON, a: JSON, new: JSON, b: JSON, steps: Steps,
          comps: tuple[tuple[str, Steps], ...], out: list[_Hit]) -> None:
    name = _component(a)
    if name is not None:
        if any(c == name for c, _ in comps):
            return  # recursion through the same schema
        comps = (*comps, (name, steps))
    if len(steps) > MAX_DEPTH:
        return
    ra, rb = resolve_ref(old, a), resolve_ref(new, b)
    for change in _leaf_changes(old, ra, new, rb, bounds=False):
        out.append(_Hit(steps, "field changed", change, comps))
    pa, pb = _props(old, ra), _props(new, rb)
    for key in sorted(pa):
        node, owner = pa[key]
        inner = comps if owner is None or owner == name else (*comps, (owner, steps))
        if key not in pb:
            out.append(_Hit((*steps, key), "field removed", "", inner))
        else:
            _walk(old, node, new, pb[key][0], (*steps, key), inner, out)
    ia, ib = ra.get("items"), rb.get("items")
    if isinstance(ia, Mapping) and isinstance(ib, Mapping):
        _walk(old, ia, new, ib, (*steps, "[]"), comps, out)


def _props(doc: JSON, node: JSON) -> dict[str, tuple[JSON, str | None]]:
    """Properties of a node and its allOf/oneOf/anyOf parts, each with the component it came from."""
    owner = _component(node)
    node = resolve_ref(doc, node)
    out: dict[str, tuple[JSON, str | None]] = {}
    if not isinstance(node, Mapping):
        return out
    for key, value in node.get("properties", {}).items():
        out.setdefault(key, (value, owner))
    for combinator in ("allOf", "oneOf", "anyOf"):
        for part in node.get(combinator, []):
            for key, (value, part_owner) in _props(doc, part).items():
                out.setdefault(key, (value, part_owner or owner))
    return out


def _json_schema(side: Side, status: str) -> JSON | None:
    response = resolve_ref(side.doc, side.op.node.get("responses", {}).get(status, {}))
    return response.get("content", {}).get("application/json", {}).get("schema")


def _response_lines(old: Side, new: Side, use: Usage) -> Iterator[tuple[str, list[str]]]:
    statuses_a = set(old.op.node.get("responses", {}))
    statuses_b = set(new.op.node.get("responses", {}))
    for status in sorted(statuses_a - statuses_b):
        yield f"status {status} removed", []
    for status in sorted(statuses_b - statuses_a):
        yield f"status {status} added", []
    for status in sorted(s for s in statuses_a & statuses_b if s.startswith("2")):
        a, b = _json_schema(old, status), _json_schema(new, status)
        if a is None or b is None:
            if (a is None) != (b is None):
                yield f"response {status}: JSON body {'added' if a is None else 'removed'}", []
            continue
        hits: list[_Hit] = []
        _walk(old.doc, a, new.doc, b, (), (), hits)
        yield from _group(status, hits, use)


def _group(status: str, hits: list[_Hit], use: Usage) -> Iterator[tuple[str, list[str]]]:
    groups: dict[tuple[str, str], list[_Hit]] = defaultdict(list)
    for hit in hits:
        if hit.comps:
            name, root = hit.comps[-1]
            label = f"{name}.{_show(hit.steps[len(root):])}" if hit.steps[len(root):] else name
        else:
            label = _show(hit.steps)
        detail = f" {hit.detail}" if hit.detail else ""
        groups[(f"{hit.kind}: {label}{detail}", label)].append(hit)
    for (text, label), members in sorted(groups.items()):
        where = sorted({_show(h.steps) for h in members})
        at = ""
        if where != [label.split(".", 1)[-1]] and where != [label]:
            shown = ", ".join(where[:MAX_LOCATIONS])
            more = f", +{len(where) - MAX_LOCATIONS} more" if len(where) > MAX_LOCATIONS else ""
            at = f" (at {shown}{more})"
        yield f"response {status}: {text}{at}", sorted({a for h in members for a in _shape_hits(h, use)})


def _shape_hits(hit: _Hit, use: Usage) -> Iterator[str]:
    for name, root in hit.comps:
        rel = hit.steps[len(root):]
        for label, steps in use.shapes.get(name, []):
            n = min(len(rel), len(steps))
            if rel[:n] == steps[:n]:
                yield label


def _deprecation_lines(old: Side, new: Side) -> Iterator[tuple[str, list[str]]]:
    a, b = old.op.node, new.op.node
    if bool(a.get("deprecated")) != bool(b.get("deprecated")):
        yield ("operation now deprecated" if b.get("deprecated") else "operation no longer deprecated"), []
    for key in ("deprecationDate", "removalDate"):
        was, now = a.get("x-github", {}).get(key), b.get("x-github", {}).get(key)
        if was != now:
            yield f"x-github.{key} {was or 'none'} -> {now or 'none'}", []


def operation_lines(op_id: str, old: Side, new: Side, use: Usage) -> list[str]:
    lines: list[str] = []
    if (old.op.method, old.op.path) != (new.op.method, new.op.path):
        lines.append(f"  - moved to {new.op.method.upper()} {new.op.path}")
    for producer in (_deprecation_lines(old, new), _param_lines(op_id, old, new, use),
                     _body_lines(op_id, old, new, use), _response_lines(old, new, use)):
        for text, affects in producer:
            tail = f"  [affects {', '.join(sorted(set(affects)))}]" if affects else ""
            lines.append(f"  - {text}{tail}")
    return lines


# -- the report ------------------------------------------------------------------------------


def _patched(doc: JSON, overrides: OverrideFile, located: Located) -> tuple[dict[str, JSON], list[str]]:
    copy = dict(doc)
    problems = apply_patches(copy, [(p, located.where(("spec_patches", i)))
                                    for i, p in enumerate(overrides.spec_patches)])
    return copy, [f"  - {d.where}: {d.message}" for d in problems]


def drift_report(old_doc: JSON, new_doc: JSON, overrides: OverrideFile, located: Located,
                 old_label: str, new_label: str) -> str:
    """Deterministic text: per used operation, what changed and which tools it affects."""
    use = usage(overrides)
    old_doc, _ = _patched(old_doc, overrides, located)
    new_doc, patch_problems = _patched(new_doc, overrides, located)
    before, after = index_operations(old_doc), index_operations(new_doc)
    by_route = {(op.method, op.path): op_id for op_id, op in after.items()}
    out = [f"Spec drift for {located.file}: {old_label} -> {new_label}"]
    body: list[str] = []
    changed = 0
    for op_id in sorted(use.tools):
        tools = ", ".join(sorted(set(use.tools[op_id])))
        if op_id not in before:
            continue  # the override file does not build against the pinned spec either
        a = before[op_id]
        head = f"{op_id}  {a.method.upper()} {a.path}  (tools: {tools})"
        if op_id not in after:
            moved = by_route.get((a.method, a.path))
            note = f"operationId is now {moved}" if moved else "operation removed"
            body += ["", head, f"  - {note}  [affects {tools}]"]
            changed += 1
            continue
        lines = operation_lines(op_id, Side(old_doc, a), Side(new_doc, after[op_id]), use)
        if lines:
            body += ["", head, *lines]
            changed += 1
    out.append(f"{len(use.tools)} operation(s) used by {len(overrides.tools)} tool(s): {changed} changed, "
               f"{len(use.tools) - changed} unchanged.")
    out += body
    coverage = _coverage_lines(overrides, before, after, use)
    if coverage:
        claimed = sorted([*overrides.coverage.categories, *overrides.coverage.subcategories])
        out += ["", f"Coverage (categories: {', '.join(claimed)})", *coverage]
    if patch_problems:
        out += ["", "Spec patches that no longer apply to the new spec", *patch_problems]
    return "\n".join(out) + "\n"


def _coverage_lines(overrides: OverrideFile, before: Mapping[str, SpecOperation],
                    after: Mapping[str, SpecOperation], use: Usage) -> list[str]:
    categories, subcategories = set(overrides.coverage.categories), set(overrides.coverage.subcategories)
    lines = []
    for op_id, op in sorted(after.items()):
        if (op.category in categories or op.subcategory in subcategories) and op_id not in before:
            claimed = op_id in use.tools or op_id in overrides.coverage.excluded
            lines.append(f"  - operation {op_id} added ({op.method.upper()} {op.path})"
                         + ("" if claimed else ": neither used nor excluded; generation fails until "
                                                "it is claimed"))
    for op_id in sorted(overrides.coverage.excluded):
        if op_id in before and op_id not in after:
            lines.append(f"  - excluded operation {op_id} removed: drop it from coverage.excluded")
    return lines


def load_document(path: Path) -> JSON:
    return json.loads(read_document_bytes(path))


def main(overrides: Path, to: Path | None, root: Path | None) -> int:
    if to is None:
        print("usage: python -m generator drift --to NEW_SPEC.json[.gz]", file=sys.stderr)
        return 2
    try:
        model, located = parse_overrides(overrides.read_text(encoding="utf-8"), _display(overrides))
        pinned = load_pinned_spec(spec_dir(model.server.spec, root or SPEC_DIR))
        new = load_document(to)
    except (OSError, SpecError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except DiagnosticError as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        return 2
    label = f"{pinned.pinned.package} {pinned.pinned.version}"
    sys.stdout.write(drift_report(pinned.document, new, model, located, label, to.name))
    return 0


def _display(path: Path) -> str:
    from generator.spec.pinned import REPO_ROOT

    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return path.as_posix()
