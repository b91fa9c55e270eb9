"""What every recipe builder of the generator shares: locations in the override file, the
report callback (with a counting wrapper), and what an operation of the spec accepts."""

from __future__ import annotations

import re
from typing import Any, Protocol

from generator.schemas import object_branches
from generator.spec import SpecOperation, request_body_schema, resolve_ref

Loc = tuple[str | int, ...]


class Report(Protocol):
    def __call__(self, loc: Loc, message: str, hint: str = "", rule: str = "") -> None: ...


class Counted:
    """A Report that counts what it passes on (a builder's problems since it started)."""

    def __init__(self, error: Report) -> None:
        self.error = error
        self.count = 0

    def report(self, loc: Loc, message: str, hint: str = "", rule: str = "") -> None:
        self.count += 1
        self.error(loc, message, hint, rule)


def spec_fields(document: Any, op: SpecOperation, where: str) -> dict[str, Any]:
    """The path/query parameters or JSON body properties an operation accepts, by name."""
    if where == "body":
        fields: dict[str, Any] = {}
        for branch in object_branches(document, request_body_schema(document, op)):
            fields.update(branch.get("properties", {}))
        return fields
    found = {}
    for raw in [*op.path_item.get("parameters", []), *op.node.get("parameters", [])]:
        param = resolve_ref(document, raw)
        if param.get("in") == where:
            found[param["name"]] = param.get("schema", {})
    return found


def path_names(op: SpecOperation) -> list[str]:
    return re.findall(r"\{([^}]+)\}", op.path)


def split_path(dotted: str) -> tuple[str, ...]:
    """`assignees[].login` -> ("assignees", "[]", "login"), as shapes write paths."""
    return tuple(p for p in re.split(r"\.|(\[\])", dotted) if p)
