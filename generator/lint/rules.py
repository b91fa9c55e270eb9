"""Contract rules over the IR and the wire `tools/list`. Errors stop generation; see docs/lint-rules.md."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from generator.base.diagnostics import Diagnostic
from generator.base.yamlsrc import Located
from generator.build.field_notes import SAID_IN_SUMMARY
from generator.build.ir import IRServer, IRTool
from generator.build.wire import compact_bytes, model_visible, wire_tool
from generator.lint import answers as lint_answers
from generator.lint import behaviour as lint_behaviour
from generator.lint import examples as lint_examples
from generator.lint import text as lint_text
from generator.lint.compose import Peer
from generator.lint.ctx import Ctx
from generator.spec.pinned import index_operations, request_body_schema, resolve_ref
from generator.spec.schemas import is_union
from ghmcp_runtime.core.errors import ENVELOPE_OUTPUT_SCHEMA
from ghmcp_runtime.core.forges import FORGES
from ghmcp_runtime.guards.rules import Rule, check_rules

COMBINATORS = ("oneOf", "anyOf", "allOf")
# Open on purpose: a repair's arguments are another tool's arguments.
# The error branch is open on purpose: its closed schema is the error-catalog resource.
OPEN_BY_DESIGN = ("/oneOf/1",)
UPPER_BOUNDS = ("maxLength", "maxItems", "maximum", "exclusiveMaximum")
LOWER_BOUNDS = ("minLength", "minItems", "minimum", "exclusiveMinimum")
# says when an optional output field is left out (its own description, or its object's)
PRESENCE = re.compile(r"\b(omitted|absent|only (when|with|while|if)|present (only |exactly )?when)\b",
                      re.IGNORECASE)
OVERRIDE_KEY = {"maxLength": "max_length", "maxItems": "max_items", "maximum": "maximum",
                "minLength": "min_length", "minItems": "min_items", "minimum": "minimum",
                "pattern": "pattern"}


def lint(server: IRServer, located: Located | None = None,
         document: Mapping[str, Any] | None = None,
         peers: Sequence[Peer] = ()) -> list[Diagnostic]:
    """`peers`: the other override files of the server's forge (composability spans the forge)."""
    ctx = Ctx(server, {t.name: wire_tool(t) for t in server.tools}, located, document, peers=peers)
    for tool in server.tools:
        _schemas(ctx, tool)
        _output_accepts(ctx, tool)
        _presence(ctx, tool)
        _examples(ctx, tool)
        _spec_bounds(ctx, tool)
        _description_budget(ctx, tool)
    _total_budget(ctx)
    _model_budget(ctx)
    _composability(ctx, peers)
    lint_text.check(ctx)
    lint_behaviour.check(ctx)
    lint_answers.check(ctx)
    lint_examples.check(ctx)
    # imported here: openapi-schema-validator pulls in pydantic-settings and asyncio (~0.1 s), and
    # a run whose files are all reused from the result cache lints none
    from generator.lint import spec_examples as lint_spec_examples

    lint_spec_examples.check(ctx)
    return ctx.out


# -- schemas ---------------------------------------------------------------------------------


def _object_nodes(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield path, schema
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    yield from _object_nodes(sub, f"{path}.{name}")
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                yield from _object_nodes(value, f"{path}[]")
            elif key in COMBINATORS and isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from _object_nodes(sub, f"{path}/{key}/{i}")


def names_the_envelope(node: Mapping[str, Any]) -> bool:
    """The error envelope named by its always-present fields (like each tool's error branch)."""
    return "properties" not in node and node.get("required") == ENVELOPE_OUTPUT_SCHEMA["required"]


def _keys(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield key
            yield from _keys(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _keys(value)


def _schemas(ctx: Ctx, tool: IRTool) -> None:
    wire = ctx.wire[tool.name]
    for label in ("inputSchema", "outputSchema"):
        for path, node in _object_nodes(wire[label]):
            if path in OPEN_BY_DESIGN or (path == "" and "oneOf" in node and label == "outputSchema"):
                continue
            if label == "outputSchema" and names_the_envelope(node):
                continue  # a batch item's error: the error branch's envelope, closed in the catalog
            if node.get("additionalProperties") is not False:
                param = path[1:].split(".")[0].removesuffix("[]") if label == "inputSchema" else ""
                where = ctx.param_where(tool, param) if param else ctx.where(tool)
                ctx.error(where, "closed-schemas",
                          f"{tool.name}: {label} object at '{path or '/'}' is not closed",
                          "set additionalProperties: false (and list its properties)")
    refs = sorted({k for k in _keys(wire["inputSchema"]) if k in ("$ref", "$defs", "definitions")})
    if refs:
        ctx.error(ctx.where(tool, "params"), "no-refs",
                  f"{tool.name}: inputSchema uses {', '.join(refs)}",
                  "inline the schema: clients without a resolver reject references")
    top = [k for k in COMBINATORS if k in wire["inputSchema"]]
    if top:
        ctx.error(ctx.where(tool), "no-top-combinators",
                  f"{tool.name}: inputSchema has a top-level {', '.join(top)}",
                  "keep one object root; express cross-field constraints with rules:")
    if wire["outputSchema"].get("type") != "object":
        ctx.error(ctx.where(tool, "output"), "object-output",
                  f"{tool.name}: outputSchema root is not an object",
                  "wrap the payload in an object (structuredContent is an object)")


# -- output accepts success and envelope -------------------------------------------------------


class _Unbuildable(Exception):
    """The schema admits no value (e.g. an empty enum)."""


class _Unknown(Exception):
    """No sample found (e.g. an unusual pattern): the check is skipped, not failed."""


_SAMPLES = ("x", "abc", "abc123", "a-b.c_d", "A1b2C3d4", "2020-01-01T00:00:00Z", "https://example.com/x")


def synthesize(schema: Any, everything: bool = False) -> Any:
    """A value valid under a simple schema (required properties only unless `everything`)."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None] or schema["enum"]
        if not values:
            raise _Unbuildable("an empty enum")
        return values[0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "oneOf" in schema:
        return synthesize(schema["oneOf"][0], everything)
    if kind == "object":
        props = schema.get("properties", {})
        names = props if everything else schema.get("required", [])
        return {name: synthesize(props.get(name, {}), everything) for name in names}
    if kind == "array":
        return [synthesize(schema.get("items", {}), everything)] * int(schema.get("minItems", 0))
    if kind == "integer" or kind == "number":
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "string":
        return _string(schema)
    return None


def _string(schema: Mapping[str, Any]) -> str:
    low, high = int(schema.get("minLength", 0)), int(schema.get("maxLength", 1 << 30))
    pattern = schema.get("pattern")
    fmt = schema.get("format")
    candidates = [s for s in _SAMPLES if low <= len(s) <= high]
    if fmt == "date-time":
        candidates.insert(0, "2020-01-01T00:00:00Z")
    elif fmt == "uri":
        candidates.insert(0, "https://example.com/x")
    for value in candidates:
        if pattern is None or re.search(pattern, value):
            return value
    if high < low:
        raise _Unbuildable(f"minLength {low} exceeds maxLength {high}")
    if pattern is None:
        return "x" * low
    raise _Unknown(pattern)


def _envelopes(tool: IRTool) -> list[tuple[str, Any]]:
    base = {"code": "internal_error", "message": "x", "temporary": False, "retry_after_ms": None,
            "request_id": "req_1", "fingerprint": "fp"}
    full = {**base, "details": {"field": "x", "reason": "x"},
            "repair": {"next_step": "x", "tool": tool.name, "arguments": {}}}
    return [("a minimal error envelope", base), ("an error envelope with details and repair", full)]


def _output_accepts(ctx: Ctx, tool: IRTool) -> None:
    schema = ctx.wire[tool.name]["outputSchema"]
    if schema.get("type") != "object":
        return  # object-output reports it
    validator = Draft202012Validator(schema)
    samples = _envelopes(tool)
    for label, everything in (("a success payload of its required fields", False),
                              ("a success payload with every field", True)):
        try:
            samples.append((label, synthesize(tool.success_schema, everything)))
        except _Unbuildable as exc:
            ctx.error(ctx.where(tool, "output"), "output-accepts",
                      f"{tool.name}: cannot build {label}: {exc}",
                      "make every declared output field satisfiable")
        except _Unknown:
            continue
    for label, sample in samples:
        problems = sorted(validator.iter_errors(sample), key=lambda e: e.message)
        if problems:
            ctx.error(ctx.where(tool, "output"), "output-accepts",
                      f"{tool.name}: outputSchema rejects {label}: {_why(problems[0])}",
                      "the output root must accept exactly one of the success payload and the error "
                      "envelope (an output field must not mimic the envelope)")


def _presence(ctx: Ctx, tool: IRTool) -> None:
    """One presence rule: an output field outside `required` says when it is absent, in its own
    description or its object's (or the runtime's fields the summary explains: field_notes.py);
    every other field is always there (null when empty)."""
    for path, node in _object_nodes(tool.success_schema):
        if PRESENCE.search(str(node.get("description", ""))):
            continue
        required = set(node.get("required", []))
        for name, sub in node.get("properties", {}).items():
            if name in required or name in SAID_IN_SUMMARY or PRESENCE.search(str(sub.get("description", ""))):
                continue
            top = (path[1:] or name).split(".")[0].removesuffix("[]")
            index = next((k for k, f in enumerate(tool.output) if f.name == top), None)
            ctx.error(ctx.where(tool, "output", index) if index is not None else ctx.where(tool, "output"),
                      "presence", f"{tool.name}: optional output field '{path}.{name}' does not say "
                      "when it is absent",
                      "make it always present (null when empty), or say when it is left out in its "
                      "description ('Omitted when …', 'Present only when …')")


def _why(error: Any) -> str:
    if error.validator == "oneOf" and not error.context:
        return "it matches both the success branch and the error-envelope branch of oneOf"
    if error.validator == "oneOf":
        deepest = max(error.context, key=lambda e: len(e.absolute_path))
        where = "/".join(str(p) for p in deepest.absolute_path) or "/"
        return f"no oneOf branch matches (at {where}: {deepest.validator} {deepest.validator_value!r})"
    return _short(error.message)


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- examples --------------------------------------------------------------------------------

_EXAMPLE = re.compile(r"Example:\s*(\{.*\})\s*$", re.MULTILINE)


def _examples(ctx: Ctx, tool: IRTool) -> None:
    validator = Draft202012Validator(tool.checked_input_schema)  # as the server checks it
    examples: list[tuple[str, Any]] = [("the example", tool.example)]
    for match in _EXAMPLE.finditer(ctx.wire[tool.name]["description"]):
        try:
            examples.append(("a description example", json.loads(match.group(1))))
        except json.JSONDecodeError as exc:
            ctx.error(ctx.where(tool, "description"), "example-valid",
                      f"{tool.name}: a description example is not JSON: {exc.msg}",
                      "write examples as JSON objects after 'Example:'")
    seen: list[Any] = []
    for label, example in examples:
        if example in seen:
            continue
        seen.append(example)
        problems = sorted(validator.iter_errors(example), key=lambda e: e.message)
        reason = problems[0].message if problems else _rule_violation(tool, example)
        if reason:
            ctx.error(ctx.where(tool, "example"), "example-valid",
                      f"{tool.name}: {label} does not validate against the inputSchema: {_short(reason)}",
                      "fix the example or the parameters")


def _rule_violation(tool: IRTool, example: Any) -> str:
    """The first rule the example breaks, judged by the runtime's own check."""
    if not isinstance(example, dict):
        return "not an object"
    for rule in tool.rules:
        checked = Rule(kind=rule.kind, fields=rule.fields, reason=rule.reason,  # type: ignore[arg-type]
                       when=rule.when, equals=rule.equals, values=rule.values, normalize=rule.normalize,
                       among=rule.among)
        if check_rules(example, (checked,)) is not None:
            shown = f"{rule.when} -> " if rule.when else ""
            return f"rule {rule.kind}({shown}{', '.join(rule.fields)}) is not met"
    return ""


# -- bounds GitHub declares ------------------------------------------------------------------


def _spec_schema(document: Mapping[str, Any], ops: Mapping[str, Any], source: str) -> Any:
    match = re.fullmatch(r"([\w\-/]+)#(path|query|body)\.([\w\-\[\]]+)", source)
    if not match or match.group(1) not in ops:
        return None
    op_id, where, name = match.groups()
    op = ops[op_id]
    if where == "body":
        from generator.spec.schemas import object_branches

        for branch in object_branches(document, request_body_schema(document, op)):
            if name in branch.get("properties", {}):
                return resolve_ref(document, branch["properties"][name])
        return None
    for raw in [*op.path_item.get("parameters", []), *op.node.get("parameters", [])]:
        param = resolve_ref(document, raw)
        if param.get("in") == where and param.get("name") == name:
            return resolve_ref(document, param.get("schema", {}))
    return None


def _branch(document: Mapping[str, Any], node: Any, kind: Any) -> Mapping[str, Any]:
    node = resolve_ref(document, node)
    if not isinstance(node, Mapping):
        return {}
    if is_union(node):
        for sub in node.get("oneOf", node.get("anyOf", [])):
            sub = resolve_ref(document, sub)
            if isinstance(sub, Mapping) and sub.get("type") == kind:
                return sub
        return {}
    return node


def _kind(schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list):
        return next((k for k in kind if k != "null"), None)
    return kind


def _bound_gaps(mine: Mapping[str, Any], theirs: Mapping[str, Any], where: str) -> Iterator[tuple[str, str]]:
    for key in (*UPPER_BOUNDS, *LOWER_BOUNDS):
        if key not in theirs:
            continue
        limit, have = theirs[key], mine.get(key)
        upper = key in UPPER_BOUNDS
        if have is None:
            yield f"drops GitHub's {where}{key} {limit}", f"{where}{OVERRIDE_KEY.get(key, key)}: {limit}"
        elif (have > limit) if upper else (have < limit):
            yield (f"allows {where}{key} {have}, looser than GitHub's {limit}",
                   f"{where}{OVERRIDE_KEY.get(key, key)}: {limit} (or stricter)")
    if "pattern" in theirs and "pattern" not in mine:
        yield f"drops GitHub's {where}pattern", f"{where}pattern: {json.dumps(theirs['pattern'])}"


def _spec_bounds(ctx: Ctx, tool: IRTool) -> None:
    if ctx.document is None:
        return
    ops = index_operations(ctx.document)
    for param in tool.params:
        if not param.source:
            continue
        kind = _kind(param.schema)
        theirs = _branch(ctx.document, _spec_schema(ctx.document, ops, param.source), kind)
        gaps = list(_bound_gaps(param.schema, theirs, ""))
        if kind == "array" and "items" in theirs:
            items = param.schema.get("items", {})
            gaps += _bound_gaps(items, _branch(ctx.document, theirs["items"], _kind(items)), "items.")
        for message, fix in gaps:
            ctx.error(ctx.param_where(tool, param.name, "from"), "spec-bounds",
                      f"{tool.name}: parameter {param.name} {message} ({param.source})",
                      f"carry the bound over: {fix}")


# -- budgets ---------------------------------------------------------------------------------

BUDGET_RULES = ("budget-description", "budget-total", "budget-model")  # on failure, generate prints the per-tool table


def _description_budget(ctx: Ctx, tool: IRTool) -> None:
    size = len(ctx.wire[tool.name]["description"].encode("utf-8"))
    budget = ctx.server.description_budget_bytes
    if size > budget:
        ctx.error(ctx.where(tool, "description"), "budget-description",
                  f"{tool.name}: description is {size} bytes (example included), over the per-tool "
                  f"budget of {budget}", "tighten the description, or raise "
                  "server.description_budget_bytes deliberately")


def _total_budget(ctx: Ctx) -> None:
    """The whole tools/list (output schemas included) counts what a client stores, not what a
    model reads: `make generate` reports it, and only a declared budget enforces it."""
    total = compact_bytes({"tools": list(ctx.wire.values())})
    budget = ctx.server.tools_budget_bytes
    if budget is not None and total > budget:
        count = max(1, len(ctx.wire))
        ctx.error(ctx.at(("server", "tools_budget_bytes")), "budget-total",
                  f"tools/list is {total:,} bytes ({total // count:,} per tool), over the budget of "
                  f"{budget:,} ({budget // count:,} per tool)",
                  "shorten descriptions, parameter wording or output fields (the bytes per tool follow "
                  "the diagnostics), or raise server.tools_budget_bytes deliberately "
                  "(docs/overrides.md#server)")


def _model_budget(ctx: Ctx) -> None:
    """What a model reads (name, description, inputSchema per tool) is what costs context; the
    outputSchemas stay with the client, so they count in budget-total only."""
    total = compact_bytes(model_visible(list(ctx.wire.values())))
    budget = ctx.server.model_budget_bytes
    if total > budget:
        count = max(1, len(ctx.wire))
        ctx.error(ctx.at(("server", "model_budget_bytes")), "budget-model",
                  f"model-visible tools/list (name, description, inputSchema) is {total:,} bytes "
                  f"({total // count:,} per tool), over the budget of {budget:,} ({budget // count:,} per tool)",
                  "shorten descriptions and parameter wording (`make generate` prints the model-visible "
                  "bytes), or raise server.model_budget_bytes deliberately")


# -- composability ---------------------------------------------------------------------------


def _composability(ctx: Ctx, peers: Sequence[Peer]) -> None:
    """Every identifier a tool requires is returned by another tool of the forge (any toolset of
    any of its override files) or resolved by the tool itself: an agent can always find the value
    it must pass (generator/lint/compose.py)."""
    from generator.lint.compose import sources

    found = sources(ctx.server, peers)
    forge = FORGES[ctx.server.forge].display_name
    for tool in ctx.server.tools:
        for param, producers in found[tool.name].items():
            if not producers:
                ctx.error(ctx.param_where(tool, param), "composability",
                          f"{tool.name}: no toolset of the {forge} server returns {param}, which it "
                          f"requires (searched {len(peers) + 1} override file(s) of the forge)",
                          f"return a field named {param} from a tool of any {forge} toolset (a "
                          "qualified name it ends with counts: issue_number for sub_issue_number), "
                          "resolve it with `resolve:`, or take what agents have instead")
