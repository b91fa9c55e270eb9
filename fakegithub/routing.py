"""Map (method, raw path) to an operationId and its percent-decoded path parameters."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from fakegithub.validation import SpecOperation


@dataclass(frozen=True, slots=True)
class Route:
    operation: SpecOperation
    params: dict[str, str]

    def checked_path(self, raw_path: str) -> str:
        """The path as the spec checker matches it: a multi-segment parameter's `/` percent-encoded
        (openapi-core matches a path parameter within one segment). An empty one (GitHub lists a
        repository's root at `contents/`, which a required path parameter cannot describe) is
        checked as `%2E`."""
        op = self.operation
        if not op.multi_segment:
            return raw_path
        return re.sub(r"\{(\w+)\}", lambda m: quote(self.params[m.group(1)], safe="") or "%2E", op.path)


class Router:
    """`prefix`: the base path the description's servers add (Forgejo: /api/v1)."""

    def __init__(self, operations: Iterable[SpecOperation], *, prefix: str = "") -> None:
        self._table: list[tuple[str, re.Pattern[str], SpecOperation]] = []
        for op in operations:

            def group(m: re.Match[str], op: SpecOperation = op) -> str:
                name = m.group(1)
                return f"(?P<{name}>{'.*?' if name in op.multi_segment else '[^/]+'})"

            pattern = re.sub(r"\\\{(\w+)\\\}", group, re.escape(prefix + op.path))
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
