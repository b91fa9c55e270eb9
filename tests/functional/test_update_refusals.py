"""github_update_issue never applies part of an update silently: every value GitHub may refuse is
checked in the reads wave, before any write; an error after a write names exactly what was
applied, whatever built it; `state` is never restated from the earlier read.

Regression tests for the second correctness review (/work/shared/repro/correctness-2/), each
named after its script.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.test_issue_tools import call
from tests.functional.test_update_truth import OTHER, Hook, args, server_over, shown

pytestmark = pytest.mark.anyio


def writes(fake: FakeGitHub) -> list[str]:
    return [f"{r.method} {r.path}" for r in fake.requests if r.method != "GET"]


@pytest.mark.parametrize(("change", "field"), [
    ({"milestone": 999}, "milestone"),  # n01: an unknown milestone number
    ({"assignee_logins": ["hubot", "nobody-here"]}, "assignee_logins"),  # n01 (variant)
    ({"title": " \n"}, "title"),  # GitHub trims titles: nothing is left
    ({"state": "closed", "state_reason": "reopened"}, "state_reason"),
])
async def test_n01_a_value_github_would_refuse_is_refused_before_any_write(
        fake: FakeGitHub, seeded: dict[str, Any], change: dict[str, Any], field: str) -> None:
    number = fake.add_issue(OWNER, REPO, "wave", labels=["bug"])
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, add_labels=["triage"], locked=True, lock_reason="resolved", **change))
    assert is_error and data["details"]["field"] == field, data
    assert "nothing was changed" in data["message"] and "applied_fields" not in data["details"]
    assert writes(fake) == []
    after = shown(fake, number)
    assert (after["labels"], after["locked"], after["milestone"]) == (["bug"], False, None)
    assert "nobody-here" not in str(data)  # logins are never echoed


async def test_n01_a_milestone_found_by_number_is_set(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "wave", labels=["bug"])
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, milestone=seeded["milestone"], assignee_logins=["HUBOT"], add_labels=["triage"]))
    assert not is_error, data
    assert data["changed_fields"] == ["assignees", "milestone", "labels"]
    assert shown(fake, number)["milestone"] == seeded["milestone"]


async def test_n01_an_error_mapper_cannot_drop_what_was_applied(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # the milestone is deleted between its check and the PATCH: GitHub refuses the PATCH while
    # the label and lock writes beside it are applied. The hook maps the refusal to
    # milestone_not_found, a new error; the answer still names what was applied.
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    doomed = fake.add_milestone(OWNER, REPO, "doomed")
    number = fake.add_issue(OWNER, REPO, "race", labels=["bug"])

    async def delete_after_check(request: httpx.Request) -> None:
        if request.method == "PATCH":
            async with fake.client(OTHER) as other:
                await other.delete(f"/repos/{OWNER}/{REPO}/milestones/{doomed}")

    async with Client(server_over(Hook(fake, before=delete_after_check)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, milestone=doomed, add_labels=["triage"], locked=True))
    assert is_error and data["code"] == "milestone_not_found", data
    assert data["details"]["applied_fields"] == ["labels", "locked"]
    assert "nothing was changed" not in data["message"]
    assert "Applied before the failure: labels, locked." in data["message"]
    after = shown(fake, number)
    assert (after["labels"], after["locked"]) == (["bug", "triage"], True)


async def test_n08_state_reason_alone_never_restates_the_state(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # someone reopens the issue right after it was read: a PATCH restating state closed (from
    # that read) would close it again. GitHub reads state_reason only with a state, so alone it
    # is not sent at all (B02: the dry run plans the same) and is reported ignored.
    number = fake.add_issue(OWNER, REPO, "closed issue", state="closed", state_reason="completed")

    def reopen_after_the_read(request: httpx.Request, response: httpx.Response) -> None:
        if request.method == "GET" and request.url.path.endswith(f"/issues/{number}"):
            item = fake.get_issue(OWNER, REPO, number)
            item.state, item.state_reason = "open", "reopened"

    async with Client(server_over(Hook(fake, after=reopen_after_the_read)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, state_reason="not_planned"))
    assert not is_error, data
    assert [r for r in fake.requests if r.method != "GET"] == []
    assert shown(fake, number)["state"] == "open"  # the reopen stands
    assert data["changed_fields"] == [] and data["ignored_fields"] == ["state_reason"]


async def test_n08_state_and_state_reason_together_change_the_reason(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "closed issue", state="closed", state_reason="completed")
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue",
                                    args(number, state="closed", state_reason="not_planned"))
    assert not is_error and data["changed_fields"] == ["state_reason"], data
    assert [r.body for r in fake.requests if r.method == "PATCH"] == [
        {"state_reason": "not_planned", "state": "closed"}]
