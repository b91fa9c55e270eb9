"""github_update_milestone when GitHub's answer to the PATCH is lost (official client, fake GitHub).

The update settles by re-reading the milestone (`settle: {}`): GitHub showing every field sent
answers success with changed_fields; the same milestone with none of them changed says the change
was not applied; anything else keeps "it may have been applied".
"""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
LOST = {"kind": "timeout", "after_commit": True, "delay": 2.0}  # applied, then no answer in time


def opened(fake: FakeGitHub) -> Opened:
    return Opened(in_memory_server(fake, spec=SERVER, timeout=0.5), secrets=("Renamed v2",))


def shown(fake: FakeGitHub, number: int) -> tuple[str, str | None, str]:
    ms = next(m for m in fake.milestones(OWNER, REPO) if m.number == number)
    return ms.title, ms.description, ms.state


async def test_an_update_whose_answer_was_lost_is_settled_by_a_re_read(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # before: upstream_unavailable "may have been applied", although GitHub showed the change
    number = fake.add_milestone(OWNER, REPO, "v2.0", description="old")
    fake.faults.add("issues/update-milestone", **LOST)  # type: ignore[arg-type]
    async with opened(fake) as s:
        data = await s.ok("github_update_milestone", {**REPO_ARGS, "milestone_number": number,
                                                      "title": "Renamed v2", "state": "closed"})
    assert data["changed_fields"] == ["title", "state"]
    assert (data["milestone"]["title"], data["milestone"]["state"]) == ("Renamed v2", "closed")
    assert shown(fake, number) == ("Renamed v2", "old", "closed")
    assert len(fake.calls("issues/update-milestone")) == 1


async def test_an_update_whose_answer_was_lost_and_not_applied_says_so(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_milestone(OWNER, REPO, "v2.0", description="old")
    fake.faults.add("issues/update-milestone", "status", status=502)  # not performed
    args = {**REPO_ARGS, "milestone_number": number, "description": "new"}
    async with opened(fake) as s:
        data = await s.error("github_update_milestone", args, "upstream_unavailable")
        assert data["temporary"] is True
        assert data["message"] == "GitHub's answer to a change was lost; a re-read shows it was not applied."
        again = await s.ok("github_update_milestone", args)
    assert again["changed_fields"] == ["description"] and shown(fake, number) == ("v2.0", "new", "open")

