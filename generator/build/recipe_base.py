"""What every recipe builder of the generator shares: locations in the override file, the
report callback (with a counting wrapper), and what an operation of the spec accepts."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from generator.spec.pinned import SpecOperation, request_body_schema, resolve_ref
from generator.spec.schemas import object_branches

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


class Named(Protocol):
    """A tool parameter as path binding sees it (generator.build.ir.IRParam)."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str | None: ...


def path_filler(params: Sequence[Named], op_id: str) -> Callable[[str], str | None]:
    """The tool parameter that fills path parameter `name` of `op_id` when no `path:` does: one
    mapped there with `from:`, else one of that name, else the one parameter the tool maps to a
    path parameter of that name in another of its operations (`issue_number` mapped to Forgejo's
    `{index}` fills `{index}` in every request of the tool)."""

    def fill(name: str) -> str | None:
        for p in params:
            if p.source == f"{op_id}#path.{name}":
                return p.name
        if any(p.name == name for p in params):
            return name
        aliases = {p.name for p in params if p.source and p.source.endswith(f"#path.{name}")}
        return next(iter(aliases)) if len(aliases) == 1 else None

    return fill


def bind_path(call: str, explicit: Mapping[str, Any], op: SpecOperation, loc: Loc,
              fill: Callable[[str], str | None], error: Report, own: str | None = None) -> dict[str, Any]:
    """Every path parameter of `op` but `own` (filled per request): given under `path:`, else the
    parameter `fill` names."""
    wanted = [name for name in path_names(op) if name != own]
    out: dict[str, Any] = {}
    for key in explicit:
        if key not in wanted:
            error((*loc, "path", key), f"{call} has no path parameter {key!r}"
                  + (" to bind (it names the member)" if key == own else ""),
                  f"its path parameters are: {', '.join(wanted) or 'none'}")
    for name in wanted:
        param = None if name in explicit else fill(name)
        if name in explicit:
            out[name] = explicit[name]
        elif param is None:
            error((*loc, "path"), f"nothing fills path parameter {name!r} of {call}",
                  f"add a parameter named {name}, one with `from: {call}#path.{name}`, "
                  f"or `path: {{{name}: ...}}`")
        else:
            out[name] = "{" + param + "}"
    return out
