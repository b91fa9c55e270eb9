"""github-milestones-mcp answers what GitHub keeps. Regression tests for the second correctness
review (/work/shared/repro/correctness-2/), each named after its script."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER
from tests.functional.conftest import OWNER, REPO
from tests.functional.test_milestone_lost_answers import LOST, opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
EXAMPLE_DUE = "2026-12-31T00:00:00Z"  # Dec 30 in US Pacific time: GitHub keeps Dec 30


def due(fake: FakeGitHub, number: int) -> str | None:
    ms = next(m for m in fake.milestones(OWNER, REPO) if m.number == number)
    return ms.due_on.strftime("%Y-%m-%dT%H:%M:%SZ") if ms.due_on else None


async def test_n03_a_due_date_is_compared_as_the_calendar_day_github_keeps(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with opened(fake) as s:
        made = await s.ok("github_create_milestone", {**REPO_ARGS, "title": "v1.1", "due_on": EXAMPLE_DUE})
        number = made["milestone"]["milestone_number"]
        assert made["milestone"]["due_on"] == "2026-12-30T08:00:00Z"
        for _ in range(2):  # a repeat of what GitHub already keeps changes nothing, sends nothing
            again = await s.ok("github_update_milestone", {**REPO_ARGS, "milestone_number": number,
                                                           "due_on": EXAMPLE_DUE})
            assert again["changed_fields"] == []
        assert fake.calls("issues/update-milestone") == []
        # a lost answer is judged by the day GitHub keeps: applied, not "not applied, repeat"
        fake.faults.add("issues/update-milestone", **LOST)  # type: ignore[arg-type]
        moved = await s.ok("github_update_milestone", {**REPO_ARGS, "milestone_number": number,
                                                       "due_on": "2027-01-15T00:00:00Z"})
    assert moved["changed_fields"] == ["due_on"] and due(fake, number) == "2027-01-14T08:00:00Z"


def test_n03_the_due_date_parameters_say_which_day_github_keeps() -> None:
    tools = {t.name: t for t in SERVER.tools}
    for name in ("github_create_milestone", "github_update_milestone"):
        text = tools[name].input_schema["properties"]["due_on"]["description"]
        assert "Pacific calendar day" in text, text
    example = tools["github_create_milestone"].meta.get("example") or tools["github_create_milestone"].description
    assert "2026-12-31T00:00:00Z" not in str(example)
