"""Map (method, raw path) to an operationId and its percent-decoded path parameters."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from fakegithub.validation import SpecOperation


@dataclass(frozen=True, slots=True)
class Route:
    operation: SpecOperation
    params: dict[str, str]


class Router:
    """`prefix`: the base path the description's servers add (Forgejo: /api/v1)."""

    def __init__(self, operations: Iterable[SpecOperation], *, prefix: str = "") -> None:
        self._table: list[tuple[str, re.Pattern[str], SpecOperation]] = []
        for op in operations:
            pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(prefix + op.path))
            self._table.append((op.method, re.compile(f"^{pattern}/?$"), op))
        # literal segments beat parameters (e.g. /repos/{o}/{r}/labels vs ...), longest first
        self._table.sort(key=lambda row: -len(row[2].path.replace("{", "").replace("}", "")))

    def match(self, method: str, raw_path: str) -> Route | None:
        for op_method, pattern, op in self._table:
            if op_method != method.upper():
                continue
            m = pattern.match(raw_path)
            if m:
                return Route(op, {k: unquote(v) for k, v in m.groupdict().items()})
        return None
