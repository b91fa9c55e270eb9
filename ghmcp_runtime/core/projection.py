"""Project GitHub's JSON onto a declared output shape (field order, detail level, transforms)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ghmcp_runtime.cleaning.untrusted import Clean, Cleaned, sanitize
from ghmcp_runtime.core.content import DECODERS, cut
from ghmcp_runtime.core.model import HIDDEN_FIELD, PREVIEW_EMPTY_FIELD, Detail, FieldRule, Shape
from ghmcp_runtime.core.versioning import canonical_json


class _Tally(dict[tuple[str, ...], tuple[Any, int]]):
    """Source path -> (sanitized value, hidden pieces removed): a path is sanitized and counted
    once; `cleaned` holds text the call cleaned ahead."""

    def __init__(self, cleaned: Cleaned) -> None:
        super().__init__()
        self.cleaned = cleaned
        self.empty_preview: str | None = None  # why a preview came out empty

    def sanitize(self, text: str) -> tuple[Clean, int]:
        ready = self.cleaned.get(text)
        cleaned, removed = ready if ready is not None else sanitize(text)
        return Clean(cleaned), removed

PREVIEW_CHARS = 200
_SPACES = re.compile(r"\s+")
# Versions before content-matched recovery appended this marker to bodies written with an
# idempotency key. It is not the user's text, so no tool or resource returns it.
LEGACY_MARKER = re.compile(r"(?:\n\n)?<!-- ghmcp-idempotency:[0-9a-f]{24} -->")


def without_legacy_marker(value: Any) -> Any:
    if isinstance(value, str) and "<!-- ghmcp-idempotency:" in value:
        return LEGACY_MARKER.sub("", value)
    return value


def preview(value: Any) -> Any:
    """Body text collapsed to single spaces, first 200 characters, "…" appended when cut."""
    if not isinstance(value, str):
        return value
    text = _SPACES.sub(" ", value).strip()
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…"


def count(value: Any) -> Any:
    return len(value) if isinstance(value, list) else value


TRANSFORMS: dict[str, Callable[[Any], Any]] = {"preview": preview, "count": count}


def walk(value: Any, path: tuple[str, ...]) -> Any:
    for i, step in enumerate(path):
        if value is None:
            return None
        if step == "[]":
            if not isinstance(value, list):
                return None
            items = (walk(item, path[i + 1 :]) for item in value)
            return [item for item in items if item is not None]
        value = value.get(step) if isinstance(value, Mapping) else None
    return value


def rows_in(body: Any, path: tuple[str, ...] = ()) -> list[Any]:
    """The rows of an answer: the list at `path` in it (the answer itself without one); an object
    is one row."""
    found = walk(body, path) if path else body
    if isinstance(found, list):
        return found
    return [found] if isinstance(found, Mapping) else []


def version_of(raw: Mapping[str, Any], fields: Mapping[str, tuple[str, ...]]) -> str:
    """"v1-" + 20 hex of sha256 over the declared fields (name -> path; "[]" maps a list, whose
    values are sorted so order on GitHub's side never changes the version)."""
    state: dict[str, Any] = {}
    for name, path in sorted(fields.items()):
        value = walk(raw, path)
        state[name] = sorted(str(v) for v in value) if isinstance(value, list) else value
    return "v1-" + hashlib.sha256(canonical_json(state)).hexdigest()[:20]


def _untrusted(rules: Iterable[FieldRule]) -> bool:
    return any(rule.untrusted or _untrusted(rule.nested) for rule in rules)


def _check(rules: Iterable[FieldRule], shape: str) -> None:
    for rule in rules:
        if rule.transform is not None and rule.transform not in TRANSFORMS:
            raise ValueError(f"shape {shape!r} field {rule.name!r}: unknown transform {rule.transform!r}")
        if rule.decode is not None and rule.decode not in DECODERS:
            raise ValueError(f"shape {shape!r} field {rule.name!r}: unknown decoder {rule.decode!r}")
        _check(rule.nested, shape)


class ShapeProjector:
    def __init__(self, shapes: Mapping[str, Shape]) -> None:
        for name, shape in shapes.items():
            _check(shape.fields, name)
        self._shapes = dict(shapes)
        self._untrusted = {name for name, shape in shapes.items() if _untrusted(shape.fields)}

    def project(
        self, shape: str, raw: Mapping[str, Any], detail: Detail, computed: Mapping[str, Any],
        include: Collection[str] = (), cleaned: Cleaned | None = None,
        omit: Collection[str] = (),
    ) -> dict[str, Any]:
        """Every field of the density (plus `include`, less `omit`), in shape order; null when
        GitHub has no value, [] for an empty list: a row never leaves out a field it declares.
        `hidden_removed` counts what was removed from the text the row carries (an omitted body
        is not counted), present only when something was; `withheld` is lockdown's to add. Untrusted text already in `cleaned` (see untrusted.clean_ahead) is
        taken from there."""
        declared = self._shapes[shape]
        if declared.version and declared.version_field and declared.version_field not in computed:
            computed = {**computed, declared.version_field: self.version(shape, raw)}
        tally = _Tally(cleaned if cleaned is not None else {})
        row = _project(declared.fields, raw, detail, computed, tally, (), frozenset(include), frozenset(omit))
        if shape in self._untrusted and (removed := sum(n for _, n in tally.values())):
            row[HIDDEN_FIELD] = removed  # absent when nothing was removed
        if tally.empty_preview is not None:
            row[PREVIEW_EMPTY_FIELD] = tally.empty_preview
        return row

    def fields(self, shape: str) -> list[str]:
        """The shape's field names, in order."""
        return [rule.name for rule in self._shapes[shape].fields]

    def version(self, shape: str, raw: Mapping[str, Any]) -> str:
        """The shape's declared content version of `raw` (for expected_version checks)."""
        declared = self._shapes[shape]
        if not declared.version:
            raise ValueError(f"shape {shape!r} declares no version")
        return version_of(raw, declared.version)


def _clean(value: Any, key: tuple[str, ...], tally: _Tally) -> Any:
    """Untrusted text as a reader of GitHub's page sees it; each source path is sanitized and
    counted once (a row's preview and body read the same text)."""
    if key in tally:
        return tally[key][0]
    removed = 0
    if isinstance(value, str):
        value, removed = tally.sanitize(value)
    elif isinstance(value, list):
        cleaned = [tally.sanitize(v) if isinstance(v, str) else (v, 0) for v in value]
        removed = sum(n for _, n in cleaned)
        value = [v for v, _ in cleaned]
    tally[key] = (value, removed)
    return value


def _project(
    rules: tuple[FieldRule, ...], raw: Mapping[str, Any], detail: Detail,
    computed: Mapping[str, Any], tally: _Tally, where: tuple[str, ...],
    include: frozenset[str] = frozenset(), omit: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rule in rules:
        if (detail == "summary" and rule.detail == "full" and rule.name not in include) or rule.name in omit:
            continue
        if rule.computed:
            value = computed.get(rule.name)
        else:
            value = without_legacy_marker(walk(raw, rule.path))
            if rule.decode is not None:  # the holder's siblings say how it is encoded
                value = DECODERS[rule.decode](value, walk(raw, rule.path[:-1]))
        written = value
        sentinel = ""
        if rule.max_bytes is not None and isinstance(value, str):
            value, sentinel = cut(value, rule.max_bytes)  # cleaned within the bound only
        if rule.untrusted:
            value = _clean(value, (*where, *rule.path), tally)
        if sentinel and isinstance(value, str):
            value = Clean(value + sentinel) if isinstance(value, Clean) else value + sentinel
        if rule.transform is not None:
            shown = TRANSFORMS[rule.transform](value)
            value = Clean(shown) if isinstance(value, Clean) and isinstance(shown, str) else shown
        if rule.transform == "preview" and not value:  # null, and why: no text, or all of it hidden
            value = None
            tally.empty_preview = "hidden" if isinstance(written, str) and written.strip() else "body_empty"
        if rule.nested:  # an included field comes whole
            value = _nest(rule.nested, value, "full" if rule.name in include else detail, tally,
                          (*where, *rule.path))
        if value is None and "[]" in rule.path:
            value = []
        out[rule.name] = value
    return out


def _nest(rules: tuple[FieldRule, ...], value: Any, detail: Detail, tally: _Tally,
          where: tuple[str, ...]) -> Any:
    if isinstance(value, Mapping):
        return _project(rules, value, detail, {}, tally, where)
    if isinstance(value, list):
        return [_project(rules, v, detail, {}, tally, (*where, str(i)))
                for i, v in enumerate(value) if isinstance(v, Mapping)]
    return None
