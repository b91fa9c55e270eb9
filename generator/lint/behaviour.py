"""Contract rules on behaviour: annotations vs methods and modes, error codes, repairs in the hooks."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from generator.base.diagnostics import Where
from generator.lint.ctx import Ctx
from ghmcp_runtime.core.errors import UNIVERSAL_CODES
from ghmcp_runtime.core.refs import references

READ_VERBS = frozenset({"get", "list", "read", "search", "view", "show", "find", "fetch",
                        "retrieve", "check", "count", "describe"})
WRITE_VERBS = frozenset({"create", "update", "delete", "add", "remove", "set", "close", "open",
                         "reopen", "lock", "unlock", "edit", "write", "post", "assign", "unassign",
                         "merge", "archive", "rename", "move", "transfer", "pin", "unpin",
                         "approve", "dismiss", "replace", "patch", "put"})
SAFE_METHODS = frozenset({"GET", "HEAD"})
RUNTIME_CODES = (*UNIVERSAL_CODES, "internal_error")
ERROR_CLASSES = frozenset({"ToolError", "UpstreamError", "OutcomeUnknown"})


def check(ctx: Ctx) -> None:
    for tool in ctx.server.tools:
        _annotations(ctx, tool)
        _modes(ctx, tool)
    _catalog(ctx)
    _repairs(ctx)


def _annotations(ctx: Ctx, tool: Any) -> None:
    hints = ctx.wire[tool.name]["annotations"]
    where = ctx.where(tool, "annotations")
    missing = [h for h in ("readOnlyHint", "openWorldHint") if h not in hints]
    if hints.get("readOnlyHint") is True:
        extra = [h for h in ("destructiveHint", "idempotentHint") if h in hints]
        if extra:
            ctx.error(where, "annotations", f"{tool.name}: read-only tool publishes {', '.join(extra)}",
                      "read-only tools omit destructive and idempotent")
    else:
        missing += [h for h in ("destructiveHint", "idempotentHint") if h not in hints]
    if missing:
        ctx.error(where, "annotations", f"{tool.name}: annotations leave {', '.join(missing)} undecided",
                  "decide every hint explicitly; protocol defaults are the unsafe reading")
    methods = {op.method for op in tool.operations}
    unsafe = sorted(m for m in methods if m not in SAFE_METHODS)
    if tool.annotations.read_only and unsafe:
        ctx.error(where, "annotations-methods",
                  f"{tool.name}: read-only, but calls {', '.join(unsafe)} operations",
                  "set read_only: false (and decide destructive/idempotent), or drop the operation")
    if not tool.annotations.read_only and not unsafe:
        ctx.error(where, "annotations-methods",
                  f"{tool.name}: marked mutating, but every operation is a read",
                  "set read_only: true, or add the write operation the tool performs")
    if "DELETE" in methods and tool.annotations.destructive is False:
        ctx.error(where, "annotations-methods",
                  f"{tool.name}: calls a DELETE operation but says destructive: false",
                  "set destructive: true")


def _modes(ctx: Ctx, tool: Any) -> None:
    for param in tool.params:
        values = [v for v in param.schema.get("enum", []) if isinstance(v, str)]
        verbs = {re.split(r"[_\-\s]", v)[0].lower() for v in values}
        reads, writes = sorted(verbs & READ_VERBS), sorted(verbs & WRITE_VERBS)
        if reads and writes:
            ctx.error(ctx.param_where(tool, param.name), "mode-split",
                      f"{tool.name}: parameter {param.name} mixes read ({', '.join(reads)}) and write "
                      f"({', '.join(writes)}) modes, which need different annotations",
                      "split it into a read-only tool and a mutating tool")


# -- error codes -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Raise:
    code: str
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class _Repair:
    tool: str
    arguments: ast.expr | None
    line: int
    col: int


def _callee(call: ast.Call) -> str:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return ""


def _str(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _scan(source: str) -> tuple[list[_Raise], list[_Repair]]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [], []  # reported by the pipeline
    raises: list[_Raise] = []
    repairs: list[_Repair] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _callee(node)
            first = node.args[0] if node.args else None
            code = _str(first)
            if name in ERROR_CLASSES and code is not None:
                raises.append(_Raise(code, node.lineno, node.col_offset + 1))
            if name == "repair" and len(node.args) >= 2 and (target := _str(node.args[1])):
                args = node.args[2] if len(node.args) >= 3 else None
                repairs.append(_Repair(target, args, node.lineno, node.col_offset + 1))
        elif isinstance(node, ast.Dict):
            keys = {_str(k): v for k, v in zip(node.keys, node.values, strict=True) if k is not None}
            target = _str(keys.get("tool"))
            if target is not None and "next_step" in keys:
                repairs.append(_Repair(target, keys.get("arguments"), node.lineno, node.col_offset + 1))
    return raises, repairs


def _catalog(ctx: Ctx) -> None:
    catalog = {c.code for c in ctx.server.error_codes}
    for code in sorted(catalog):
        if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", code):
            ctx.error(ctx.at(("error_codes", code)), "error-catalog",
                      f"error code {code!r} is not a snake_case symbol", "rename it, e.g. issue_not_found")
    for code in RUNTIME_CODES:
        if code not in catalog:
            ctx.error(ctx.at(("error_codes",)), "error-catalog",
                      f"the runtime can emit {code!r} for any tool, but error_codes lacks it",
                      f"declare {code} under error_codes")
    for file, source in _hook_sources(ctx):
        for found in _scan(source)[0]:
            if found.code in catalog:
                continue
            ctx.error(Where(file, found.line, found.col), "error-catalog",
                      f"the hooks raise {found.code!r}, which is not in error_codes",
                      "declare it under error_codes (and in the errors of the tools that emit it)")


def _hook_sources(ctx: Ctx) -> list[tuple[str, str]]:
    """(file, source) of the hooks module and of each of its parts."""
    main = (ctx.server.hooks_file or ctx.server.overrides_file, ctx.server.hooks_source)
    return [main, *((part.file, part.source) for part in ctx.server.hook_parts)]


# -- repairs ---------------------------------------------------------------------------------


_RUN_TIME = object()  # an argument whose value is only known when the repair is built


def _declared_arguments(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """A declared repair's arguments: templates that read a value are known only at run time."""
    return {k: _RUN_TIME if references(v) else v for k, v in arguments.items()}, True


def _hook_arguments(node: ast.expr | None) -> tuple[dict[str, Any], bool] | None:
    """A hook repair's literal arguments (values that are not literals known only at run time) and
    whether they are all there (no `**spread` or computed key); None when not a dict literal."""
    if not isinstance(node, ast.Dict):
        return None
    out: dict[str, Any] = {}
    complete = True
    for key, value in zip(node.keys, node.values, strict=True):
        name = _str(key)
        if name is None:
            complete = False
            continue
        try:
            out[name] = ast.literal_eval(value)
        except ValueError:
            out[name] = _RUN_TIME
    return out, complete


def _argument_problems(schema: dict[str, Any], arguments: Mapping[str, Any], complete: bool) -> Iterator[str]:
    props = schema.get("properties", {})
    for name, value in arguments.items():
        if name not in props:
            yield f"argument {name!r} is not a parameter"
        elif value is not _RUN_TIME:  # a constant: it must be valid as it stands
            errors = sorted(Draft202012Validator(props[name]).iter_errors(value), key=lambda e: e.message)
            if errors:
                yield f"argument {name!r}: {errors[0].message}"
    if complete:
        for required in schema.get("required", []):
            if required not in arguments:
                yield f"required argument {required!r} is missing"


def _repairs(ctx: Ctx) -> None:
    """Every repair, declared or in the hooks, names a tool and arguments its inputSchema takes: a
    tool of this override file, or, declared with its `toolset`, a tool of that toolset in another
    file of the forge (checked when the forge's files are built together; a surface without the
    tool, such as this file's own server, drops the repair: serving/surface.py)."""
    found: list[tuple[Where, str, str, str | None, tuple[dict[str, Any], bool] | None]] = [
        (where, f"{tool.name}: ", repair.tool, repair.toolset, _declared_arguments(repair.arguments))
        for tool in ctx.server.tools for where, repair in tool.repairs]
    found += [(Where(file, r.line, r.col), "", r.tool, None, _hook_arguments(r.arguments))
              for file, source in _hook_sources(ctx) for r in _scan(source)[1]]
    own = {t.name: t.checked_input_schema for t in ctx.server.tools}
    peers = {t.name: (t.toolset, dict(t.wire["inputSchema"])) for p in ctx.peers for t in p.tools}
    for where, prefix, target, toolset, arguments in found:
        schema = own.get(target)
        if schema is None and toolset is not None and not ctx.peers:
            continue  # another file's tool: checked with the forge's files
        if schema is None and toolset is not None and target in peers:
            if peers[target][0] != toolset:
                ctx.error(where, "repair-tool", f"{prefix}a repair says {target!r} is in toolset "
                          f"{toolset!r}; it is in {peers[target][0]!r}", "name the toolset that holds it")
                continue
            schema = peers[target][1]
        if schema is None:
            hint = ("repair.tool must name a tool of this server, or of another override file of its "
                    "forge with that file's `toolset:`")
            ctx.error(where, "repair-tool", f"{prefix}a repair names {target!r}, which is not a tool", hint)
            continue
        for problem in _argument_problems(schema, *arguments) if arguments else ():
            ctx.error(where, "repair-arguments", f"{prefix}repair with {target}: {problem}",
                      "repair arguments must be callable as they are against the tool's inputSchema")
