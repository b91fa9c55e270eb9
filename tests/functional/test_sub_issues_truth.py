"""github-sub-issues-mcp answers against the fake's tree (correctness-3 S1, S2).

S1: a write whose answer is lost after GitHub applied it is settled by a read (add: the list of
sub-issues or of blockers again; remove: the sub-issue's parent again), so the first call says
what happened; where no read settles it (a dependency's removal) the repair reads the links
instead of repeating. S2: a sub-issue (or a parent, a dependency) of another repository is not
listed with a bare number that the other tools would read as this repository's; a pull request,
the parent itself and a move onto itself are refused with their own reason, before any write.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from github_sub_issues_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
LOST = {"kind": "timeout", "after_commit": True, "delay": 1.0}  # applied, then no answer in time


def opened(fake: FakeGitHub) -> Opened:
    return Opened(in_memory_server(fake, spec=SERVER, timeout=0.5))


@pytest.fixture
def tree(fake: FakeGitHub, seeded: dict[str, Any]) -> dict[str, int]:
    """A parent with sub-issues a0 and b; b is blocked by the parent; a and c are free."""
    made = {name: fake.add_issue(OWNER, REPO, name) for name in ("parent", "a0", "a", "b", "c")}
    for name in ("a0", "b"):
        fake.add_sub_issue(OWNER, REPO, made["parent"], made[name])
    fake.add_blocker(OWNER, REPO, made["b"], made["parent"])
    return made


def writes(fake: FakeGitHub, since: int) -> list[Any]:
    return [r for r in fake.requests[since:] if r.method != "GET"]


# -- S1: lost answers ---------------------------------------------------------------------------


async def test_s1_a_lost_sub_issue_add_is_settled_by_the_list(fake: FakeGitHub, tree: dict[str, int]) -> None:
    fake.faults.add(Match(operation="issues/add-sub-issue"), **LOST)
    args = {**REPO_ARGS, "issue_number": tree["parent"], "sub_issue_number": tree["a"]}
    async with opened(fake) as s:
        first = await s.ok("github_add_sub_issue", args)
        again = await s.error("github_add_sub_issue", args, "sub_issue_refused")
    assert first["sub_issue"]["issue_number"] == tree["a"]
    assert fake.sub_issue_numbers(OWNER, REPO, tree["parent"]) == [tree["a0"], tree["b"], tree["a"]]
    assert again["details"]["reason"] == "already a sub-issue of this parent"
    assert "that first call linked it" in again["message"]
    assert len(fake.calls("issues/add-sub-issue")) == 1  # the repeat wrote nothing


async def test_s1_a_lost_dependency_add_is_settled_by_the_list(fake: FakeGitHub, tree: dict[str, int]) -> None:
    fake.faults.add(Match(operation="issues/add-blocked-by-dependency"), **LOST)
    args = {**REPO_ARGS, "issue_number": tree["a"], "blocked_by_issue_number": tree["parent"]}
    async with opened(fake) as s:
        first = await s.ok("github_add_issue_dependency", args)
        again = await s.error("github_add_issue_dependency", args, "dependency_refused")
    assert first["blocked_by"]["issue_number"] == tree["parent"]
    assert fake.blocker_numbers(OWNER, REPO, tree["a"]) == [tree["parent"]]
    assert again["details"]["reason"] == "the dependency exists already"
    assert len(fake.calls("issues/add-blocked-by-dependency")) == 1


@pytest.mark.parametrize("applied", [True, False])
async def test_s1_a_lost_sub_issue_removal_is_settled_by_the_parent(
        fake: FakeGitHub, tree: dict[str, int], applied: bool) -> None:
    fake.faults.add(Match(operation="issues/remove-sub-issue"), **{**LOST, "after_commit": applied})
    args = {**REPO_ARGS, "issue_number": tree["parent"], "sub_issue_number": tree["b"]}
    async with opened(fake) as s:
        if applied:
            first = await s.ok("github_remove_sub_issue", args)
            assert first["removed"] is True
        else:
            first = await s.error("github_remove_sub_issue", args, "upstream_unavailable")
            assert "not applied" in first["message"]
    assert (tree["b"] in fake.sub_issue_numbers(OWNER, REPO, tree["parent"])) is not applied


async def test_s1_a_lost_dependency_removal_repairs_by_reading_the_links(
        fake: FakeGitHub, tree: dict[str, int]) -> None:
    fake.faults.add(Match(operation="issues/remove-dependency-blocked-by"), **LOST)
    args = {**REPO_ARGS, "issue_number": tree["b"], "blocked_by_issue_number": tree["parent"]}
    async with opened(fake) as s:
        lost = await s.error("github_remove_issue_dependency", args, "upstream_unavailable")
        links = await s.ok(lost["repair"]["tool"], lost["repair"]["arguments"])
    assert lost["repair"]["tool"] == "github_list_issue_dependencies"
    assert lost["repair"]["arguments"]["direction"] == "blocked_by"
    assert links["issues"] == [] == fake.blocker_numbers(OWNER, REPO, tree["b"])  # the read says it is gone


# -- S2: numbers of another repository, precise refusals --------------------------------------------


async def test_s2_an_issue_of_another_repository_is_listed_without_a_number_of_this_one(
        fake: FakeGitHub, tree: dict[str, int]) -> None:
    fake.add_repo(OWNER, "web")
    fake.grant("octocat", f"{OWNER}/web")
    elsewhere = fake.add_issue(OWNER, "web", "in web")
    async with fake.client(TOKEN) as gh:
        linked = await gh.post(f"/repos/{OWNER}/{REPO}/issues/{tree['parent']}/sub_issues",
                               json={"sub_issue_id": fake.get_issue(OWNER, "web", elsewhere).id})
        blocked = await gh.post(f"/repos/{OWNER}/{REPO}/issues/{tree['c']}/dependencies/blocked_by",
                                json={"issue_id": fake.get_issue(OWNER, "web", elsewhere).id})
    assert linked.status_code == 201 and blocked.status_code == 201
    async with opened(fake) as s:
        rows = (await s.ok("github_list_sub_issues", {**REPO_ARGS, "issue_number": tree["parent"]}))["sub_issues"]
        blockers = (await s.ok("github_list_issue_dependencies", {**REPO_ARGS, "issue_number": tree["c"]}))["issues"]
        parent = (await s.ok("github_get_parent_issue", {**REPO_ARGS, "issue_number": tree["b"]}))["parent"]
    assert [r["issue_number"] for r in rows] == [tree["a0"], tree["b"], None]
    assert rows[2]["repository"].endswith(f"/repos/{OWNER}/web") and rows[2]["title"] == "in web"
    assert [r["issue_number"] for r in blockers] == [None]
    assert parent["issue_number"] == tree["parent"]  # this repository's: its number stays


@pytest.mark.parametrize(("tool", "args", "code", "field", "reason"), [
    ("github_add_sub_issue", {"sub_issue_number": "pr"}, "is_pull_request", "sub_issue_number",
     "the number belongs to a pull request"),
    ("github_add_issue_dependency", {"issue_number": "a", "blocked_by_issue_number": "pr"}, "is_pull_request",
     "blocked_by_issue_number", "the number belongs to a pull request"),
    ("github_add_sub_issue", {"sub_issue_number": "parent"}, "invalid_field", None,
     "an issue cannot be its own sub-issue"),
    ("github_add_issue_dependency", {"issue_number": "a", "blocked_by_issue_number": "a"}, "invalid_field", None,
     "an issue cannot block itself"),
    ("github_move_sub_issue", {"sub_issue_number": "b", "after_issue_number": "b"}, "invalid_field", None,
     "a sub-issue moves after or before another sub-issue of the parent"),
])
async def test_s2_precise_reasons_before_any_write(fake: FakeGitHub, tree: dict[str, int], tool: str,
                                                   args: dict[str, str], code: str, field: str | None,
                                                   reason: str) -> None:
    numbers = {**tree, "pr": fake.add_pull_request(OWNER, REPO, "a pull request", author="hubot")}
    call = {**REPO_ARGS, "issue_number": tree["parent"], **{k: numbers[v] for k, v in args.items()}}
    async with opened(fake) as s:
        mark = len(fake.requests)
        refused = await s.error(tool, call, code)
    assert refused["details"]["reason"] == reason
    if field is not None:
        assert refused["details"]["field"] == field
    assert writes(fake, mark) == []
