"""A tool's `batch:` in the override file → a runtime `Batch` (ghmcp_runtime/engine/batch.py), checked
against the tools it runs: the single-item tool (`each`) and, for items a listing finds, that
listing (`source`, whose filters become one object parameter of this tool). The recipe's outputs
and error codes are derived here, never declared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.base.diagnostics import closest
from generator.build.declare import condition
from generator.build.ir import IROutputField, IRParam, IRTool, JSONObject
from generator.build.recipe_base import Counted, Loc, Report
from generator.language.overrides import (
    BatchCommentDef,
    BatchDef,
    BatchShowsDef,
    ConfirmDef,
    ToolDef,
)
from generator.spec.schemas import python_type, schema_types
from ghmcp_runtime.core.declared import Batch, BatchComment, BatchSource, Confirm, Resolve
from ghmcp_runtime.core.errors import ENVELOPE_OUTPUT_SCHEMA
from ghmcp_runtime.core.refs import references

LISTING_OUTPUTS = ("has_more", "next_cursor")  # what a source's pages carry besides their rows
CONFIRM_VALUES = frozenset({"count", "items"})  # what a confirm message may read besides parameters
BATCH_CODES = frozenset({"invalid_field", "cursor_expired", "rate_limited", "internal_error"})

ITEM_ERROR = {"description": "Only when outcome is error: the single-item tool's envelope.",
              "type": "object", **ENVELOPE_OUTPUT_SCHEMA}


@dataclass(frozen=True, slots=True)
class BuiltBatch:
    batch: Batch
    params: tuple[IRParam, ...]  # the tool's parameters, the source's filter parameter added
    output: tuple[IROutputField, ...]
    codes: frozenset[str]


def build_confirm(raw: ConfirmDef, loc: Loc, names: set[str], error: Report) -> Confirm:
    """A declared confirmation: its condition and message read this tool's parameters."""
    when = condition(raw.when) if raw.when is not None else None
    if when is not None and when.param not in names:
        error((*loc, "when"), f"confirm names unknown parameter {when.param!r}",
              f"parameters are: {', '.join(sorted(names))}")
    for ref in references(raw.message):
        if ref.path[0] not in names | CONFIRM_VALUES:
            error((*loc, "message"), f"the message reads {ref.path[0]!r}: not a parameter",
                  "it may read parameters, {count} and {items}")
    return Confirm(message=raw.message.strip(), when=(when,) if when else (), over=raw.over)


def build_batch(tool: ToolDef, loc: Loc, params: Sequence[IRParam], tools: Mapping[str, IRTool],
                resolve: tuple[Resolve, ...], error: Report) -> BuiltBatch | None:
    """The declaration, or None once every problem is reported."""
    raw = tool.batch
    assert raw is not None
    bloc = (*loc, "batch")
    problems = Counted(error)
    report = problems.report
    names = {p.name: p for p in params}
    each = _tool(raw.each, tools, (*bloc, "each"), report)
    if each is None:
        return None
    ran = [each, *([tools[raw.source.tool]] if raw.source and raw.source.tool in tools else [])]
    if apart := [t for t in ran if t.toolset != tool.toolset]:
        report((*loc, "toolset"), f"{apart[0].name} is in toolset {apart[0].toolset!r}, this "
               f"batch in {tool.toolset!r}: --toolsets {tool.toolset} would hide the batch with it",
               "put the batch in the toolset of the tools it runs")
    each_params = each.input_schema["properties"]
    if raw.item not in each_params:
        report((*bloc, "item"), f"{raw.item!r} is not a parameter of {raw.each}",
               f"its parameters are: {', '.join(each_params)}")
    changed = each.success_schema["properties"].get(raw.changed)
    if changed is None or "array" not in schema_types(changed):
        report((*bloc, "each"), f"{raw.each} does not answer {raw.changed!r}",
               "a batch reports what each item changed: run a partial update (compare) per item")
    if each.declaration is not None and any(
            s.operation.method not in ("GET", "HEAD") and s.compare is None and s.update is None
            for s in each.declaration.steps):
        report((*bloc, "each"), f"{raw.each} writes without `compare`, so it cannot plan a dry run",
               "run a partial update per item (a write step with compare or update)")
    if raw.items is None and raw.source is None:
        report(bloc, "a batch needs `items` (a list parameter), `source` (a listing), or both",
               "items: issue_numbers, or source: {tool: ..., param: ...}")
    if raw.items is not None:
        _check_items(raw, names, each_params, (*bloc, "items"), report)
    for key, value in raw.arguments.items():
        if key not in each_params:
            guess = closest(key, list(each_params))
            report((*bloc, "arguments", key), f"{raw.each} has no parameter {key!r}",
                   f"did you mean {guess!r}?" if guess else f"parameters: {', '.join(each_params)}")
        for ref in references(value):
            if ref.path[0] not in names:
                report((*bloc, "arguments", key), f"template reads {ref.path[0]!r}: not a parameter",
                       f"parameters are: {', '.join(sorted(names))}")
    for name, param in raw.zip.items():
        if name not in names or "array" not in schema_types(names[name].schema):
            report((*bloc, "zip", name), f"zip names {name!r}, not an array parameter",
                   "each of its values goes with the item at the same position of `items`")
        if param not in each_params:
            report((*bloc, "zip", name), f"{raw.each} has no parameter {param!r}",
                   f"its parameters are: {', '.join(each_params)}")
        if raw.items is None:
            report((*bloc, "zip"), "zip needs `items` (values go with listed items by position)",
                   "name the list parameter under items")
    for key, value in (("dry_run", raw.dry_run), ("cursor", raw.cursor), ("key", raw.key),
                       *(("scope", s) for s in raw.scope)):
        if value is not None and value not in names:
            report((*bloc, key), f"batch names unknown parameter {value!r}",
                   f"parameters are: {', '.join(sorted(names))}")
    if raw.dry_run in names and "boolean" not in schema_types(names[raw.dry_run].schema):
        report((*bloc, "dry_run"), f"{raw.dry_run!r} is not a boolean parameter",
               "declare it with type: boolean, default: false")
    confirm = build_confirm(raw.confirm, (*bloc, "confirm"), set(names), report) if raw.confirm else None
    shown = _shows(raw.shows, each, (*bloc, "shows"), report) if raw.shows else {}
    comment = _comment(raw.comment, tool, names, tools, (*bloc, "comment"), report) if raw.comment else None
    source, filters = None, None
    if raw.source is not None:
        built = _source(raw, tools, names, (*bloc, "source"), report)
        if built is not None:
            source, filters = built
    if problems.count:
        return None
    out_params = list(params)
    if filters is not None:
        out_params.append(filters)
    codes = set(each.error_codes) | BATCH_CODES | ({"confirmation_declined"} if confirm else set())
    if comment is not None:
        codes |= set(comment[1].error_codes)
    if source is not None:
        codes |= set(tools[source.tool].error_codes)
    declaration = Batch(
        each=raw.each, item=raw.item, items=raw.items, source=source, arguments=dict(raw.arguments),
        zip=dict(raw.zip), changed=raw.changed,
        ignored="ignored_fields" if "ignored_fields" in each.success_schema["properties"] else None,
        dry_run=raw.dry_run, cursor=raw.cursor, key=raw.key, scope=tuple(raw.scope),
        max_items=raw.max_items, resolve=resolve, confirm=confirm,
        defaults={p.name: p.schema["default"] for p in params if "default" in p.schema},
        transforms={p.name: p.transform for p in params if p.transform},
        shows_from=raw.shows.source if raw.shows else None, shows=tuple(shown),
        comment=comment[0] if comment else None)
    item_schema = {k: v for k, v in each_params[raw.item].items() if k in ("type", "minimum")}
    return BuiltBatch(declaration, tuple(out_params),
                      batch_outputs(raw, item_schema, declaration.ignored is not None, source is not None,
                                    shown, comment[2] if comment else None),
                      frozenset(codes))


def _shows(raw: BatchShowsDef, each: IRTool, loc: Loc, report: Report) -> dict[str, JSONObject]:
    """Field -> schema of what a changed item's row shows of `each`'s answer object."""
    holder = each.success_schema["properties"].get(raw.source, {})
    props = holder.get("properties") if holder.get("type") == "object" else None
    if props is None:
        report((*loc, "from"), f"{each.name} answers no object {raw.source!r}",
               f"its outputs: {', '.join(each.success_schema['properties'])}")
        return {}
    out: dict[str, JSONObject] = {}
    for k, name in enumerate(raw.fields):
        if name not in props:
            guess = closest(name, list(props))
            report((*loc, "fields", k), f"{each.name}'s {raw.source} has no field {name!r}",
                   f"did you mean {guess!r}?" if guess else f"its fields: {', '.join(props)}")
        elif name not in holder.get("required", []):
            report((*loc, "fields", k), f"{each.name}'s {raw.source} does not always carry {name!r}",
                   "show fields its answer always has (include them in its row)")
        else:
            out[name] = {k2: v for k2, v in props[name].items() if k2 != "description"}
    return out


def _comment(raw: BatchCommentDef, tool: ToolDef, names: Mapping[str, IRParam], tools: Mapping[str, IRTool],
             loc: Loc, report: Report) -> tuple[BatchComment, IRTool, JSONObject] | None:
    """The comment a batch posts on each changed item, checked against the tool that posts it;
    with the tool and the schema of the id its answer gives."""
    posting = _tool(raw.tool, tools, (*loc, "tool"), report)
    if posting is None:
        return None
    before = Counted(report)
    params = posting.input_schema["properties"]
    if posting.toolset != tool.toolset:
        before.report((*loc, "tool"), f"{raw.tool} is in toolset {posting.toolset!r}, this batch in "
                      f"{tool.toolset!r}", "post through a tool of the batch's toolset")
    if raw.param not in names or "string" not in schema_types(names[raw.param].schema):
        before.report((*loc, "param"), f"{raw.param!r} is not a text parameter of {tool.name}",
                      "declare it (type: string) and name it here")
    for key in (raw.body, *([raw.key] if raw.key else []), *raw.arguments):
        if key not in params:
            before.report((*loc, "arguments" if key in raw.arguments else "body" if key == raw.body else "key"),
                          f"{raw.tool} has no parameter {key!r}", f"its parameters: {', '.join(params)}")
    for key, value in raw.arguments.items():
        for ref in references(value):
            if ref.path[0] not in names:
                before.report((*loc, "arguments", key), f"template reads {ref.path[0]!r}: not a parameter",
                              f"parameters are: {', '.join(sorted(names))}")
    node: Any = posting.success_schema
    for step in raw.id.split("."):
        node = node.get("properties", {}).get(step) if isinstance(node, dict) else None
    if not isinstance(node, dict) or not schema_types(node) & {"integer", "string"}:
        before.report((*loc, "id"), f"{raw.id!r} is not an id in {raw.tool}'s answer",
                      "a dotted path to an integer or string, e.g. comment.comment_id")
    if before.count:
        return None
    assert isinstance(node, dict)
    built = BatchComment(param=raw.param, tool=raw.tool, body=raw.body, arguments=dict(raw.arguments),
                         key=raw.key, id=tuple(raw.id.split(".")))
    return built, posting, {k: v for k, v in node.items() if k != "description"}


def _tool(name: str, tools: Mapping[str, IRTool], loc: Loc, report: Report) -> IRTool | None:
    found = tools.get(name)
    if found is None:
        guess = closest(name, list(tools))
        report(loc, f"{name!r} is not a tool of this server (or it is a batch itself)",
               f"did you mean {guess!r}?" if guess else f"tools: {', '.join(sorted(tools))}")
    return found


def _check_items(raw: BatchDef, names: Mapping[str, IRParam], each_params: Mapping[str, Any], loc: Loc,
                 report: Report) -> None:
    assert raw.items is not None
    param = names.get(raw.items)
    if param is None or "array" not in schema_types(param.schema):
        report(loc, f"items names {raw.items!r}, not an array parameter", "e.g. issue_numbers: [integer]")
        return
    if param.schema.get("maxItems", 10**9) > raw.max_items:
        report(loc, f"{raw.items!r} may hold more than max_items ({raw.max_items}) items",
               f"set max_items: {raw.max_items} on the parameter")
    wanted = schema_types(each_params.get(raw.item, {}))
    if not schema_types(param.schema.get("items", {})) <= wanted:
        report(loc, f"the items of {raw.items!r} are not what {raw.each}'s {raw.item!r} takes",
               f"give the list items the type of {raw.item}")


def _source(raw: BatchDef, tools: Mapping[str, IRTool], names: Mapping[str, IRParam], loc: Loc,
            report: Report) -> tuple[BatchSource, IRParam] | None:
    """The listing and the filter parameter copied from its inputSchema (minus what is fixed)."""
    s = raw.source
    assert s is not None
    listing = _tool(s.tool, tools, (*loc, "tool"), report)
    if listing is None:
        return None
    props = listing.input_schema["properties"]
    outputs = listing.success_schema["properties"]
    rows = outputs.get(s.rows, {})
    row_fields = rows.get("items", {}).get("properties", {}) if rows.get("type") == "array" else {}
    ok = True
    if "cursor" not in props or any(o not in outputs for o in LISTING_OUTPUTS):
        report((*loc, "tool"), f"{s.tool} is not a paged listing (cursor in, has_more and next_cursor out)",
               "name a tool that lists rows page by page, e.g. a search")
        ok = False
    if s.field not in row_fields:
        report((*loc, "rows"), f"{s.tool} answers no rows {s.rows!r} with a field {s.field!r}",
               f"its outputs: {', '.join(outputs)}")
        ok = False
    for key, value in s.fixed.items():
        if key not in props:
            report((*loc, "fixed", key), f"{s.tool} has no parameter {key!r}",
                   f"its parameters are: {', '.join(props)}")
            ok = False
        for ref in references(value):
            if ref.path[0] not in names:
                report((*loc, "fixed", key), f"template reads {ref.path[0]!r}: not a parameter",
                       f"parameters are: {', '.join(sorted(names))}")
                ok = False
    if s.param in names:
        report((*loc, "param"), f"{s.param!r} is already a parameter", "the batch adds it: do not declare it")
        ok = False
    if not ok:
        return None
    taken = {*s.fixed, "cursor"}
    filters = {k: _typed(p) for k, p in props.items() if k not in taken}
    required = [r for r in listing.input_schema.get("required", []) if r in filters]
    schema: JSONObject = {"description": f"{s.description.strip()} {s.omitted.strip()}", "type": "object",
                          "additionalProperties": False, "properties": filters}
    if required:
        schema["required"] = required
    param = IRParam(name=s.param, required=False, schema=schema, python_type=python_type(schema),
                    source=None)
    return BatchSource(tool=s.tool, param=s.param, fixed=dict(s.fixed), rows=s.rows, item_field=s.field), param


def _typed(schema: JSONObject) -> JSONObject:
    """A listing parameter as the filter object publishes it: types and enums (the listing's
    description and bounds stay with it; it checks them when the batch calls it, and a refusal
    names `<param>.<field>`)."""
    out = {k: v for k, v in schema.items() if k in ("type", "enum")}
    if isinstance(schema.get("items"), dict):
        out["items"] = _typed(schema["items"])
    return out


def batch_outputs(raw: BatchDef, item_schema: JSONObject, ignored: bool, listing: bool,
                  shown: Mapping[str, JSONObject] | None = None,
                  comment_id: JSONObject | None = None) -> tuple[IROutputField, ...]:
    """The recipe's outputs: one row per item handled, the counts, the cursor, why it stopped."""
    row: JSONObject = {"type": "object", "additionalProperties": False, "properties": {
        raw.item: item_schema,
        "outcome": {"type": "string", "enum": ["changed", "unchanged", "error"]},
        raw.changed: {"description": "Omitted when outcome is error.", "type": "array", "items": {"type": "string"}},
        **({"ignored_fields": {"description": "Only when GitHub ignored some.", "type": "array",
                               "items": {"type": "string"}}} if ignored else {}),
        "error": ITEM_ERROR,
        **(shown or {}),
        **({"comment_id": {"description": "Only when the call's comment was posted on it.", **comment_id},
            "comment_error": {**ITEM_ERROR, "description": "Only when posting the call's comment failed."}}
           if comment_id is not None else {}),
    }, "required": [raw.item, "outcome"]}
    if shown:  # one sentence covers them all (rule presence: the object's description)
        row = {"description": f"{', '.join(shown)}: only when changed (not in a dry run), as the item is now.",
               **row}
    count = {"type": "integer"}
    fields: list[tuple[str, bool, JSONObject]] = [
        ("items", True, {"description": f"Handled items in order; {raw.changed} unless error.",
                         "type": "array", "items": row}),
        ("summary", True, {"type": "object", "additionalProperties": False,
                           "properties": {"changed": count, "unchanged": count, "error": count,
                                          **({"commented": {"description": "Only with the comment.", **count}}
                                             if comment_id is not None else {})},
                           "required": ["changed", "unchanged", "error"]}),
        ("has_more", True, {"type": "boolean"}),
        ("next_cursor", False, {"description": "Only when has_more: continue with it.", "type": "string"}),
        ("stopped", False, {
            "description": "Only when stopped early (rate_limited: wait retry_after_ms); next_cursor resumes.",
            "type": "object", "additionalProperties": False,
            "properties": {"reason": {"type": "string", "enum": ["rate_limited", "cancelled", "credential"]},
                           "retry_after_ms": {"type": ["integer", "null"]}},
            "required": ["reason", "retry_after_ms"]}),
    ]
    if listing:
        fields.append(("truncated", False, {"description": "Only when the listing could not reach every "
                                            "match: narrow it.", "type": "boolean"}))
    if raw.dry_run:
        fields.append(("dry_run", False, {"description": "Only when dry_run: nothing was written.",
                                          "type": "boolean"}))
    return tuple(IROutputField(name=name, required=required, schema=schema, python_type=_py(schema))
                 for name, required, schema in fields)


def _py(schema: JSONObject) -> str:
    kind = schema.get("type")
    if kind == "object":
        return "dict[str, Any]"
    if kind == "array":
        return "list[dict[str, Any]]"
    return python_type(schema)

