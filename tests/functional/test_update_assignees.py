"""github_update_issue's add_assignees/remove_assignees (issue 21: "assignees to add/remove"):
issues/add-assignees and issues/remove-assignees change only the logins named, so an assignment
made by someone else meanwhile is kept; changed_fields and ignored_fields say what GitHub shows;
a lost answer is settled by the logins sent."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.test_issue_tools import call
from tests.functional.test_update_truth import (
    OTHER,
    OUTSIDER,
    Hook,
    args,
    server_over,
    shown,
    version_now,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def team(fake: FakeGitHub, seeded: dict[str, Any]) -> int:
    """An issue assigned to hubot and octocat; mona can be assigned too."""
    fake.add_user("mona", collaborator_on=[f"{OWNER}/{REPO}"])
    return fake.add_issue(OWNER, REPO, "assigned", assignees=["hubot", "octocat"])


def writes(fake: FakeGitHub) -> list[tuple[str, str, Any]]:
    return [(r.method, r.path.rsplit("/", 1)[-1], r.body) for r in fake.requests if r.method != "GET"]


async def test_adding_and_removing_assignees_changes_only_the_logins_named(
        fake: FakeGitHub, team: int) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            team, add_assignees=["Mona", "mona"], remove_assignees=["HUBOT"]))
    assert not is_error, data
    assert shown(fake, team)["assignees"] == ["octocat", "mona"]
    assert sorted(data["issue"]["assignees"]) == ["mona", "octocat"]
    assert data["changed_fields"] == ["assignees"] and "ignored_fields" not in data
    assert data["version"] == await version_now(fake, team)
    # the logins as sent, each once; the whole list is never restated (no PATCH)
    assert writes(fake) == [("DELETE", "assignees", {"assignees": ["HUBOT"]}),
                            ("POST", "assignees", {"assignees": ["Mona"]})]


async def test_an_assignment_made_meanwhile_is_kept(fake: FakeGitHub, team: int) -> None:
    # someone assigns mona between our read and our write: a replacing list would drop her
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    fake.add_user("lisa", collaborator_on=[f"{OWNER}/{REPO}"])
    assigned: list[int] = []

    async def concurrent_assignment(request: httpx.Request) -> None:
        if request.method == "DELETE" and not assigned:
            async with fake.client(OTHER) as other:
                assigned.append((await other.post(f"/repos/{OWNER}/{REPO}/issues/{team}/assignees",
                                                  json={"assignees": ["mona"]})).status_code)

    async with Client(server_over(Hook(fake, before=concurrent_assignment)), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            team, add_assignees=["lisa"], remove_assignees=["hubot"]))
    assert assigned == [201] and not is_error, data
    assert shown(fake, team)["assignees"] == ["octocat", "mona", "lisa"]
    assert sorted(data["issue"]["assignees"]) == ["lisa", "mona", "octocat"]  # the add's answer: final


async def test_logins_already_as_asked_change_nothing_and_send_nothing(fake: FakeGitHub, team: int) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            team, add_assignees=["OCTOCAT"], remove_assignees=["mona"]))
    assert not is_error and data["changed_fields"] == [] and "ignored_fields" not in data
    assert writes(fake) == []


@pytest.mark.parametrize(("change", "field"), [
    ({"add_assignees": ["nobody-here"]}, "add_assignees"),  # cannot be assigned: checked first
    ({"add_assignees": ["mona"], "remove_assignees": ["MONA"]}, "add_assignees"),  # both
    ({"assignee_logins": ["mona"], "add_assignees": ["hubot"]}, "assignee_logins"),  # replace + add
    ({"assignee_logins": [], "remove_assignees": ["hubot"]}, "assignee_logins"),
])
async def test_refused_before_any_write(fake: FakeGitHub, team: int, change: dict[str, Any], field: str) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(team, title="Renamed", **change))
    assert is_error and data["code"] == "invalid_field", data
    assert field in (data["details"].get("field"), *data["details"].get("fields", ()))
    assert writes(fake) == [] and shown(fake, team)["title"] == "assigned"


async def test_what_github_drops_is_ignored_not_changed(fake: FakeGitHub, team: int) -> None:
    # without push access GitHub answers 201/200 and assigns nobody (documented: silently ignored)
    fake.add_token(OUTSIDER, "outsider", scopes=("repo",), collaborator_on=())
    mine = fake.add_issue(OWNER, REPO, "outsider issue", author="outsider", assignees=["hubot"])
    async with Client(in_memory_server(fake, token=OUTSIDER), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            mine, title="Edited", add_assignees=["mona"], remove_assignees=["hubot"]))
    assert not is_error, data
    assert data["changed_fields"] == ["title"]
    assert data["ignored_fields"] == ["add_assignees", "remove_assignees"]
    assert shown(fake, mine)["assignees"] == ["hubot"] and data["issue"]["assignees"] == ["hubot"]


async def test_an_eleventh_assignee_is_ignored(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    people = [f"dev{i:02d}" for i in range(11)]
    for login in people:
        fake.add_user(login, collaborator_on=[f"{OWNER}/{REPO}"])
    number = fake.add_issue(OWNER, REPO, "crowded", assignees=people[:10])
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, add_assignees=people[9:]))
    assert not is_error and data["changed_fields"] == [] and data["ignored_fields"] == ["add_assignees"]


@pytest.mark.parametrize("applied", [True, False])
async def test_a_lost_answer_is_settled_by_the_logins_sent(fake: FakeGitHub, team: int, applied: bool) -> None:
    # the add goes alone in the second wave (beside the removal it would not be final); its
    # answer is lost: the re-read says whether mona is assigned
    fake.faults.add(Match(operation="issues/add-assignees"), "status", status=502, times=None,
                    after_commit=applied)
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(
            team, add_assignees=["mona"], remove_assignees=["hubot"]))
    gets = [r for r in fake.requests if r.method == "GET" and r.path.endswith(f"/issues/{team}")]
    assert len(gets) == 2  # the version read and one re-read for the lost answer
    if applied:
        assert not is_error, data
        assert data["changed_fields"] == ["assignees"] and sorted(data["issue"]["assignees"]) == ["mona", "octocat"]
        return
    assert is_error and "not applied" in data["message"], data
    assert data["details"]["applied_fields"] == ["assignees"]  # the removal went through
    assert shown(fake, team)["assignees"] == ["octocat"]
