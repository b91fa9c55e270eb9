"""Every value the override file gives a parameter is one the parameter's final schema accepts: a
`default` (the runtime applies it unchecked: a value outside the spec's enum would reach GitHub),
the value a condition compares it with (`when: {state: closed}` on a step, a guard, a
confirmation), a rule's `equals` and an `excludes` rule's `values` (a condition no argument can
meet is a step that never runs, a rule that never fires).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator

from generator.base.diagnostics import Diagnostic, Level
from generator.base.yamlsrc import Located
from generator.build.ir import IRParam
from generator.language.overrides import ToolDef
from ghmcp_runtime.guards.validation import with_checks

Loc = tuple[str | int, ...]
RULE = "param-values"


def _conditions(tool: ToolDef, loc: Loc) -> Iterator[tuple[Loc, str, Any]]:
    """(where, parameter, value) of every `{parameter: value}` condition and rule value."""
    def pair(where: Loc, raw: Any) -> Iterator[tuple[Loc, str, Any]]:
        if isinstance(raw, dict) and len(raw) == 1:
            (param, value), = raw.items()
            if isinstance(param, str):
                yield (*where, param), param, value

    for k, step in enumerate(tool.steps or []):
        for key in ("when", "unless"):
            yield from pair((*loc, "steps", k, key), getattr(step, key))
        if step.guard is not None:
            yield from pair((*loc, "steps", k, "guard", "when"), step.guard.when)
    if tool.confirm is not None:
        yield from pair((*loc, "confirm", "when"), tool.confirm.when)
    if tool.batch is not None and tool.batch.confirm is not None:
        yield from pair((*loc, "batch", "confirm", "when"), tool.batch.confirm.when)
    for k, rule in enumerate(tool.rules):
        if rule.kind == "requires" and rule.equals is not None:
            yield from (((*loc, "rules", k, "equals"), field, rule.equals) for field in rule.fields)
        if rule.kind in ("required_when", "forbidden_when") and isinstance(rule.when, dict) and len(rule.when) == 1:
            (field, raw), = rule.when.items()
            yield from (((*loc, "rules", k, "when", field), field, value)
                        for value in (raw if isinstance(raw, list) else [raw]))
        if rule.kind == "excludes":
            yield from (((*loc, "rules", k, "values", j), field, value)
                        for j, (field, value) in enumerate(zip(rule.fields, rule.values, strict=False)))


def _default_loc(tool: ToolDef, index: int, k: int, located: Located) -> Loc:
    """Where a parameter's default is written: on the tool's entry, else on the shared one."""
    raw = located.data.get("tools", [])[index].get("params", [])[k]
    if isinstance(raw, dict) and "default" in raw:
        return ("tools", index, "params", k, "default")
    shared = raw if isinstance(raw, str) else raw.get("use") if isinstance(raw, dict) else None
    return ("parameters", shared, "default") if isinstance(shared, str) else ("tools", index, "params", k)


def check(tool: ToolDef, index: int, params: tuple[IRParam, ...], located: Located) -> list[Diagnostic]:
    by_name = {p.name: p for p in params}
    schemas = with_checks({"type": "object", "properties": {p.name: p.schema for p in params}},
                          {p.name: p.checks for p in params if p.checks})["properties"]
    out: list[Diagnostic] = []

    def judge(where: Loc, name: str, value: Any, what: str) -> None:
        schema: Mapping[str, Any] = {k: v for k, v in schemas[name].items() if k != "default"}
        problems = sorted(Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
                          .iter_errors(value), key=lambda e: list(e.absolute_path))
        if problems:
            out.append(Diagnostic(
                Level.ERROR, located.where(where),
                f"{tool.name}: {what} {value!r} is not a value of parameter {name!r}: {problems[0].message}",
                "give a value an agent could send (the parameter's published schema, with what the "
                "server checks beyond it), or drop it", RULE))

    loc: Loc = ("tools", index)
    for k, raw in enumerate(tool.params):
        if raw.name in by_name and "default" in by_name[raw.name].schema:
            judge(_default_loc(tool, index, k, located), raw.name, by_name[raw.name].schema["default"], "default")
    for where, name, value in _conditions(tool, loc):
        if name in by_name:  # an unknown name is reported where the condition is built
            judge(where, name, value, "the value compared")
    return out
