"""OpenAPI 3.0 schema nodes → compact JSON Schema 2020-12 fragments, and path lookups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.spec.pinned import resolve_ref

JSON = Any
_KEEP = ("type", "enum", "format", "minimum", "maximum", "minLength", "maxLength", "pattern",
         "minItems", "maxItems")
_FORMATS = {"date-time", "uri", "email"}


def schema_types(schema: Mapping[str, JSON]) -> set[str]:
    """The JSON types `schema` names in `type` (a string or a list); empty when it names none."""
    kind = schema.get("type")
    if kind is None:
        return set()
    return {str(k) for k in kind} if isinstance(kind, list) else {str(kind)}


def accepted_types(document: JSON, node: JSON) -> set[str]:
    """Every JSON type a value of `node` may have (each branch of a oneOf/anyOf); empty when it
    names none (anything goes)."""
    node = resolve_ref(document, node)
    if not isinstance(node, Mapping):
        return set()
    if is_union(node):
        branches = [accepted_types(document, b) for b in node.get("oneOf", node.get("anyOf", []))]
        return set() if any(not b for b in branches) else set().union(*branches)
    return schema_types(node) | ({"integer"} if "number" in schema_types(node) else set())


def is_union(node: Mapping[str, JSON]) -> bool:
    return any(k in node for k in ("oneOf", "anyOf")) and "type" not in node


def object_branches(document: JSON, node: JSON) -> list[Mapping[str, JSON]]:
    """The object-like alternatives of a node (itself, allOf parts, oneOf/anyOf branches)."""
    node = resolve_ref(document, node)
    if not isinstance(node, Mapping):
        return []
    out: list[Mapping[str, JSON]] = []
    if "properties" in node or node.get("type") == "object":
        out.append(node)
    for key in ("allOf", "oneOf", "anyOf"):
        for part in node.get(key, []):
            out.extend(object_branches(document, part))
    return out


def property_of(document: JSON, node: JSON, name: str) -> JSON | None:
    for branch in object_branches(document, node):
        prop = branch.get("properties", {}).get(name)
        if prop is not None:
            return resolve_ref(document, prop)
    return None


def is_required(document: JSON, node: JSON, name: str) -> bool:
    """Does every value of `node` carry property `name`? Listed in `required` of the node or of
    one of its allOf parts, or of every oneOf/anyOf branch."""
    node = resolve_ref(document, node)
    if not isinstance(node, Mapping):
        return False
    if name in node.get("required", []):
        return True
    if any(is_required(document, part, name) for part in node.get("allOf", [])):
        return True
    branches = node.get("oneOf", node.get("anyOf", []))
    return bool(branches) and all(is_required(document, b, name) for b in branches)


def walk(document: JSON, node: JSON, path: tuple[str, ...]) -> tuple[JSON | None, bool]:
    """Follow `a.b[].c` steps; returns the node (None if absent) and whether the value can be
    missing: some step is nullable, or a property GitHub's schema does not require (an answer may
    leave it out, and a projected row then carries null)."""
    nullable = False
    current = resolve_ref(document, node)
    for step in path:
        if current is None:
            return None, nullable
        nullable = nullable or bool(current.get("nullable"))
        if step == "[]":
            items = current.get("items")
            current = resolve_ref(document, items) if items is not None else None
        else:
            nullable = nullable or not is_required(document, current, step)
            current = property_of(document, current, step)
    if current is not None:
        nullable = nullable or bool(current.get("nullable"))
    return current, nullable


def compact(document: JSON, node: JSON) -> dict[str, JSON]:
    """A small, closed JSON Schema for a leaf or list; objects keep only their declared type."""
    node = resolve_ref(document, node)
    if is_union(node):
        branches = [resolve_ref(document, b) for b in node.get("oneOf", node.get("anyOf", []))]
        types = [b.get("type") for b in branches]
        if types and all(t == types[0] for t in types) and types[0] != "object":
            return {"type": types[0]}
        objects = [b for b in branches if b.get("type") == "object" or "properties" in b]
        return compact(document, objects[0]) if objects else {}
    out: dict[str, JSON] = {}
    for key in _KEEP:
        if key not in node:
            continue
        value = node[key]
        if key == "format" and value not in _FORMATS:
            continue
        if key == "enum":
            value = [v for v in value if v is not None]
        out[key] = value
    if node.get("type") == "array" and "items" in node:
        out["items"] = compact(document, node["items"])
    if node.get("type") == "object":
        out["additionalProperties"] = False
    return out


def open_values(schema: dict[str, JSON]) -> dict[str, JSON]:
    """An output field's schema without the spec's enum (items included): GitHub adds values
    (author_association did), and a client validating results against a closed enum would then
    reject a real answer. Inputs keep theirs: GitHub refuses what it does not list."""
    out = {k: v for k, v in schema.items() if k != "enum"}
    if isinstance(out.get("items"), dict):
        out["items"] = open_values(out["items"])
    return out


PY_TYPES = {"string": "str", "integer": "int", "boolean": "bool", "number": "float"}


def python_type(schema: Mapping[str, JSON]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        inner = [python_type({**schema, "type": k}) for k in kind if k != "null"]
        base = " | ".join(dict.fromkeys(inner)) if inner else "None"
        return f"{base} | None" if "null" in kind else base
    if kind == "array":
        return f"list[{python_type(schema.get('items', {}))}]"
    values = [v for v in schema.get("enum", []) if v is not None]
    if values and all(isinstance(v, str) for v in values):
        return "Literal[" + ", ".join(repr(v) for v in values) + "]"
    if kind == "object":
        return "dict[str, Any]"
    return PY_TYPES.get(str(kind), "Any")
