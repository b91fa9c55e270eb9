"""Spec patches: JSON-pointer edits that assert the value they replace."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from generator.base.diagnostics import Diagnostic, Level, Where
from generator.spec.pinned import split_pointer

_MISSING = object()


class SpecPatch(BaseModel):
    """`replace`/`remove` assert `expect` is the current value; `add` asserts nothing is there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    op: Literal["replace", "remove", "add"]
    path: str
    expect: Any = None
    value: Any = None
    reason: str


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if value is not _MISSING else "<absent>"
    return text if len(text) <= 120 else text[:117] + "..."


def apply_patches(
    document: dict[str, Any], patches: Sequence[tuple[SpecPatch, Where]]
) -> list[Diagnostic]:
    """Apply in order. Containers on a patched path are copied first (copy-on-write), so the
    caller's shared document is never mutated below the top level. Every failed assertion is
    reported; none stops the others."""
    problems: list[Diagnostic] = []
    copied: set[int] = {id(document)}
    for patch, where in patches:
        try:
            tokens = split_pointer(patch.path)
        except ValueError as exc:
            problems.append(Diagnostic(Level.ERROR, where, str(exc), "write an RFC 6901 pointer"))
            continue
        parent: Any = document
        for token in tokens[:-1]:
            child = _child(parent, token)
            if child is _MISSING:
                parent = _MISSING
                break
            if isinstance(child, dict | list) and id(child) not in copied:
                child = dict(child) if isinstance(child, dict) else list(child)
                copied.add(id(child))
                parent[int(token) if isinstance(parent, list) else token] = child
            parent = child
        if parent is _MISSING or not tokens:
            problems.append(
                Diagnostic(
                    Level.ERROR,
                    where,
                    f"spec patch path {patch.path} does not exist in the pinned spec",
                    "the spec changed or the pointer is misspelt; escape '/' as ~1 and '~' as ~0",
                )
            )
            continue
        last = tokens[-1]
        current = _child(parent, last)
        if patch.op == "add":
            if current is not _MISSING:
                problems.append(_mismatch(patch, where, current, "nothing"))
                continue
            if isinstance(parent, list):
                parent.insert(len(parent) if last == "-" else int(last), patch.value)
            else:
                parent[last] = patch.value
            continue
        if current is _MISSING or current != patch.expect:
            problems.append(_mismatch(patch, where, current, _short(patch.expect)))
            continue
        if patch.op == "remove":
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
        else:
            parent[int(last) if isinstance(parent, list) else last] = patch.value
    return problems


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        return node.get(token, _MISSING)
    if isinstance(node, list) and token.isdigit() and int(token) < len(node):
        return node[int(token)]
    return _MISSING


def _mismatch(patch: SpecPatch, where: Where, found: Any, expected: str) -> Diagnostic:
    return Diagnostic(
        Level.ERROR,
        where,
        f"spec patch assertion failed at {patch.path}: expected {expected}, found {_short(found)}",
        "upstream changed this value: re-check the quirk, then update or drop the patch "
        f"(reason given: {patch.reason})",
    )
