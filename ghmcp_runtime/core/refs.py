"""Reference templates (see `ghmcp_runtime.core.declared`): parse once, evaluate against a scope.

`{a.b|f}` reads `a.b` (a tool argument, a step's response body, or a recipe value such as `count`)
and passes it through the transform `f`; `{{` and `}}` are literal braces.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.core.transforms import TRANSFORMS


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]+)\}")


@dataclass(frozen=True, slots=True)
class Ref:
    path: tuple[str, ...]
    filters: tuple[str, ...]


def parse_ref(expr: str) -> Ref:
    name, *filters = (part.strip() for part in expr.split("|"))
    return Ref(tuple(name.split(".")), tuple(filters))


@functools.lru_cache(maxsize=4096)
def parse(template: str) -> tuple[str | Ref, ...]:
    """Literal text and references, in order."""
    parts: list[str | Ref] = []
    pos = 0
    for match in _TOKEN.finditer(template):
        if match.start() > pos:
            parts.append(template[pos:match.start()])
        token = match.group(0)
        parts.append(token[0] if token in ("{{", "}}") else parse_ref(match.group(1)))
        pos = match.end()
    if pos < len(template):
        parts.append(template[pos:])
    return tuple(parts)


def references(template: Any) -> list[Ref]:
    """Every reference in a template (walking lists and mappings of templates)."""
    if isinstance(template, str):
        return [p for p in parse(template) if isinstance(p, Ref)]
    if isinstance(template, Mapping):
        return [r for v in template.values() for r in references(v)]
    if isinstance(template, list | tuple):
        return [r for v in template for r in references(v)]
    return []


def walk(value: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if isinstance(value, Mapping) and step in value:
            value = value[step]
        else:
            return MISSING
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    args: Mapping[str, Any]
    results: Mapping[str, Any]  # step id -> response body, for the steps that produced one
    extra: Mapping[str, Any]  # recipe values, e.g. {"count": 3}

    def lookup(self, ref: Ref) -> Any:
        head, rest = ref.path[0], ref.path[1:]
        for source in (self.extra, self.results, self.args):
            if head in source:
                value = walk(source[head], rest)
                break
        else:
            return MISSING
        if value is MISSING:
            return MISSING
        for name in ref.filters:
            value = TRANSFORMS[name](value)
        return value

    def with_extra(self, **extra: Any) -> Scope:
        return Scope(self.args, self.results, {**self.extra, **extra})


def text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def render(template: Any, scope: Scope) -> Any:
    """The template's value, or MISSING when it reads something absent."""
    if isinstance(template, Mapping):
        out = {k: render(v, scope) for k, v in template.items()}
        return {k: v for k, v in out.items() if v is not MISSING}
    if isinstance(template, list | tuple):
        return [v for v in (render(t, scope) for t in template) if v is not MISSING]
    if not isinstance(template, str):
        return template
    parts = parse(template)
    if len(parts) == 1 and isinstance(parts[0], Ref):
        return scope.lookup(parts[0])
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, Ref):
            value = scope.lookup(part)
            if value is MISSING:
                return MISSING
            pieces.append(text_of(value))
        else:
            pieces.append(part)
    return "".join(pieces)


def joined(parts: Any, scope: Scope, separator: str) -> Any:
    """The parts (templates) that read nothing absent or null, rendered and joined; MISSING when
    none is left. A lone template is one part."""
    kept = []
    for part in parts if isinstance(parts, list | tuple) else [parts]:
        if any(scope.lookup(ref) in (MISSING, None) for ref in references(part)):
            continue
        value = render(part, scope)
        if value is not MISSING:
            kept.append(text_of(value))
    return separator.join(kept) if kept else MISSING
