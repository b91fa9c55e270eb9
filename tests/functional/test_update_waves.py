"""github_update_issue sends independent requests together: one wave of reads, then its writes in
at most two waves. The fake's timeline (each request's arrival and answer) shows the sequential
phases; failures and lost answers inside a concurrent wave are reported exactly."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from fakegithub import FakeGitHub
from fakegithub.fake import critical_path
from fakegithub.faults import Match
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.test_issue_tools import call
from tests.functional.test_update_truth import OTHER, Hook, args, server_over, shown, version_now

pytestmark = pytest.mark.anyio
LATENCY_S = 0.2  # every answer waits this long, so requests sent together overlap


def calls(fake: FakeGitHub) -> list[Any]:
    """The tool call's requests (not the token's scope read at start)."""
    return [t for t in fake.timeline if t.operation_id != "rate-limit/get"]


def phases(fake: FakeGitHub) -> int:
    return critical_path([(t.started, t.ended) for t in calls(fake)])


def operations(fake: FakeGitHub) -> list[str]:
    return sorted(str(t.operation_id) for t in calls(fake))


@pytest.mark.parametrize(("change", "expected"), [
    # labels + milestone by title + issue | PATCH + removal | add (answers the final label list)
    ({"state": "closed", "state_reason": "not_planned", "add_labels": ["wontfix"],
      "remove_labels": ["triage"], "milestone": "v1.0"}, 3),
    # labels + issue | PATCH + add (one label request: its answer is final)
    ({"state": "closed", "add_labels": ["wontfix"]}, 2),
    # labels + issue | PATCH + lock + removal
    ({"title": "Renamed", "remove_labels": ["bug"], "locked": True}, 2),
    # labels + assignees + issue | label removal + unassign | label add + assign (each final)
    ({"add_labels": ["wontfix"], "remove_labels": ["triage"], "add_assignees": ["hubot"],
      "remove_assignees": ["octocat"]}, 3),
    # assignees + issue | PATCH + assign
    ({"title": "Renamed", "add_assignees": ["hubot"]}, 2),
])
async def test_an_update_takes_at_most_three_sequential_round_trips(
        fake: FakeGitHub, seeded: dict[str, Any], change: dict[str, Any], expected: int) -> None:
    number = seeded["first"]  # labels bug and triage
    fake.get_issue(OWNER, REPO, number).assignees.append("octocat")
    fake.latency = LATENCY_S
    fake.timeline.clear()
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, **change))
    fake.latency = 0
    assert not is_error, data
    assert phases(fake) == expected, [(t.operation_id, t.started, t.ended) for t in fake.timeline]
    assert "issues/get" in operations(fake) and operations(fake).count("issues/get") == 1  # no re-read
    assert data["version"] == await version_now(fake, number)
    if "add_labels" in change:
        assert sorted(data["issue"]["labels"]) == shown(fake, number)["labels"]
    assert data["issue"]["assignees"] == shown(fake, number)["assignees"]


async def test_one_request_at_a_time_when_the_operator_asks(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # GHMCP_MAX_CONCURRENT=1 (GitHub's best-practice guide: requests serially): every request of
    # the call starts after the previous one ended, and the answer is the same
    number = seeded["first"]
    fake.latency = LATENCY_S
    fake.timeline.clear()
    async with Client(in_memory_server(fake, max_concurrent=1), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, state="closed", state_reason="not_planned", add_labels=["wontfix"],
            remove_labels=["triage"], milestone="v1.0"))
    fake.latency = 0
    assert not is_error, data
    assert len(calls(fake)) >= 5 and phases(fake) == len(calls(fake))
    assert sorted(data["issue"]["labels"]) == shown(fake, number)["labels"]
    assert data["changed_fields"] == ["state", "state_reason", "milestone", "labels"]


async def test_a_failed_write_beside_others_reports_exactly_those_that_succeeded(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # the PATCH fails while the removal and the lock beside it succeed: all three were sent
    number = fake.add_issue(OWNER, REPO, "three writes", labels=["bug", "triage"])
    fake.faults.add(Match(operation="issues/update"), "status", status=403, times=None, body={
        "message": "Must have push access to this repository.",
        "documentation_url": "https://docs.github.com/rest"})
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, title="Renamed", remove_labels=["bug"], locked=True))
    assert is_error and data["code"] == "no_push_access"
    assert data["details"]["applied_fields"] == ["labels", "locked"]
    after = shown(fake, number)
    assert (after["title"], after["labels"], after["locked"]) == ("three writes", ["triage"], True)


async def test_a_failure_in_the_first_wave_sends_nothing_after_it(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "two waves", labels=["bug", "triage"])
    fake.faults.add(Match(operation="issues/remove-label", path="/labels/bug$"), "status", status=403,
                    times=None, body={"message": "Must have push access to this repository.",
                                      "documentation_url": "https://docs.github.com/rest"})
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, title="Renamed", add_labels=["wontfix"], remove_labels=["bug"]))
    assert is_error and data["details"]["applied_fields"] == ["title"]
    assert shown(fake, number)["labels"] == ["bug", "triage"]  # the add (second wave) never went out
    assert not [r for r in fake.requests if r.method == "POST"]


@pytest.mark.parametrize("applied", [True, False])
async def test_a_lost_answer_beside_another_removal_is_settled_by_its_own_label(
        fake: FakeGitHub, seeded: dict[str, Any], applied: bool) -> None:
    # bug and triage are removed in the same wave (wontfix last); bug's answer is lost. The re-read
    # shows triage gone either way: only bug's own label may say whether bug's removal happened.
    number = fake.add_issue(OWNER, REPO, "lost", labels=["bug", "triage", "wontfix"])
    fake.faults.add(Match(operation="issues/remove-label", path="/labels/bug$"), "status", status=502,
                    times=None, after_commit=applied)
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, title="Renamed", remove_labels=["bug", "triage", "wontfix"]))
    after = shown(fake, number)
    gets = [r for r in fake.requests if r.method == "GET" and r.path.endswith(f"/issues/{number}")]
    assert len(gets) == 2  # the version read and one re-read for the wave
    if applied:
        assert not is_error, data
        assert data["changed_fields"] == ["title", "labels"] and data["issue"]["labels"] == []
        assert after["labels"] == []
        return
    assert is_error and "not applied" in data["message"]
    assert data["details"]["applied_fields"] == ["title", "labels"]
    assert after["title"] == "Renamed" and after["labels"] == ["bug", "wontfix"]


async def test_an_edit_landing_while_a_second_label_request_is_read_is_a_conflict(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # the issue is read beside the first catalog page; a name missing from that page needs one
    # more request, so the issue is read again after it: the version check stays the last read
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    for i in range(100):
        fake.add_label(OWNER, REPO, f"area-{i:03d}")
    fake.add_label(OWNER, REPO, "zz-late")
    number = fake.add_issue(OWNER, REPO, "Original title")
    version = await version_now(fake, number)
    edited: list[int] = []

    async def concurrent_edit(request: httpx.Request) -> None:
        if request.method == "GET" and request.url.path.endswith("/labels/zz-late") and not edited:
            async with fake.client(OTHER) as other:
                edited.append((await other.patch(f"/repos/{OWNER}/{REPO}/issues/{number}",
                                                 json={"title": "Their title"})).status_code)

    async with Client(server_over(Hook(fake, before=concurrent_edit)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, title="My title", add_labels=["zz-late"], expected_version=version))
    assert edited == [200]
    assert is_error and data["code"] == "conflict", data
    assert shown(fake, number)["title"] == "Their title" and shown(fake, number)["labels"] == []
