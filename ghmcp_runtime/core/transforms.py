"""The registry of named value transforms an override file may reference.

A parameter's `transform` runs on the argument before any upstream call; a filter in a reference
template (`{step.name|search_phrase}`) runs where the template is evaluated. A transform that cannot
accept a value raises `Refused` with a reason written from the rule alone (never the value); the
runner turns that into `invalid_field` on the parameter, with nothing sent.
"""

from __future__ import annotations

import base64
import re
import string
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any


class Refused(ValueError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Transform = Callable[[Any], Any]

_HEX_COLOR = re.compile(r"#?([0-9A-Fa-f]{6})")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ].*)?")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
COLOR_RULE = (
    "must be six hex digits, rrggbb or #rrggbb, in any case (e.g. d73a4a or #D73A4A); "
    "three-digit shorthand, color names and other lengths are refused"
)


def hex_color(value: Any) -> str:
    """Six lower-case hex digits without '#'; a shorthand is never expanded."""
    match = _HEX_COLOR.fullmatch(str(value))
    if match is None:
        raise Refused(COLOR_RULE)
    return match.group(1).lower()


def hash_hex_color(value: Any) -> str:
    """`#` and six lower-case hex digits (Forgejo's stored form); a shorthand is never expanded."""
    return "#" + hex_color(value)


def list_item(value: Any) -> str:
    """A value that a comma-separated filter (Forgejo's `labels=a,b`) reads as one item."""
    text = str(value)
    if "," in text:
        raise Refused("the value contains a comma, which a comma-separated filter reads as two values")
    return text


def lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def comma_join(value: Any) -> Any:
    return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else value


def search_phrase(value: Any) -> str:
    """A value that a quoted GitHub search qualifier (`label:"…"`) matches exactly."""
    text = str(value)
    if any(char in text for char in '"\\,'):
        # inside "...": a quote ends the value, a backslash may escape it, a comma separates
        # alternatives; the qualifier would not match exactly this value
        raise Refused("the value contains a double quote, a backslash or a comma, which GitHub "
                      "search cannot match exactly")
    return text


def date(value: Any) -> Any:
    """The calendar date of an ISO 8601 date or timestamp (for comparing due dates)."""
    if not isinstance(value, str):
        return value
    match = _DATE.fullmatch(value.strip())
    return match.group(1) if match else value


def _nth_sunday(year: int, month: int, n: int) -> datetime:
    """The n-th Sunday of the month at midnight UTC (n = -1: the last one)."""
    if n > 0:
        first = datetime(year, month, 1, tzinfo=UTC)
        return first + timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
    nxt = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return nxt - timedelta(days=(nxt.weekday() + 1) % 7 or 7)


def _pacific(when: datetime) -> datetime:
    """An instant in US Pacific time (PDT -7 h / PST -8 h; US rules since 1987)."""
    year = when.year
    if year >= 2007:
        start, end = _nth_sunday(year, 3, 2), _nth_sunday(year, 11, 1)
    else:
        start, end = _nth_sunday(year, 4, 1), _nth_sunday(year, 10, -1)
    # 02:00 local: 10:00 UTC in PST when DST starts, 09:00 UTC in PDT when it ends
    in_dst = start + timedelta(hours=10) <= when < end + timedelta(hours=9)
    return when + timedelta(hours=-7 if in_dst else -8)


def due_day(value: Any) -> Any:
    """The calendar day GitHub keeps of a milestone due date: the US Pacific day of the instant
    (2026-12-31T00:00:00Z is Dec 30 there); a bare YYYY-MM-DD is that day. GitHub answers with
    that day's midnight in Pacific time (…T08:00:00Z), which maps back to the same day."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if _DAY.fullmatch(text):
        return text
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return value
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return _pacific(when.astimezone(UTC)).date().isoformat()


def empty_as_none(value: Any) -> Any:
    return None if value == "" else value


def without_slash(value: Any) -> Any:
    """A list's items without a `/` (GitHub's reviewers: logins, not org/team slugs)."""
    return [v for v in value if "/" not in str(v)] if isinstance(value, list | tuple) else value


def after_slash(value: Any) -> Any:
    """A list's `owner/name` items, each as its name (GitHub's org/team-slug: the slug)."""
    if not isinstance(value, list | tuple):
        return value
    return [str(v).rsplit("/", 1)[1] for v in value if "/" in str(v)]


def base64_text(value: Any) -> Any:
    """Text as base64 of its UTF-8 bytes (a contents API's `content`), byte for byte."""
    return base64.b64encode(value.encode("utf-8")).decode("ascii") if isinstance(value, str) else value


def comma_list(value: Any) -> Any:
    """A header's comma-separated list (`repo, read:org`) -> its items; "" -> []."""
    return [item.strip() for item in value.split(",") if item.strip()] if isinstance(value, str) else value


def integer(value: Any) -> Any:
    """A whole number written as text (a header's) -> the number; anything else as it is."""
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value


def epoch_time(value: Any) -> Any:
    """Unix seconds (a rate limit's reset) -> an ISO 8601 UTC timestamp."""
    seconds = integer(value)
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        return value
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def not_all(value: Any) -> Any:
    """`all` (a listing's "no filter" value) -> null, so a joined part naming it is left out."""
    return None if value == "all" else value


_ASCII_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold_name(name: str) -> str:
    """A name's comparison key as GitHub compares logins and label names: ASCII letters
    lower-cased, everything else kept."""
    return name.translate(_ASCII_FOLD)


def fold(value: Any) -> Any:
    return fold_name(value) if isinstance(value, str) else value


def trim(value: Any) -> Any:
    """Surrounding whitespace removed (GitHub trims titles)."""
    return value.strip() if isinstance(value, str) else value


TRANSFORMS: dict[str, Transform] = {
    "hex_color": hex_color,
    "hash_hex_color": hash_hex_color,
    "list_item": list_item,
    "lower": lower,
    "comma_join": comma_join,
    "search_phrase": search_phrase,
    "date": date,
    "due_day": due_day,
    "empty_as_none": empty_as_none,
    "not_all": not_all,
    "base64": base64_text,
    "comma_list": comma_list,
    "integer": integer,
    "epoch_time": epoch_time,
    "without_slash": without_slash,
    "after_slash": after_slash,
    "fold": fold,
    "trim": trim,
}


def _as_is(value: Any) -> Any:
    return value


def normalizer(name: str | None) -> Transform:
    """The transform a comparison applies (`normalize` maps); none named: the value as it is.
    A value the transform refuses (a forge's answer need not satisfy what we ask of arguments:
    a color it stores in another form) is compared as it is, never raised."""
    transform = TRANSFORMS.get(name or "")
    if transform is None:
        return _as_is

    def lenient(value: Any) -> Any:
        try:
            return transform(value)
        except Refused:
            return value

    return lenient


# What each transform does, for docs/overrides.md and the generator's did-you-mean.
DESCRIPTIONS: dict[str, str] = {
    "hex_color": "rrggbb or #rrggbb in any case -> six lower-case hex digits; anything else is refused",
    "hash_hex_color": "rrggbb or #rrggbb in any case -> #rrggbb, lower-case; anything else is refused",
    "list_item": "refuses values a comma-separated filter would split (,)",
    "lower": "lower-cases a string",
    "comma_join": "a list -> one comma-separated string",
    "search_phrase": "refuses values a quoted search qualifier cannot match exactly (\" \\ ,)",
    "date": "an ISO 8601 date or timestamp -> its YYYY-MM-DD date (for comparisons)",
    "due_day": "an ISO 8601 timestamp -> the US Pacific calendar day GitHub keeps of a milestone due date (YYYY-MM-DD)",
    "empty_as_none": "\"\" -> null",
    "not_all": "all -> null (a joined query part naming it is left out)",
    "base64": "text -> base64 of its UTF-8 bytes (a file's content, sent byte for byte)",
    "comma_list": "a comma-separated list (a header's) -> its items",
    "integer": "a whole number written as text -> the number",
    "epoch_time": "Unix seconds -> an ISO 8601 UTC timestamp",
    "without_slash": "a list's items without a / (logins of a reviewer list)",
    "after_slash": "a list's owner/name items, each as its name (team slugs of org/team-slug)",
    "fold": "ASCII letters lower-cased, everything else kept (how GitHub compares logins and label names)",
    "trim": "surrounding whitespace removed",
}
