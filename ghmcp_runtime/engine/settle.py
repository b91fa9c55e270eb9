"""What a re-read says about a partial update (`declared.Compare`, `declared.Settle`).

A body field is *shown* by a resource when the resource holds the value sent, compared the way the
partial update compares (through the field's `normalize` transform; null and "" alike). A field
that `compare` does not list is never shown: nothing says where the resource keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from ghmcp_runtime.core.declared import Compare
from ghmcp_runtime.core.refs import MISSING, walk
from ghmcp_runtime.core.transforms import normalizer

IDENTITY = ("id",)  # the same resource before and after a write (a rename keeps it)
STAMP = ("updated_at",)  # moves on every write: a change reverted since is not "not applied"


class Verdict(Enum):
    APPLIED = "applied"  # the resource shows every field sent
    NOT_APPLIED = "not_applied"  # the same resource, none of the fields sent changed
    UNKNOWN = "unknown"


def _now(compare: Compare, key: str, row: Any) -> Any:
    path = compare.fields[key]
    value = walk(row, tuple(path.split(".")))
    norm = normalizer(compare.normalize.get(key))
    return norm(None if value is MISSING else value)


def shows(compare: Compare, key: str, value: Any, row: Any) -> bool:
    """Whether `row` shows body field `key` at `value`."""
    if key not in compare.fields or row is None:
        return False
    norm = normalizer(compare.normalize.get(key))
    return same(norm(value), _now(compare, key, row))


def shows_all(compare: Compare, wanted: Mapping[str, Any], row: Any) -> bool:
    return all(shows(compare, key, value, row) for key, value in wanted.items())


def same_resource(before: Any, after: Any) -> bool:
    identity = walk(after, IDENTITY)
    return before is not None and identity is not MISSING and identity == walk(before, IDENTITY)


def judge(compare: Compare, sent: Mapping[str, Any], before: Any, after: Any) -> Verdict:
    """A write of `sent` whose answer was lost, from the resource before it and a re-read after:
    not applied only when the fields sent and the resource's `updated_at` (if it has one) are
    unchanged, so an applied change someone reverted since is unknown, not "repeat it"."""
    if not same_resource(before, after):
        return Verdict.UNKNOWN
    if shows_all(compare, sent, after):
        return Verdict.APPLIED
    if all(key in compare.fields and same(_now(compare, key, before), _now(compare, key, after))
           for key in sent) and walk(before, STAMP) == walk(after, STAMP):
        return Verdict.NOT_APPLIED
    return Verdict.UNKNOWN


def same(a: Any, b: Any) -> bool:
    """Equal, treating null and "" as the same (GitHub returns null for an empty description)."""
    return (a if a != "" else None) == (b if b != "" else None)
