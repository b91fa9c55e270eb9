"""Contract rules over the IR and the rendered wire surface. Errors stop generation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator

from generator.diagnostics import Diagnostic, Level, Where
from generator.ir import IRServer, IRTool
from generator.render import compact_bytes, wire_tool

COMBINATORS = ("oneOf", "anyOf", "allOf")


def _object_nodes(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield path, schema
        for key, value in schema.items():
            if key in ("properties",) and isinstance(value, dict):
                for name, sub in value.items():
                    yield from _object_nodes(sub, f"{path}.{name}")
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                yield from _object_nodes(value, f"{path}[]")
            elif key in COMBINATORS and isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from _object_nodes(sub, f"{path}/{key}/{i}")


def _keys(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield key
            yield from _keys(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _keys(value)


# Open on purpose: a repair's arguments are another tool's arguments.
OPEN_BY_DESIGN = ("/oneOf/1.repair.arguments",)


def lint(server: IRServer) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for tool in server.tools:
        out.extend(_lint_tool(server, tool))
    total = compact_bytes({"tools": [wire_tool(t) for t in server.tools]})
    if total > server.tools_budget_bytes:
        out.append(Diagnostic(
            Level.ERROR, Where(server.overrides_file),
            f"tools/list is {total} bytes, over the budget of {server.tools_budget_bytes}",
            "shorten descriptions or shapes, or raise server.tools_budget_bytes deliberately",
            "budget-total"))
    return out


def _lint_tool(server: IRServer, tool: IRTool) -> Iterator[Diagnostic]:
    def err(message: str, hint: str, rule: str) -> Diagnostic:
        return Diagnostic(Level.ERROR, tool.where, f"{tool.name}: {message}", hint, rule)

    for label, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
        for path, node in _object_nodes(schema):
            if path in OPEN_BY_DESIGN or (path == "" and "oneOf" in node and label == "outputSchema"):
                continue
            if node.get("additionalProperties") is not False:
                yield err(f"{label} object at '{path or '/'}' is not closed",
                          "set additionalProperties: false", "closed-schemas")
    if any(k in ("$ref", "$defs", "definitions") for k in _keys(tool.input_schema)):
        yield err("inputSchema uses $ref/$defs", "inline the schema", "no-refs")
    if any(k in tool.input_schema for k in COMBINATORS):
        yield err("inputSchema has a top-level combinator", "use rules: instead", "no-top-combinators")
    if tool.output_schema.get("type") != "object":
        yield err("outputSchema root is not an object", "wrap the payload in an object", "object-output")
    problems = sorted(Draft202012Validator(tool.input_schema).iter_errors(tool.example), key=str)
    if problems:
        yield err(f"the example does not validate against the inputSchema: {problems[0].message}",
                  "fix the example or the parameters", "example-valid")
    size = len(tool.description.encode("utf-8"))
    if size > server.description_budget_bytes:
        yield err(f"description is {size} bytes, over the per-tool budget of "
                  f"{server.description_budget_bytes}", "tighten the description", "budget-description")
    for param in tool.params:
        if "enum" in param.schema and param.schema.get("type") == "string" and not param.schema.get(
                "description"):
            yield err(f"enum parameter {param.name} has no description", "explain the values",
                      "enum-explained")
