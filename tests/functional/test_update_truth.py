"""github_update_issue (and create) answer what GitHub shows, never what was asked.

Regression tests for the write-safety issue, defects 3-8, 13, 15 and the Unicode case check; each
names the reproduction it comes from (/work/shared/repro/correctness/r_*.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from mcp import Client

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.serving.app import Settings, build_server
from github_issues_mcp import SERVER
from tests.functional.conftest import FAST_RETRY, OWNER, REPO, TOKEN, in_memory_server
from tests.functional.test_issue_tools import call

pytestmark = pytest.mark.anyio
OUTSIDER = "ghp_outsidertoken0000000000000000000000002"
OTHER = "ghp_othertoken00000000000000000000000000003"


def args(number: int, **kw: Any) -> dict[str, Any]:
    return {"owner": OWNER, "repo": REPO, "issue_number": number, **kw}


class Hook(httpx.AsyncBaseTransport):
    """The fake's transport, with `before(request)` / `after(request, response)` callbacks."""

    def __init__(self, fake: FakeGitHub, *, before: Callable[[httpx.Request], Any] | None = None,
                 after: Callable[[httpx.Request, httpx.Response], None] | None = None) -> None:
        self.inner, self.before, self.after = fake.asgi_transport(), before, after

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.before is not None:
            await self.before(request)
        response = await self.inner.handle_async_request(request)
        if self.after is not None:
            self.after(request, response)
        return response


def server_over(transport: httpx.AsyncBaseTransport) -> Any:
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                              transport=transport, timeout=5, retry=FAST_RETRY)
    return build_server(SERVER, Settings(token=TOKEN), upstream=upstream)


def shown(fake: FakeGitHub, number: int) -> dict[str, Any]:
    item = fake.get_issue(OWNER, REPO, number)
    return {"title": item.title, "state": item.state, "state_reason": item.state_reason,
            "assignees": item.assignees, "milestone": item.milestone,
            "labels": sorted(fake.label_names(OWNER, REPO, number)),
            "locked": item.locked, "lock_reason": item.lock_reason}


async def version_now(fake: FakeGitHub, number: int) -> str:
    async with Client(in_memory_server(fake), cache=None) as client:
        _, data = await call(client, "github_get_issue", args(number, detail="summary"))
    return str(data["version"])


# -- 3: the write happened, only the re-read failed ----------------------------------------------


async def test_update_answers_from_githubs_write_answers_when_reading_back_fails(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_update_final_get.py: after the PATCH succeeded every GET of the issue failed, and the
    # answer was upstream_unavailable without applied_fields while GitHub showed the change
    number = fake.add_issue(OWNER, REPO, "Before", body="b")

    def break_reads(request: httpx.Request, response: httpx.Response) -> None:
        if request.method == "PATCH" and response.status_code == 200:
            fake.faults.add(Match(operation="issues/get"), "status", status=502, times=None)

    async with Client(server_over(Hook(fake, after=break_reads)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue",
                                    args(number, title="After", state="closed"))
    assert not is_error, data
    assert data["changed_fields"] == ["title", "state", "state_reason"] and data["issue"]["state"] == "closed"
    assert data["issue"]["title"] == "After"  # from GitHub's write answers
    fake.faults.clear()
    assert shown(fake, number)["title"] == "After"
    assert data["version"] == await version_now(fake, number)


# -- 4 and 5: label steps ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [502, 403])
async def test_applied_fields_include_labels_removed_before_a_later_removal_failed(
        fake: FakeGitHub, seeded: dict[str, Any], status: int) -> None:
    # r_update_steps.py (a)
    number = fake.add_issue(OWNER, REPO, "multi", labels=["bug", "triage", "wontfix"])
    fake.faults.add(Match(operation="issues/remove-label", path="/labels/triage$"), "status",
                    status=status, times=None)
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue",
                                    args(number, title="Renamed", remove_labels=["bug", "triage"]))
    assert is_error
    assert shown(fake, number)["labels"] == ["triage", "wontfix"]
    assert data["details"]["applied_fields"] == ["title", "labels"]


async def test_a_label_named_twice_in_remove_labels_is_removed_once(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_update_steps.py (b): ["bug", "BUG"] sent two DELETEs; the second 404 made it label_not_found
    number = fake.add_issue(OWNER, REPO, "dup", labels=["bug", "triage"])
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, remove_labels=["bug", "BUG"]))
    assert not is_error, data
    assert data["changed_fields"] == ["labels"] and data["issue"]["labels"] == ["triage"]
    assert shown(fake, number)["labels"] == ["triage"]
    assert len([r for r in fake.requests if r.method == "DELETE"]) == 1


# -- 6: changed_fields is GitHub's result ---------------------------------------------------------


async def test_state_reason_on_a_closed_issue_is_sent_with_the_state_and_applied(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_changed_fields.py (1): state_reason alone is ignored by GitHub, yet was reported changed
    number = fake.add_issue(OWNER, REPO, "closed one", state="closed", state_reason="completed")
    async with Client(in_memory_server(fake), cache=None) as client:
        _, data = await call(client, "github_update_issue",
                             args(number, state="closed", state_reason="not_planned"))
    assert shown(fake, number)["state_reason"] == "not_planned"
    assert data["changed_fields"] == ["state_reason"] and "ignored_fields" not in data


@pytest.mark.parametrize(("start", "change", "changed", "ignored", "reason_after"), [
    # r_changed_fields.py (2): a close reason on an open issue changes nothing
    ({"state": "open"}, {"state": "open", "state_reason": "completed"}, [], ["state_reason"], None),
    # r_changed_fields.py (3): reopening with not_planned stores reopened: the reason changed,
    # though not to the one asked (B02: a consequence of the state is reported, as planned)
    ({"state": "closed", "state_reason": "completed"}, {"state": "open", "state_reason": "not_planned"},
     ["state", "state_reason"], ["state_reason"], "reopened"),
])
async def test_a_state_reason_github_does_not_store_is_ignored_not_changed(
        fake: FakeGitHub, seeded: dict[str, Any], start: dict[str, Any], change: dict[str, Any],
        changed: list[str], ignored: list[str], reason_after: str | None) -> None:
    number = fake.add_issue(OWNER, REPO, "reasons", **start)
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, **change))
    assert not is_error
    assert shown(fake, number)["state_reason"] == reason_after
    assert data["changed_fields"] == changed and data["ignored_fields"] == ignored


async def test_fields_github_drops_without_push_access_are_ignored_on_update_and_create(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_changed_fields.py (4) and (5): assignees/milestone silently dropped, reported as changed
    # (update) or not at all (create)
    fake.add_token(OUTSIDER, "outsider", scopes=("repo",), collaborator_on=())
    mine = fake.add_issue(OWNER, REPO, "outsider issue", author="outsider")
    async with Client(in_memory_server(fake, token=OUTSIDER), cache=None) as client:
        is_error, updated = await call(client, "github_update_issue", args(
            mine, title="Edited", assignee_logins=["hubot"], milestone=seeded["milestone"]))
        assert not is_error, updated
        is_error, created = await call(client, "github_create_issue", {
            "owner": OWNER, "repo": REPO, "title": "t", "labels": ["bug"], "assignee_logins": ["hubot"],
            "milestone": seeded["milestone"]})
        assert not is_error, created
    assert shown(fake, mine)["title"] == "Edited" and shown(fake, mine)["assignees"] == []
    assert updated["changed_fields"] == ["title"]
    assert updated["ignored_fields"] == ["assignee_logins", "milestone"]
    assert created["ignored_fields"] == ["assignee_logins", "milestone", "labels"]
    assert (created["issue"]["assignees"], created["issue"]["milestone"]) == ([], None)
    assert shown(fake, created["issue"]["issue_number"])["labels"] == []


async def test_repeated_assignee_logins_are_no_change_on_every_call(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_changed_fields.py (6)
    number = fake.add_issue(OWNER, REPO, "assigned", assignees=["hubot"])
    async with Client(in_memory_server(fake), cache=None) as client:
        for _ in range(2):
            _, data = await call(client, "github_update_issue",
                                 args(number, assignee_logins=["hubot", "HUBOT"]))
            assert data["changed_fields"] == [] and "ignored_fields" not in data
    assert not [r for r in fake.requests if r.method == "PATCH"]


async def test_a_new_lock_reason_on_a_locked_issue_is_applied(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # locked: true with another reason used to be skipped silently because the issue was locked
    number = fake.add_issue(OWNER, REPO, "heated", locked=True, lock_reason="spam")
    async with Client(in_memory_server(fake), cache=None) as client:
        _, data = await call(client, "github_update_issue", args(number, locked=True, lock_reason="off-topic"))
    assert shown(fake, number)["lock_reason"] == "off-topic"
    assert data["changed_fields"] == ["lock_reason"]
    assert data["version"] == await version_now(fake, number)


# -- 7: the version is checked after every other read ----------------------------------------------


async def test_an_edit_landing_while_labels_are_read_is_a_conflict(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_race.py: the concurrent title edit was overwritten without conflict
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    number = fake.add_issue(OWNER, REPO, "Original title")
    version = await version_now(fake, number)
    edited: list[int] = []

    async def concurrent_edit(request: httpx.Request) -> None:
        if request.method == "GET" and request.url.path.endswith("/labels") and not edited:
            async with fake.client(OTHER) as other:
                edited.append((await other.patch(f"/repos/{OWNER}/{REPO}/issues/{number}",
                                                 json={"title": "Their title"})).status_code)

    async with Client(server_over(Hook(fake, before=concurrent_edit)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            number, title="My title", add_labels=["bug"], expected_version=version))
    assert edited == [200]
    assert is_error and data["code"] == "conflict"
    assert shown(fake, number)["title"] == "Their title" and shown(fake, number)["labels"] == []


# -- 13: add and remove of one label ----------------------------------------------------------------


@pytest.mark.parametrize("removed", ["bug", "BUG"])
async def test_adding_and_removing_one_label_is_refused_every_time(
        fake: FakeGitHub, seeded: dict[str, Any], removed: str) -> None:
    # r_toggle.py: the label flipped on every call
    number = fake.add_issue(OWNER, REPO, "toggle")
    async with Client(in_memory_server(fake), cache=None) as client:
        for _ in range(2):
            is_error, data = await call(client, "github_update_issue",
                                        args(number, add_labels=["bug"], remove_labels=[removed]))
            assert is_error and data["code"] == "invalid_field"
            assert data["details"]["fields"] == ["add_labels", "remove_labels"]
    assert shown(fake, number)["labels"] == []
    assert not [r for r in fake.requests if r.method != "GET"]


# -- 15 and the case rule: names resolved by GitHub ---------------------------------------------------


async def test_labels_past_the_first_thousand_exist(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_catalog.py: create/update reported a label past the 1,000th as nonexistent
    for i in range(1000):
        fake.add_label(OWNER, REPO, f"area-{i:04d}")
    fake.add_label(OWNER, REPO, "zz-release-blocker")
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue",
                                    args(seeded["first"], add_labels=["ZZ-release-blocker"]))
        assert not is_error, data
        is_error, created = await call(client, "github_create_issue", {
            "owner": OWNER, "repo": REPO, "title": "x", "labels": ["zz-release-blocker"]})
        assert not is_error, created
        is_error, missing = await call(client, "github_create_issue", {
            "owner": OWNER, "repo": REPO, "title": "x", "labels": ["bug", "zz-nothing"]})
    assert "zz-release-blocker" in shown(fake, seeded["first"])["labels"]
    assert shown(fake, created["issue"]["issue_number"])["labels"] == ["zz-release-blocker"]
    assert missing["code"] == "label_not_found"
    assert missing["details"] == {"field": "labels", "count": 1, "reason": "no such label: labels[1]"}
    catalog_pages = [r for r in fake.requests if r.method == "GET" and r.path.endswith("/labels")]
    assert len(catalog_pages) == 3  # one first page per call, then one lookup per name it lacks


async def test_the_label_filter_and_the_label_checks_fold_case_alike(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_labels.py (end): search found `straße` as the label STRASSE, update refused it as missing.
    # Non-ASCII case is GitHub's call: whatever its lookup answers, writes use that exact name.
    fake.add_label(OWNER, REPO, "STRASSE")
    fake.add_label(OWNER, REPO, "Été")
    tagged = fake.add_issue(OWNER, REPO, "tagged", labels=["STRASSE"])
    number = fake.add_issue(OWNER, REPO, "untagged")
    labels_before = len(fake.state.find_repo(OWNER, REPO).labels)  # type: ignore[union-attr]
    async with Client(in_memory_server(fake), cache=None) as client:
        _, found = await call(client, "github_search_issues",
                              {"owner": OWNER, "repo": REPO, "labels": ["straße"]})
        is_error, data = await call(client, "github_update_issue",
                                    args(number, add_labels=["straße", "été"]))
    assert [i["issue_number"] for i in found["issues"]] == [tagged]
    assert not is_error, data
    assert shown(fake, number)["labels"] == ["STRASSE", "Été"]
    assert len(fake.state.find_repo(OWNER, REPO).labels) == labels_before  # type: ignore[union-attr]


async def test_a_label_removed_by_someone_else_meanwhile_counts_as_removed(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    number = fake.add_issue(OWNER, REPO, "race", labels=["bug", "triage"])

    async def remove_first(request: httpx.Request) -> None:
        if request.method == "DELETE":
            async with fake.client(OTHER) as other:
                await other.delete(f"/repos/{OWNER}/{REPO}/issues/{number}/labels/bug")

    async with Client(server_over(Hook(fake, before=remove_first)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, remove_labels=["bug"]))
    assert not is_error, data
    assert data["changed_fields"] == ["labels"] and shown(fake, number)["labels"] == ["triage"]
    assert data["version"] == await version_now(fake, number)


# -- 8: the version covers the lock reason -----------------------------------------------------------


async def test_two_lock_reasons_are_two_versions(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_version_lock.py: locked as spam and locked as off-topic shared one version
    spam = fake.add_issue(OWNER, REPO, "heated", locked=True, lock_reason="spam")
    off_topic = fake.add_issue(OWNER, REPO, "heated", locked=True, lock_reason="off-topic")
    async with Client(in_memory_server(fake), cache=None) as client:
        _, a = await call(client, "github_get_issue", args(spam))
        _, b = await call(client, "github_get_issue", args(off_topic))
    assert a["issue"]["lock_reason"] != b["issue"]["lock_reason"]
    assert a["version"] != b["version"]
