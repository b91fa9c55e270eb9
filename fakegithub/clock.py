"""Clocks: the fake reads time only through a `Clock` (a zero-argument callable)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def parse_time(value: str | datetime) -> datetime:
    """RFC 3339 / ISO 8601 (with `Z` or an offset; naive means UTC) to an aware UTC datetime."""
    if isinstance(value, datetime):
        when = value
    else:
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def iso(when: datetime) -> str:
    """GitHub's timestamp format: `2011-04-22T13:33:48Z`."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _nth_sunday(year: int, month: int, n: int) -> datetime:
    """The n-th Sunday of the month (n = -1: the last one), at midnight UTC."""
    if n > 0:
        first = datetime(year, month, 1, tzinfo=UTC)
        return first + timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))
    nxt = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return nxt - timedelta(days=(nxt.weekday() + 1) % 7 or 7)


def pacific_offset(when: datetime) -> timedelta:
    """US Pacific time's UTC offset at an instant (PDT -7 h / PST -8 h; US rules since 1987)."""
    year = when.year
    if year >= 2007:
        start, end = _nth_sunday(year, 3, 2), _nth_sunday(year, 11, 1)
    else:
        start, end = _nth_sunday(year, 4, 1), _nth_sunday(year, 10, -1)
    # 02:00 local: 10:00 UTC in PST when DST starts, 09:00 UTC in PDT when it ends
    in_dst = start + timedelta(hours=10) <= when < end + timedelta(hours=9)
    return timedelta(hours=-7 if in_dst else -8)


def due_on(value: str | date | datetime) -> datetime:
    """A milestone due date as GitHub stores it: the US Pacific calendar day of the given instant,
    at midnight Pacific (so `07:00:00Z` or `08:00:00Z`); a bare date (or `YYYY-MM-DD`) is that day.

    GitHub drops the time of day: `2020-09-24T06:59:00Z` becomes `2020-09-23T07:00:00Z`, and
    `2022-11-14T07:00:00Z` becomes `2022-11-13T08:00:00Z` (both reported by API users)."""
    if isinstance(value, str) and len(value.strip()) == 10:
        value = date.fromisoformat(value.strip())
    if isinstance(value, (datetime, str)):  # datetime before date: it is a subclass
        instant = parse_time(value)
        day = (instant + pacific_offset(instant)).date()
    else:
        day = value
    midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
    for hours in (7, 8):
        candidate = midnight + timedelta(hours=hours)
        if candidate + pacific_offset(candidate) == midnight:
            return candidate
    raise AssertionError("unreachable: midnight Pacific is PDT or PST")


def offset_clock(seconds: float) -> Clock:
    """The system clock shifted by `seconds` (negative: behind): GitHub's clock against a server's,
    seen in `created_at` and in every answer's `Date` header."""
    shift = timedelta(seconds=seconds)
    return lambda: datetime.now(UTC) + shift


class FakeClock:
    """A controllable clock: `clock.advance(minutes=5)`, `clock.set("2024-05-01T00:00:00Z")`."""

    def __init__(self, start: str | datetime = "2024-01-01T00:00:00Z") -> None:
        self._now = parse_time(start)

    def __call__(self) -> datetime:
        return self._now

    def advance(self, seconds: float = 0, **kwargs: float) -> datetime:
        self._now += timedelta(seconds=seconds, **kwargs)
        return self._now

    def set(self, when: str | datetime) -> None:
        self._now = parse_time(when)
