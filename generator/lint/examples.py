"""Rule `example-output`: GitHub's documented answers, projected as the runtime projects them,
validate against the tool's outputSchema. A server must never fail its own schema on an answer
the spec documents (a field the spec leaves optional, typed non-null, did).

For every declared tool, each shaped output (and each output that is one `{step.path}` reference)
is computed from every documented success example of the operations its steps call, with the
runtime's own projector and template renderer, and checked against the output field's schema in
the tool's success branch. Hook tools fill their outputs in Python: their rows are not checked here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from generator.spec.answers import documented_answers
from ghmcp_runtime.core.declared import Declaration, Output
from ghmcp_runtime.core.projection import ShapeProjector, rows_in
from ghmcp_runtime.core.refs import MISSING, Ref, Scope, parse, render

if TYPE_CHECKING:
    from generator.build.ir import IRTool
    from generator.lint.ctx import Ctx

RULE = "example-output"


def check(ctx: Ctx) -> None:
    if ctx.document is None:
        return
    from generator.build.wire import runtime_shape

    projector = ShapeProjector({s.name: runtime_shape(s) for s in ctx.server.shapes})
    for tool in ctx.server.tools:
        if tool.declaration is not None:
            _tool(ctx, tool, tool.declaration, projector)


def _tool(ctx: Ctx, tool: IRTool, decl: Declaration, projector: ShapeProjector) -> None:
    assert ctx.document is not None
    properties = tool.success_schema.get("properties", {})
    step_ids = {s.id for s in decl.steps}
    for index, out in enumerate(decl.output):
        schema = properties.get(out.name)
        sources = [s for s in _sources(out) if s in step_ids]  # not a parameter or {response...}
        if schema is None or not sources:
            continue
        validator = Draft202012Validator(schema)
        for source in sources:
            step = decl.step(source)
            for label, body in documented_answers(ctx.document, step.operation.operation_id):
                value = _value(out, decl, source, body, projector)
                if value is MISSING:
                    continue
                problems = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
                if problems:
                    first = problems[0]
                    at = "/".join(str(p) for p in first.absolute_path)
                    ctx.error(_where(ctx, tool, out.name, index), RULE,
                              f"{tool.name}: output {out.name}{'/' + at if at else ''} fails its schema on "
                              f"{step.operation.operation_id}'s documented {label}: {_short(first.message)}",
                              "GitHub may answer so: let the shape field be null (`nullable: true`; "
                              "without `nullable` a field the spec leaves optional is nullable), or map "
                              "another field")
                    break  # one finding per output and operation


def _sources(out: Output) -> tuple[str, ...]:
    """The steps whose answer the output is made of: a shape's sources, or the step one whole
    `{step.path}` reference reads."""
    if out.shape is not None:
        return out.sources
    if out.version_of is not None or not isinstance(out.value, str):
        return ()
    parts = parse(out.value)
    if len(parts) == 1 and isinstance(parts[0], Ref) and not parts[0].filters:
        return (parts[0].path[0],)
    return ()


def _value(out: Output, decl: Declaration, source: str, body: Any, projector: ShapeProjector) -> Any:
    if out.shape is None:
        return render(out.value, Scope({}, {source: body}, {}))
    step = decl.step(source)
    detail = out.detail or "full"
    if not out.each:
        return _row(projector, out, body, detail) if isinstance(body, Mapping) else MISSING
    paged = step.paginate.items if step.paginate is not None and step.paginate.items else ""
    rows = rows_in(body, out.items_at or (tuple(paged.split(".")) if paged else ()))
    return [_row(projector, out, r, detail) for r in rows
            if isinstance(r, Mapping) and not (out.exclude and r.get(out.exclude) is not None)]


def _row(projector: ShapeProjector, out: Output, raw: Mapping[str, Any], detail: Any) -> dict[str, Any]:
    assert out.shape is not None
    row = projector.project(out.shape, raw, detail, {}, out.include)
    for name in out.omit:
        row.pop(name, None)
    return row


def _where(ctx: Ctx, tool: IRTool, name: str, index: int) -> Any:
    raw = ctx.located.data.get("tools", []) if ctx.located else []
    for i, t in enumerate(raw):
        if isinstance(t, dict) and t.get("name") == tool.name:
            for k, f in enumerate(t.get("output", [])):
                if isinstance(f, dict) and f.get("name") == name:
                    return ctx.at(("tools", i, "output", k))
    return ctx.where(tool, "output", index)


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
