"""A parameter's `resolve:` (a name for an id, looked up in a listing) → a runtime `Resolve`,
checked against the spec: the listing, its path and query bindings, the row paths, the types."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from generator.build.declare import error_spec
from generator.build.recipe_base import Counted, Loc, Report, bind_path, spec_fields, split_path
from generator.language.overrides import ParamDef
from generator.spec.pinned import SpecOperation
from generator.spec.schemas import schema_types, walk
from ghmcp_runtime.core.declared import Resolve
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.core.refs import references

JSON_TYPES = {"string": "string", "integer": "integer", "number": "integer", "boolean": "boolean"}


def build_resolve(p: ParamDef, loc: Loc, *, schema: Mapping[str, Any], names: Collection[str],
                  fill: Callable[[str], str | None], op: SpecOperation | None, operation: Operation | None,
                  items: Any, document: Any, codes: Collection[str], error: Report) -> tuple[Resolve, str | None] | None:
    """The runtime declaration of `p.resolve` and the JSON type of what a name becomes, or None
    once every problem is reported. A list parameter (`type: array`) resolves each string in it.

    `items` is the schema of one row of the listing (None when it answers no JSON array)."""
    r = p.resolve
    assert r is not None and p.name is not None
    rloc = (*loc, "resolve")
    before = Counted(error)
    each = "array" in schema_types(schema)
    kinds = schema_types(schema.get("items") or {}) if each else schema_types(schema)
    if each and "string" not in kinds:
        before.report((*loc, "items"), f"list parameter {p.name!r} resolves names but its items are not "
                      "strings", "declare `items: {type: string}` (names), or `type: [integer, string]` "
                      "in items for names and ids")
    elif not each and ("string" not in kinds or len([k for k in kinds if k != "null"]) < 2):
        before.report((*loc, "type"), f"parameter {p.name!r} resolves names but does not take both a "
                      "string and an id", "declare `type: [integer, string]`: a string is a name")
    if op is None or operation is None:
        return None  # reported where the operation was looked up
    if op.method.upper() != "GET" or items is None:
        before.report((*rloc, "call"), f"{r.call} is not a listing (GET answering a JSON array)",
                      "resolve reads the rows of a list operation")
        return None
    path = bind_path(r.call, r.path, op, rloc, fill, before.report)
    accepted = spec_fields(document, op, "query")
    for key in r.query:
        if key not in accepted:
            before.report((*rloc, "query", key), f"{r.call} has no query field {key!r}",
                          f"query fields are: {', '.join(sorted(accepted)) or 'none'}")
    for where, template in (("path", dict(r.path)), ("query", dict(r.query))):
        for ref in references(template):
            if ref.path[0] not in names:
                before.report((*rloc, where), f"template reads {ref.path[0]!r}, not a parameter",
                              f"parameters are: {', '.join(sorted(names))}")
    value_type = None
    for key in ("match", "value"):
        node, _ = walk(document, items, split_path(getattr(r, key)))
        if node is None:
            before.report((*rloc, key), f"{getattr(r, key)!r} is not a field of {r.call}'s rows",
                          "a dotted path in one row of the listing")
        elif key == "match" and node.get("type") != "string":
            before.report((*rloc, key), f"{r.match!r} is not a string in {r.call}'s rows",
                          "names are matched as text")
        elif key == "value":
            value_type = JSON_TYPES.get(str(node.get("type")))
    ids = sorted(k for k in kinds if k not in ("string", "null"))
    if value_type is not None and value_type not in ids and not (each and not ids):
        before.report((*rloc, "value"), f"{r.value!r} is a {value_type}, not an id parameter {p.name!r} "
                      f"takes ({', '.join(ids) or 'none'})", "resolve yields the id a name stands for")
    if r.unknown.code is None or r.unknown.code not in codes:
        before.report((*rloc, "unknown", "code"), f"resolve.unknown needs a declared error code, "
                      f"not {r.unknown.code!r}", "declare it under error_codes (e.g. milestone_not_found)")
    unknown = error_spec(r.unknown)
    if before.count or unknown is None:
        return None
    return Resolve(param=p.name, operation=operation, match=split_path(r.match),
                   value=split_path(r.value), unknown=unknown, path=path, query=dict(r.query),
                   choices=r.choices, pages=r.pages, each=each, keep=tuple(r.keep)), value_type
