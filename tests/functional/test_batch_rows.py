"""Batch rows that need no read-back, and one comment per changed item (issue 34, item 4).

A changed item's row shows the issue as the change left it (state, state_reason, labels,
assignees, milestone: what github_update_issue answered), and `comment` posts one comment on each
item the call changes, through github_add_comment, byte for byte, its idempotency key derived per
item from the call's key (or the call): a repeated call posts nothing twice."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
NOTE = "Closing as stale.\r\nReopen if it still happens \u2014 with steps.  "  # CRLF, a dash, trailing spaces


@pytest.fixture
def stale(fake: FakeGitHub, seeded: dict[str, Any]) -> list[int]:
    """Three issues labelled `stale`, the last one already closed."""
    fake.add_label(OWNER, REPO, "stale")
    numbers = [fake.add_issue(OWNER, REPO, f"stale {i}", labels=["stale"], author="hubot",
                              assignees=["hubot"] if i == 0 else [], milestone=seeded["milestone"] if i == 1 else None)
               for i in range(3)]
    fake.get_issue(OWNER, REPO, numbers[2]).state = "closed"
    return numbers


def comments(fake: FakeGitHub, number: int) -> list[str]:
    return [c.body for c in fake.comments(OWNER, REPO, number)]


async def test_a_bulk_close_with_a_comment_answers_each_issue_as_it_is_now(
        fake: FakeGitHub, stale: list[int]) -> None:
    args = {**REPO_ARGS, "match": {"labels": ["stale"], "state": "all"}, "state": "closed",
            "state_reason": "not_planned", "comment": NOTE, "idempotency_key": "stale-sweep-1"}
    async with Opened(in_memory_server(fake)) as s:
        done = await s.ok("github_update_issues", args)
        again = await s.ok("github_update_issues", args)
    rows = {r["issue_number"]: r for r in done["items"]}
    first, second, closed = (rows[n] for n in stale)
    assert first == {"issue_number": stale[0], "outcome": "changed", "changed_fields": ["state", "state_reason"],
                     "state": "closed", "state_reason": "not_planned", "labels": ["stale"], "assignees": ["hubot"],
                     "milestone": None, "comment_id": fake.comments(OWNER, REPO, stale[0])[-1].id}
    assert second["milestone"] == {"number": 1, "title": "v1.0"} and second["assignees"] == []
    assert closed["outcome"] == "changed" and closed["changed_fields"] == ["state_reason"]  # completed -> not planned
    assert done["summary"] == {"changed": 3, "unchanged": 0, "error": 0, "commented": 3}
    for number in stale:  # the text GitHub keeps is the text sent, byte for byte, once
        assert comments(fake, number) == [NOTE]
        issue = fake.get_issue(OWNER, REPO, number)
        assert (issue.state, issue.state_reason) == ("closed", "not_planned")
    assert {**again, "request_id": ""} == {**done, "request_id": ""}  # the key's first answer, nothing posted twice
    assert len(fake.calls("issues/create-comment")) == 3


async def test_only_changed_items_get_the_comment_and_a_retry_posts_it_once(
        fake: FakeGitHub, stale: list[int]) -> None:
    """A lost answer to a comment is retried under the same derived key: found, not posted again."""
    fake.faults.add(f"POST /repos/{OWNER}/{REPO}/issues/{stale[0]}/comments$", "timeout", after_commit=True,
                    delay=0.2, times=1)
    args = {**REPO_ARGS, "issue_numbers": stale, "state": "closed", "comment": "Done."}
    async with Opened(in_memory_server(fake, timeout=0.1)) as s:
        done = await s.ok("github_update_issues", args)
        repeat = await s.ok("github_update_issues", args)  # no key: every issue is closed now
    rows = {r["issue_number"]: r for r in done["items"]}
    assert rows[stale[2]] == {"issue_number": stale[2], "outcome": "unchanged", "changed_fields": []}
    assert comments(fake, stale[2]) == []  # already closed: not changed, not commented
    assert comments(fake, stale[1]) == ["Done."]
    lost = rows[stale[0]]  # posted, its answer lost: the repeat under the derived key finds it
    assert lost["comment_id"] == fake.comments(OWNER, REPO, stale[0])[-1].id
    assert comments(fake, stale[0]) == ["Done."]
    assert [r["outcome"] for r in repeat["items"]] == ["unchanged"] * 3 and "commented" in repeat["summary"]
    assert repeat["summary"]["commented"] == 0


async def test_a_comment_that_fails_is_said_in_its_row_and_the_batch_goes_on(
        fake: FakeGitHub, stale: list[int]) -> None:
    fake.faults.add(f"POST /repos/{OWNER}/{REPO}/issues/{stale[0]}/comments$", "status", status=502, times=10)
    async with Opened(in_memory_server(fake)) as s:
        done = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": stale[:2], "add_labels": ["wontfix"],
                                                   "comment": "Won't fix."})
    failed, posted = done["items"]
    assert failed["outcome"] == "changed" and failed["labels"] == ["stale", "wontfix"]
    assert failed["comment_error"]["code"] == "upstream_unavailable" and "comment_id" not in failed
    assert posted["comment_id"] == fake.comments(OWNER, REPO, stale[1])[-1].id
    assert done["summary"]["commented"] == 1


async def test_a_dry_run_plans_the_change_and_posts_nothing(fake: FakeGitHub, stale: list[int]) -> None:
    async with Opened(in_memory_server(fake)) as s:
        planned = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": stale, "state": "closed",
                                                      "comment": "Bye.", "dry_run": True})
    assert fake.calls("issues/create-comment") == [] and fake.calls("issues/update") == []
    assert [set(r) for r in planned["items"]] == [{"issue_number", "outcome", "changed_fields"}] * 3
    assert "commented" not in planned["summary"]


async def test_milestone_rows_show_the_new_state_and_due_date(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Opened(in_memory_server(fake, spec=MILESTONES)) as s:
        done = await s.ok("github_update_milestones", {**REPO_ARGS, "milestone_numbers": [seeded["milestone"]],
                                                       "state": "closed", "due_on": "2027-01-15T12:00:00Z"})
    row = done["items"][0]
    assert (row["outcome"], row["state"], row["due_on"]) == ("changed", "closed", "2027-01-15T08:00:00Z")


async def test_a_surface_without_the_comment_tool_keeps_the_batch_and_refuses_its_comment(
        fake: FakeGitHub, stale: list[int]) -> None:
    from ghmcp_runtime.guards.exposure import ExposureFlags

    narrowed = in_memory_server(fake, exposure=ExposureFlags(toolsets=("issues",), exclude_tools=("github_add_comment",)))
    async with Opened(narrowed) as s:
        assert "github_update_issues" in s.tools and "github_add_comment" not in s.tools
        refused = await s.error("github_update_issues", {**REPO_ARGS, "issue_numbers": stale, "state": "closed",
                                                         "comment": "Bye."}, "invalid_field")
        done = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": stale[:1], "state": "closed"})
    assert refused["details"] == {"field": "comment", "reason": "github_add_comment is not on this surface"}
    assert done["items"][0]["outcome"] == "changed" and fake.calls("issues/create-comment") == []
    assert fake.get_issue(OWNER, REPO, stale[1]).state == "open"  # the refused call changed nothing
