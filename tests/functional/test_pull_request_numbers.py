"""A pull request's number given to an issue tool (issue 34, item 2): GitHub shares the number
space, so the issues API answers (and even changes) a pull request under an issue number. Every
issue tool that reads or changes it, and every tool that would link it, refuses it with
`is_pull_request` before anything is written, saying which number and where the pull request is,
instead of `issue_not_found` with a search repair that cannot help (agents probed number after
number). A link removal or a move answers as GitHub does: a pull request is never linked, so
removed is false."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client, MCPError

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.exposure import ExposureFlags
from github_mcp import SERVER as GITHUB
from github_sub_issues_mcp import SERVER as SUB_ISSUES
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}


def pull_url(number: int) -> str:
    return f"https://github.com/{OWNER}/{REPO}/pull/{number}"


def assert_refused(data: dict[str, Any], number: int, field: str = "issue_number") -> None:
    assert data["code"] == "is_pull_request", data
    assert data["details"] == {"field": field, "number": number, "url": pull_url(number),
                               "reason": "the number belongs to a pull request"}
    assert data["temporary"] is False
    assert "repair" not in data  # this server has no pull-request tool to point at


async def test_every_issue_tool_refuses_a_pull_request_number_and_changes_nothing(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    pr = seeded["pr"]
    before = fake.get_issue(OWNER, REPO, pr)
    state, labels, comments = before.state, fake.label_names(OWNER, REPO, pr), len(fake.comments(OWNER, REPO, pr))
    async with Opened(in_memory_server(fake)) as s:
        one = {**REPO_ARGS, "issue_number": pr}
        assert_refused(await s.error("github_get_issue", one, "is_pull_request"), pr)
        assert_refused(await s.error("github_update_issue", {**one, "state": "closed", "add_labels": ["wontfix"]},
                                     "is_pull_request"), pr)
        assert_refused(await s.error("github_add_comment", {**one, "body": "LGTM"}, "is_pull_request"), pr)
        batch = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": [seeded["first"], pr],
                                                    "add_labels": ["wontfix"]})
    after = fake.get_issue(OWNER, REPO, pr)
    assert (after.state, fake.label_names(OWNER, REPO, pr), len(fake.comments(OWNER, REPO, pr))) == (
        state, labels, comments)
    items = {row["issue_number"]: row for row in batch["items"]}
    assert items[seeded["first"]]["outcome"] == "changed"
    assert items[pr]["outcome"] == "error" and items[pr]["error"]["code"] == "is_pull_request"
    assert items[pr]["error"]["details"]["url"] == pull_url(pr)
    assert fake.calls("issues/update") == [] and fake.calls("issues/create-comment") == []
    assert "wontfix" in fake.label_names(OWNER, REPO, seeded["first"])


async def test_a_resource_read_of_a_pull_request_number_says_so(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"ghissues://repos/{OWNER}/{REPO}/issues/{seeded['pr']}")
    data = raised.value.error.data
    assert isinstance(data, dict) and data["machine_code"] == "is_pull_request"
    assert data["details"]["url"] == pull_url(seeded["pr"])


async def test_sub_issue_tools_refuse_pull_request_numbers_before_linking(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    pr, first = seeded["pr"], seeded["first"]
    async with Opened(in_memory_server(fake, spec=SUB_ISSUES)) as s:
        assert_refused(await s.error("github_get_parent_issue", {**REPO_ARGS, "issue_number": pr},
                                     "is_pull_request"), pr)
        assert_refused(await s.error("github_add_sub_issue", {**REPO_ARGS, "issue_number": first,
                                                              "sub_issue_number": pr}, "is_pull_request"),
                       pr, "sub_issue_number")
        assert_refused(await s.error("github_add_issue_dependency", {**REPO_ARGS, "issue_number": first,
                                                                     "blocked_by_issue_number": pr},
                                     "is_pull_request"), pr, "blocked_by_issue_number")
        errors = json.loads((await s.client.read_resource("ghsubissues://server/errors")).contents[0].text)  # type: ignore[union-attr]
    assert fake.calls("issues/add-sub-issue") == [] and fake.calls("issues/add-blocked-by-dependency") == []
    assert any(e["code"] == "is_pull_request" for e in errors["codes"])


async def test_the_forge_server_points_at_its_pull_request_tool_where_the_surface_has_it(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    pr = seeded["pr"]
    one = {**REPO_ARGS, "issue_number": pr}
    async with Opened(in_memory_server(fake, spec=GITHUB)) as s:  # the default toolsets
        read = await s.error("github_get_issue", one, "is_pull_request")
        closing = await s.error("github_update_issue", {**one, "state": "closed"}, "is_pull_request")
        child = await s.error("github_add_sub_issue", {**REPO_ARGS, "issue_number": seeded["first"],
                                                       "sub_issue_number": pr}, "is_pull_request")
        followed = await s.ok(read["repair"]["tool"], read["repair"]["arguments"])
    for data in (read, closing):
        assert data["repair"]["tool"] == "github_get_pull_request"
        assert data["repair"]["arguments"] == {**REPO_ARGS, "pull_number": pr}
    assert child["repair"]["arguments"] == {**REPO_ARGS, "pull_number": pr}
    assert followed["pull_request"]["url"] == pull_url(pr)
    issues_only = in_memory_server(fake, spec=GITHUB, exposure=ExposureFlags(toolsets=("issues",)))
    async with Opened(issues_only) as s:
        narrowed = await s.error("github_get_issue", one, "is_pull_request")
    assert "repair" not in narrowed  # no tool on this surface to point at
    assert fake.get_issue(OWNER, REPO, pr).state == "open"


async def test_a_link_removal_given_a_pull_request_number_answers_removed_false(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    pr, first = seeded["pr"], seeded["first"]
    async with Opened(in_memory_server(fake, spec=SUB_ISSUES)) as s:
        sub = await s.ok("github_remove_sub_issue", {**REPO_ARGS, "issue_number": first, "sub_issue_number": pr})
        blocker = await s.ok("github_remove_issue_dependency", {**REPO_ARGS, "issue_number": first,
                                                                 "blocked_by_issue_number": pr})
    assert sub["removed"] is False and sub["sub_issue"]["issue_number"] == pr
    assert blocker["removed"] is False and blocker["blocked_by"]["issue_number"] == pr
