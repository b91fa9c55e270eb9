"""A write whose answer was lost is settled by the values it sent: applied only when GitHub shows
them on the same resource, not applied only when the old values (and, where it can tell,
`updated_at`) are unchanged, else unknown; a delete by name is done only when no resource keeps the
id. Regression tests for the second correctness review (/work/shared/repro/correctness-2/), each
named after its script."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened
from tests.functional.test_issue_tools import call
from tests.functional.test_update_truth import OTHER, args, server_over, shown, version_now

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}


class LoseThen(httpx.AsyncBaseTransport):
    """The first `method` request to a path ending with `tail` is sent (`commit`) or not, another
    user's request (`other`: method, path under the repository, body) runs, and the answer is lost."""

    def __init__(self, fake: FakeGitHub, method: str, tail: str, commit: bool,
                 other: tuple[str, str, Any]) -> None:
        self.inner, self.fake, self.method, self.tail = fake.asgi_transport(), fake, method, tail
        self.commit, self.other, self.done = commit, other, False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == self.method and request.url.path.endswith(self.tail) and not self.done:
            self.done = True
            if self.commit:
                await self.inner.handle_async_request(request)
            method, path, body = self.other
            async with self.fake.client(OTHER) as other:
                await other.request(method, f"/repos/{OWNER}/{REPO}{path}", json=body)
            raise httpx.RemoteProtocolError("connection reset", request=request)
        return await self.inner.handle_async_request(request)


@pytest.mark.parametrize(("commit", "theirs", "ours"), [
    (False, {"title": "Theirs"}, {"title": "Mine"}),  # (a): not applied; another writer's title
    (False, {"state": "closed", "state_reason": "not_planned"}, {"state": "closed"}),  # (b)
    (True, {"title": "Original"}, {"title": "Mine"}),  # (c): applied, then reverted by another
])
async def test_n02_a_lost_patch_is_judged_by_the_values_it_sent(
        fake: FakeGitHub, seeded: dict[str, Any], commit: bool, theirs: dict[str, Any],
        ours: dict[str, Any]) -> None:
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    number = fake.add_issue(OWNER, REPO, "Original")
    lose = LoseThen(fake, "PATCH", f"/issues/{number}", commit, ("PATCH", f"/issues/{number}", theirs))
    async with Client(server_over(lose), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, **ours))
    # neither "applied" (another writer's value is not ours) nor "not applied, repeat"
    assert is_error and data["code"] == "upstream_unavailable", data
    assert "not applied" not in data["message"] and "unknown" in data["message"], data
    assert data["details"]["applied_fields"] == []


async def test_n02_a_lost_patch_shown_on_the_same_issue_is_applied(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    number = fake.add_issue(OWNER, REPO, "Original")
    lose = LoseThen(fake, "PATCH", f"/issues/{number}", True, ("PATCH", f"/issues/{number}", {"body": "x"}))
    async with Client(server_over(lose), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, title="Mine"))
    assert not is_error and data["changed_fields"] == ["title"], data


async def test_n02_a_lost_patch_nothing_touched_since_is_not_applied(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "Original")
    lose = LoseThen(fake, "PATCH", f"/issues/{number}", False, ("GET", f"/issues/{number}", None))
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    async with Client(server_over(lose), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, title="Mine"))
    assert is_error and "a re-read shows it was not applied" in data["message"], data


@pytest.mark.parametrize(("other", "outcome"), [
    (("PATCH", "/labels/obsolete", {"new_name": "legacy"}), "not_applied"),  # (a) renamed: alive
    (("DELETE", "/labels/obsolete", None), "deleted"),  # (b) gone by id: the end state asked
    (("PATCH", "/labels/obsolete", {"color": "445566"}), "unknown"),  # (c) update_label
])
async def test_n05_a_lost_label_delete_is_done_only_when_no_label_keeps_its_id(
        fake: FakeGitHub, seeded: dict[str, Any], other: tuple[str, str, Any], outcome: str) -> None:
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    fake.add_label(OWNER, REPO, "obsolete", color="aaaaaa")
    number = fake.add_issue(OWNER, REPO, "carries it", labels=["obsolete"])
    updating = other[2] is not None and "color" in other[2]
    method, tool = ("PATCH", "github_update_label") if updating else ("DELETE", "github_delete_label")
    extra = {"color": "112233"} if updating else {"delete_mode": "force"}
    lose = LoseThen(fake, method, "/labels/obsolete", False, other)
    async with Client(server_over(lose), cache=None) as client:
        is_error, data = await call(client, tool, {**REPO_ARGS, "name": "obsolete", **extra})
    if outcome == "deleted":
        assert not is_error and data["deleted_label"]["name"] == "obsolete", data
        return
    assert is_error and data["code"] == "upstream_unavailable", data
    assert ("a re-read shows it was not applied" in data["message"]) == (outcome == "not_applied"), data
    if outcome == "not_applied":
        assert fake.label_names(OWNER, REPO, number) == ["legacy"]


async def test_n04_a_lost_milestone_delete_settles_and_its_repeat_says_why(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    empty = fake.add_milestone(OWNER, REPO, "empty")
    fake.faults.add("issues/delete-milestone", "reset", after_commit=True)
    async with Opened(in_memory_server(fake, spec=MILESTONES)) as s:
        done = await s.ok("github_delete_milestone", {**REPO_ARGS, "milestone_number": empty})
        assert done["deleted_milestone"]["milestone_number"] == empty
        again = await s.error("github_delete_milestone", {**REPO_ARGS, "milestone_number": empty},
                              "milestone_not_found")
    assert "deleted already" in again["message"] and again["repair"]["tool"] == "github_list_milestones"
    assert empty not in [m.number for m in fake.milestones(OWNER, REPO)]


async def test_n13_a_title_github_trims_is_compared_trimmed(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "Old title")
    async with Client(in_memory_server(fake), cache=None) as client:
        for expected in (["title"], []):
            is_error, data = await call(client, "github_update_issue", args(number, title="New title\n"))
            assert not is_error and data["changed_fields"] == expected, data
            assert "ignored_fields" not in data
    assert len([r for r in fake.requests if r.method == "PATCH"]) == 1  # the repeat sends nothing
    assert [r.body for r in fake.requests if r.method == "PATCH"] == [{"title": "New title\n"}]  # as sent


@pytest.mark.parametrize("when", ["labels", "issue"])
async def test_a_race_a_concurrent_edit_the_version_cannot_stop_is_reported(
        fake: FakeGitHub, seeded: dict[str, Any], when: str) -> None:
    # another user edits the issue while the update reads the labels (the version check sees it)
    # or right after the issue read (only the PATCH's answer shows it: GitHub has no
    # conditional write); either way the answer is conflict, never a plain success
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    number = fake.add_issue(OWNER, REPO, "Original title", labels=["triage"])
    version = await version_now(fake, number)
    edited: list[int] = []

    async def concurrent(request: httpx.Request) -> None:
        labels = request.method == "GET" and request.url.path.endswith("/labels")
        patch = request.method == "PATCH"
        if not edited and ((when == "labels" and labels) or (when == "issue" and patch)):
            async with fake.client(OTHER) as other:
                edited.append((await other.patch(f"/repos/{OWNER}/{REPO}/issues/{number}",
                                                 json={"assignees": ["hubot"]})).status_code)

    from tests.functional.test_update_truth import Hook

    async with Client(server_over(Hook(fake, before=concurrent)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, title="My title", add_labels=["bug"], remove_labels=["triage"],
            expected_version=version))
    assert edited == [200]
    assert is_error and data["code"] == "conflict", data
    if when == "issue":
        assert data["details"]["concurrent_fields"] == ["assignees"]
        assert data["details"]["applied_fields"] == ["title", "labels"]
        assert shown(fake, number)["labels"] == []  # triage removed beside the PATCH; bug never sent
