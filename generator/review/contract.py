"""The parts of the review report a schema diff does not show: what each tool calls, the error
mappings it declares (with their repairs), its confirmation, idempotency and token scopes, and
per server the spec patches, server-wide error rules, budgets and each operation's scopes (MANIFEST.json's `review`, written by
generator/render/review_facts.py) — and the inputs and outputs of a new tool spelled out (enum values,
defaults, objects field by field), so a reviewer needs neither TOOLS.md nor handlers.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from generator.lint.breaking import show_types
from generator.spec.schemas import schema_types
from ghmcp_runtime.core.token_scopes import ToolScopes

Facts = Mapping[str, Any]
MAX_DEPTH = 4


def code(text: str) -> str:
    """An inline code span that survives backticks in `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_code = code


def _json(value: Any) -> str:
    return _code(json.dumps(value, ensure_ascii=False, sort_keys=True))


# --- describing ----------------------------------------------------------------------------------


def schema_lines(schema: Mapping[str, Any], indent: str = "  ", depth: int = 0,
                 required: Sequence[str] | None = None) -> list[str]:
    """Each property of an object schema as a line (`name` types, enum, default, bounds),
    objects and arrays of objects expanded under it."""
    lines = []
    needed = set(schema.get("required", []) if required is None else required)
    for name, prop in schema.get("properties", {}).items():
        lines.append(f"{indent}- {_code(name)} {describe(prop)}" + (" (required)" if name in needed else ""))
        inner = prop.get("items") if "array" in schema_types(prop) else prop
        if isinstance(inner, Mapping) and "properties" in inner and depth < MAX_DEPTH:
            lines += schema_lines(inner, indent + "  ", depth + 1)
    return lines


def describe(schema: Mapping[str, Any]) -> str:
    """`string|null; enum "a", "b"; default "a"; maxLength 256`."""
    kinds = schema_types(schema)
    text = show_types(kinds)
    items = schema.get("items")
    if "array" in kinds and isinstance(items, Mapping):
        text += f" of {describe(items)}"
    facts = []
    if "enum" in schema:
        facts.append("enum " + ", ".join(_json(v) for v in schema["enum"]))
    for key in ("default", "const", "pattern", "format", "minimum", "maximum", "minLength", "maxLength",
                "minItems", "maxItems"):
        if key in schema:
            facts.append(f"{key} {_json(schema[key])}")
    return text + (f"; {', '.join(facts)}" if facts else "")


def mapping_text(entry: Mapping[str, Any]) -> str:
    """One error mapping: what it matches → the code it answers, its message and repair."""
    when = entry.get("when")
    matched = when if isinstance(when, str) else ", ".join(f"{k} {_json(v)}" for k, v in (when or {}).items())
    if entry.get("skip"):
        return f"when {matched} → skipped (the step produces nothing)"
    parts = [f"when {matched} → {_code(entry['code']) if 'code' in entry else 'same code'}"]
    if "message" in entry:
        parts.append(f"message {_json(entry['message'])}")
    if "field" in entry:
        parts.append(f"field {_code(entry['field'])}")
    repair = entry.get("repair")
    if isinstance(repair, Mapping):
        args = ", ".join(f"{k}={v}" for k, v in repair.get("arguments", {}).items())
        text = f"repair {_code(repair['tool'] + '(' + args + ')')} ({repair['next_step']})"
        if repair.get("alternative"):
            text += f", alternative {_json(repair['alternative'])}"
        parts.append(text)
    return "; ".join(parts)


def confirm_text(confirm: Mapping[str, Any] | None) -> str:
    if not confirm:
        return "none"
    when = confirm.get("when")
    asked = "every call" if when == "always" else "when " + " and ".join(when or [])
    over = f", more than {confirm['over_items']} items" if confirm.get("over_items") else ""
    return f"asks {asked}{over}: {_json(confirm.get('message', ''))}"


def idempotency_text(idem: Mapping[str, Any] | None) -> str:
    if not idem:
        return "none"
    text = f"key {_code(idem['key'])}, scope {_json(idem.get('scope', []))}"
    if "write" in idem:
        text += f", write step {_code(idem['write'])}"
    recover = idem.get("recover")
    if isinstance(recover, Mapping):
        text += f"; a lost answer is recovered from {_code(recover['call'])} by {_json(recover['match'])}"
    return text


def tool_lines(facts: Facts | None) -> list[str]:
    """A new tool's endpoints, error mappings, confirmation and idempotency."""
    if facts is None:
        return []
    lines = ["- calls:", *(f"  - {_code(c)}" for c in facts.get("calls", []))]
    errors = facts.get("errors", [])
    if errors:
        lines += ["- error mappings:", *(f"  - step {_code(e['step'])}: {mapping_text(e)}" for e in errors)]
    lines.append(f"- confirmation: {confirm_text(facts.get('confirm'))}")
    lines.append(f"- idempotency: {idempotency_text(facts.get('idempotency'))}")
    if "scopes" in facts:
        lines.append(f"- token scopes: {scopes_text(facts['scopes'])}")
    return lines


def scopes_text(scopes: Mapping[str, Any] | None) -> str:
    """What a token needs (a tool's `_meta` scopes, or one operation's), in words."""
    return "none declared" if scopes is None else ToolScopes.read(scopes).text(_code)


# --- comparing -----------------------------------------------------------------------------------


def tool_changes(old: Facts | None, new: Facts | None) -> Iterator[tuple[str, str, str]]:
    """(kind, where, text) for what changed in a tool's facts (nothing when either side lacks them)."""
    if old is None or new is None:
        return
    before, after = old.get("calls", []), new.get("calls", [])
    for call in after:
        if call not in before:
            yield "endpoint", "tool", f"now calls {_code(call)}"
    for call in before:
        if call not in after:
            yield "endpoint", "tool", f"no longer calls {_code(call)}"
    keyed = [{_key(e): e for e in side.get("errors", [])} for side in (old, new)]
    for key in sorted(keyed[0].keys() | keyed[1].keys()):
        a, b = keyed[0].get(key), keyed[1].get(key)
        if a == b:
            continue
        if a is None or b is None:
            either = a or b or {}
            step, text = either.get("step", ""), f"{'added' if a is None else 'removed'}: {mapping_text(either)}"
        else:
            step, text = a.get("step", ""), f"{mapping_text(a)} ⇒ {mapping_text(b)}"
        yield "error mapping", f"step {_code(step)}", text
    if old.get("confirm") != new.get("confirm"):
        yield "confirmation", "tool", f"{confirm_text(old.get('confirm'))} ⇒ {confirm_text(new.get('confirm'))}"
    if old.get("idempotency") != new.get("idempotency"):
        yield ("idempotency", "tool", f"{idempotency_text(old.get('idempotency'))} ⇒ "
               f"{idempotency_text(new.get('idempotency'))}")
    if old.get("scopes") != new.get("scopes"):
        yield "scopes", "tool", f"{scopes_text(old.get('scopes'))} ⇒ {scopes_text(new.get('scopes'))}"


def _key(entry: Mapping[str, Any]) -> str:
    return json.dumps([entry.get("step"), entry.get("when")], sort_keys=True)


def server_lines(old: Facts | None, new: Facts | None) -> list[str]:
    """Spec patches, server-wide error rules, operations' scopes and budgets: what changed (all of it
    for a new server)."""
    old = old or {}
    new = new or {}
    lines: list[str] = []
    patches = [{json.dumps([p.get("op"), p.get("path")]): p for p in side.get("spec_patches", [])}
               for side in (old, new)]
    for key in sorted(patches[0].keys() | patches[1].keys()):
        a, b = patches[0].get(key), patches[1].get(key)
        if a != b:
            verb = "added" if a is None else "removed" if b is None else "changed"
            lines.append(f"- spec patch {verb}: {_patch(b or a or {})}")
    rules = [{json.dumps(r.get("when"), sort_keys=True): r for r in side.get("on_error", [])} for side in (old, new)]
    for key in sorted(rules[0].keys() | rules[1].keys()):
        a, b = rules[0].get(key), rules[1].get(key)
        if a != b:
            verb = "added" if a is None else "removed" if b is None else "changed"
            lines.append(f"- server-wide error rule {verb}: {mapping_text(b or a or {})}")
    declared_old, declared_new = old.get("scopes", {}), new.get("scopes", {})
    for op_id in sorted(declared_old.keys() | declared_new.keys()):
        a, b = declared_old.get(op_id), declared_new.get(op_id)
        if a != b:
            verb = "declared" if a is None else "dropped" if b is None else "changed"
            text = scopes_text(b or a) if a is None or b is None else f"{scopes_text(a)} ⇒ {scopes_text(b)}"
            lines.append(f"- scopes of {_code(op_id)} {verb}: {text}")
    budgets_old, budgets_new = old.get("budgets", {}), new.get("budgets", {})
    for name in sorted(budgets_old.keys() | budgets_new.keys()):
        a, b = budgets_old.get(name), budgets_new.get(name)
        if a != b:
            lines.append(f"- budget {_code(name)}: {_size(a)} → {_size(b)}")
    return lines


def _patch(p: Mapping[str, Any]) -> str:
    text = f"{p.get('op')} {_code(str(p.get('path')))}"
    if "expect" in p:
        text += f", expecting {_json(p['expect'])}"
    if "value" in p:
        text += f", value {_json(p['value'])}"
    return f"{text} — {p.get('reason', '')}"


def _size(n: Any) -> str:
    return "—" if not isinstance(n, int) else f"{n:,}"
