"""Static facts about the hand-written hook module, read with `ast` (never imported)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ghmcp_runtime.engine.recovery import FIND_CREATED_CODES

# runtime helpers a hook may call, with the error codes they raise themselves
RUNTIME_CODES: dict[str, frozenset[str]] = {"find_created": FIND_CREATED_CODES}


@dataclass(frozen=True, slots=True)
class HookFacts:
    async_functions: frozenset[str]
    codes: dict[str, frozenset[str]]  # function -> error codes it can raise (transitively)
    repair_tools: dict[str, frozenset[str]]  # function -> tool names its repairs name
    syntax_error: tuple[int, int, str] | None = None


def _literal_first_arg(call: ast.Call) -> str | None:
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def scan_hooks(source: str) -> HookFacts:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return HookFacts(frozenset(), {}, {}, (exc.lineno or 1, exc.offset or 1, exc.msg))
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    direct_codes: dict[str, set[str]] = {}
    direct_tools: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    for name, fn in functions.items():
        codes: set[str] = set()
        tools: set[str] = set()
        called: set[str] = set()
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            callee = _callee(node)
            if callee == "ToolError" and (code := _literal_first_arg(node)):
                codes.add(code)
            elif callee == "repair" and len(node.args) >= 2:
                tool = node.args[1]
                if isinstance(tool, ast.Constant) and isinstance(tool.value, str):
                    tools.add(tool.value)
            codes |= RUNTIME_CODES.get(callee or "", frozenset())
            if callee in functions:
                called.add(callee)
        direct_codes[name], direct_tools[name], calls[name] = codes, tools, called

    def closure(start: str, table: dict[str, set[str]]) -> frozenset[str]:
        seen, stack, out = {start}, [start], set()
        while stack:
            current = stack.pop()
            out |= table[current]
            for nxt in calls[current] - seen:
                seen.add(nxt)
                stack.append(nxt)
        return frozenset(out)

    return HookFacts(
        frozenset(n for n, f in functions.items() if isinstance(f, ast.AsyncFunctionDef)),
        {n: closure(n, direct_codes) for n in functions},
        {n: closure(n, direct_tools) for n in functions},
    )


def relative_imports(source: str) -> list[tuple[int, int, str]]:
    """(line, column, module) of every module a hook module imports from its own package
    (`from . import operations`, `from .types import X`); empty when it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [alias.name for alias in node.names]
            found += [(node.lineno, node.col_offset + 1, name.split(".")[0]) for name in names]
    return found
