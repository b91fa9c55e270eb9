"""Clocks: the fake reads time only through a `Clock` (a zero-argument callable)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

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
