"""YAML → plain data with a location for every mapping key and sequence item."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from generator.base.diagnostics import Diagnostic, DiagnosticError, Level, Where

Loc = tuple[str | int, ...]


@dataclass(slots=True)
class Located:
    """Parsed YAML plus `(line, col)` (1-based) of each path's key or item."""

    file: str
    data: Any
    marks: dict[Loc, tuple[int, int]] = field(default_factory=dict)

    def where(self, loc: Sequence[str | int]) -> Where:
        path = tuple(loc)
        while path and path not in self.marks:
            path = path[:-1]
        line, col = self.marks.get(path, (1, 1))
        return Where(self.file, line, col)


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: same nodes and marks, ~6x faster
_SCALARS = yaml.SafeLoader("")  # one constructor for every scalar (plain SafeLoader semantics)


def _scalar(node: yaml.Node) -> Any:
    return _SCALARS.construct_object(node, deep=True)


def load_yaml(text: str, file: str) -> Located:
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise DiagnosticError(
            [
                Diagnostic(
                    Level.ERROR,
                    Where(file, line, col),
                    f"invalid YAML: {exc.problem or exc}",
                    "fix the YAML syntax at this position (indentation, quoting, ':' after keys)",
                )
            ]
        ) from None
    located = Located(file, None)
    located.data = {} if root is None else _convert(root, (), located)
    return located


def _convert(node: yaml.Node, path: Loc, out: Located, at: tuple[int, int] | None = None,
             seen: set[int] | None = None) -> Any:
    """`node` as plain data, marking each key and item. A node met again (an alias `*x`, or the
    anchor a merge key `<<: *x` copies) is marked where it is used, not where it was defined: a
    problem in one use is reported at that use (`at`: the merge key, the key holding the alias,
    else the list holding it)."""
    seen = set() if seen is None else seen
    if at is None and isinstance(node, yaml.CollectionNode) and id(node) in seen:
        at = out.marks.get(path) or out.marks.get(path[:-1])
    if isinstance(node, yaml.CollectionNode):
        seen.add(id(node))
    out.marks.setdefault(path, at or (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        merged: dict[Any, Any] = {}
        # merges first: the keys written beside a merge key win, and so do their marks
        pairs = sorted(node.value, key=lambda pair: pair[0].tag != "tag:yaml.org,2002:merge")
        for key_node, value_node in pairs:
            key_mark = at or (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key_node.tag == "tag:yaml.org,2002:merge":
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    value = _convert(source, path, out, key_mark, seen)
                    if not isinstance(value, dict):
                        raise DiagnosticError([Diagnostic(
                            Level.ERROR,
                            Where(out.file, key_node.start_mark.line + 1, key_node.start_mark.column + 1),
                            "a merge key (<<) needs a mapping or a list of mappings",
                            "merge an anchored mapping, e.g. <<: *defaults",
                        )])
                    merged = {**value, **merged}
                continue
            key = _scalar(key_node)  # scalar keys only
            if key in result:
                raise DiagnosticError(
                    [
                        Diagnostic(
                            Level.ERROR,
                            Where(out.file, key_node.start_mark.line + 1, key_node.start_mark.column + 1),
                            f"duplicate key {key!r}",
                            "each key may appear once per mapping; merge or rename the entries",
                        )
                    ]
                )
            child = (*path, key)
            out.marks[child] = key_mark
            result[key] = _convert(value_node, child, out, at, seen)
        return {**merged, **result}
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), out, at, seen) for i, item in enumerate(node.value)]
    return _scalar(node)
