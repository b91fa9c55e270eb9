"""Transforms that compare values the way GitHub stores them."""

from __future__ import annotations

import pytest

from ghmcp_runtime.core.transforms import due_day


@pytest.mark.parametrize(("sent", "kept"), [
    ("2026-12-31T00:00:00Z", "2026-12-30"),  # n03: the tool's old example is Dec 30 in Pacific time
    ("2026-12-31T12:00:00Z", "2026-12-31"),  # noon UTC is that day
    ("2026-12-30T08:00:00Z", "2026-12-30"),  # GitHub's answer (midnight PST) maps back to its day
    ("2026-07-04T07:00:00Z", "2026-07-04"),  # midnight PDT
    ("2026-07-04T06:59:59Z", "2026-07-03"),
    ("2026-12-31T12:00:00-08:00", "2026-12-31"),
    ("2026-03-08T09:59:59Z", "2026-03-08"),  # 01:59 PST, the morning DST starts
    ("2026-03-08T10:00:00Z", "2026-03-08"),  # 03:00 PDT
    ("2026-12-31", "2026-12-31"),
    ("not a date", "not a date"),
    (None, None),
])
def test_n03_due_day_is_the_us_pacific_calendar_day_github_keeps(sent: object, kept: object) -> None:
    assert due_day(sent) == kept
