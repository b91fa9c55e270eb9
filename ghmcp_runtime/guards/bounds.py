"""Sizes before contents: refuse oversized tool arguments before any per-element validation.

jsonschema applies `maxItems` only after it has walked every element (1.3 million array items
kept the event loop busy for 51 s and grew RSS by 2.8 GB). This walk looks at lengths only:
a container's length is compared with the schema's `maxItems`/`maxProperties` and with what is
left of the call's budget *before* any of its elements is visited, so it does at most
MAX_VALUES steps however large the input is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

# The largest legitimate call (an issue update with a 65,536-character body, 20 + 20 labels and
# 10 assignees) has ~100 values and ~70,000 characters; these leave wide margins.
MAX_VALUES = 2048  # every value counts one: the object, each property value, each item
MAX_CHARS = 262_144  # characters of all strings and keys together
MAX_DEPTH = 32


class Oversized(Exception):
    """`steps` locate the value along declared properties only (an unknown key's name is user
    content and is never echoed): whole-call limits name no field at all."""

    def __init__(self, steps: list[str | int], reason: str) -> None:
        super().__init__(reason)
        self.steps = steps
        self.reason = reason


def _sub(schema: Any, key: str) -> Any:
    return schema.get(key) if isinstance(schema, Mapping) else None


def _limit(schema: Any, keyword: str) -> int | None:
    value = _sub(schema, keyword)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Budget:
    def __init__(self) -> None:
        self.values = 0
        self.chars = 0

    def spend(self, values: int, chars: int = 0) -> None:
        """Count values and characters; `values` may be a container's items, counted in advance
        (each item is counted again, at no charge, when it is visited)."""
        if self.values + values > MAX_VALUES:
            raise Oversized([], f"are too large: at most {MAX_VALUES} values in all")
        if self.chars + chars > MAX_CHARS:
            raise Oversized([], f"are too large: at most {MAX_CHARS} characters in all")
        self.values += values
        self.chars += chars


def check_sizes(args: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Raise Oversized for the first value too long for its schema or for the call's budget."""
    budget = _Budget()
    budget.spend(1)
    queue: deque[tuple[Any, Any, list[str | int]]] = deque([(args, schema, [])])
    while queue:
        value, sub, steps = queue.popleft()
        if len(steps) > MAX_DEPTH:
            raise Oversized([], f"are nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, str):
            limit = _limit(sub, "maxLength")
            if limit is not None and len(value) > limit:
                raise Oversized(steps, f"must be at most {limit} characters long")
            budget.spend(0, len(value))
        elif isinstance(value, list):
            limit = _limit(sub, "maxItems")
            if limit is not None and len(value) > limit:
                raise Oversized(steps, f"must have at most {limit} items")
            budget.spend(len(value))
            items = _sub(sub, "items")
            queue.extend((item, items, [*steps, i]) for i, item in enumerate(value))
        elif isinstance(value, Mapping):
            limit = _limit(sub, "maxProperties")
            if limit is not None and len(value) > limit:
                raise Oversized(steps, f"must have at most {limit} properties")
            budget.spend(len(value))
            budget.spend(0, sum(len(str(k)) for k in value))
            props = _sub(sub, "properties")
            props = props if isinstance(props, Mapping) else {}
            queue.extend((item, props.get(key), [*steps, str(key)]) for key, item in value.items())
