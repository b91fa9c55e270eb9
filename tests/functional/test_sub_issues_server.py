"""github-sub-issues-mcp, the third server: declared in YAML alone (no hooks), end to end through the
official client against the fake GitHub (every request and response validated against the pinned
spec). Agents pass issue numbers; GitHub's endpoints take ids: each write reads the issue by number
first and sends its id."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from github_sub_issues_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, ROOT, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}


@pytest.fixture
def issues(fake: FakeGitHub, seeded: dict[str, Any]) -> list[int]:
    return [fake.add_issue(OWNER, REPO, f"piece {i}") for i in range(4)]


def opened(fake: FakeGitHub) -> Opened:
    return Opened(in_memory_server(fake, spec=SERVER))


def numbers(rows: list[dict[str, Any]]) -> list[int]:
    return [r["issue_number"] for r in rows]


def test_the_server_has_no_hook_code() -> None:
    assert not (ROOT / "generated" / "github_sub_issues_mcp" / "hooks.py").exists()
    assert not list((ROOT / "overrides").glob("github_sub_issues*.py"))


async def test_sub_issues_add_list_move_parent_remove(fake: FakeGitHub, issues: list[int]) -> None:
    parent, a, b, _ = issues
    args = {**REPO_ARGS, "issue_number": parent}
    async with opened(fake) as s:
        assert (await s.ok("github_list_sub_issues", args))["sub_issues"] == []
        added = await s.ok("github_add_sub_issue", {**args, "sub_issue_number": a})
        assert added["sub_issue"]["issue_number"] == a
        await s.ok("github_add_sub_issue", {**args, "sub_issue_number": b})
        assert fake.calls("issues/add-sub-issue")[-1].body == {"sub_issue_id": fake.get_issue(OWNER, REPO, b).id}
        assert numbers((await s.ok("github_list_sub_issues", args))["sub_issues"]) == [a, b]
        await s.ok("github_move_sub_issue", {**args, "sub_issue_number": b, "before_issue_number": a})
        assert fake.sub_issue_numbers(OWNER, REPO, parent) == [b, a]
        await s.ok("github_move_sub_issue", {**args, "sub_issue_number": b, "after_issue_number": a})
        assert fake.sub_issue_numbers(OWNER, REPO, parent) == [a, b]
        await s.error("github_move_sub_issue", {**args, "sub_issue_number": b}, "invalid_field")  # exactly_one
        got = await s.ok("github_get_parent_issue", {**REPO_ARGS, "issue_number": a})
        assert got["has_parent"] is True and got["parent"]["issue_number"] == parent
        none = await s.ok("github_get_parent_issue", {**REPO_ARGS, "issue_number": parent})
        assert none == {"has_parent": False, "request_id": none["request_id"]}
        removed = await s.ok("github_remove_sub_issue", {**args, "sub_issue_number": a})
        assert removed["removed"] is True and fake.sub_issue_numbers(OWNER, REPO, parent) == [b]
        again = await s.ok("github_remove_sub_issue", {**args, "sub_issue_number": a})
        assert again["removed"] is False  # already detached: nothing to do, and it says so


async def test_sub_issue_refusals_say_what_and_change_nothing(fake: FakeGitHub, issues: list[int]) -> None:
    parent, a, _, other = issues
    fake.add_sub_issue(OWNER, REPO, parent, a)
    async with opened(fake) as s:
        taken = await s.error("github_add_sub_issue", {**REPO_ARGS, "issue_number": other, "sub_issue_number": a},
                              "sub_issue_refused")
        assert taken["details"]["field"] == "sub_issue_number"
        assert fake.sub_issue_numbers(OWNER, REPO, parent) == [a]
        await s.ok("github_add_sub_issue", {**REPO_ARGS, "issue_number": other, "sub_issue_number": a,
                                            "replace_parent": True})
        assert (fake.sub_issue_numbers(OWNER, REPO, parent), fake.sub_issue_numbers(OWNER, REPO, other)) == ([], [a])
        missing = await s.error("github_add_sub_issue", {**REPO_ARGS, "issue_number": parent, "sub_issue_number": 999},
                                "sub_issue_not_found")
        assert missing["details"]["field"] == "sub_issue_number"
        await s.error("github_remove_sub_issue", {**REPO_ARGS, "issue_number": 999, "sub_issue_number": a},
                      "issue_not_found")  # no such parent: not "removed: false"
        await s.error("github_get_parent_issue", {**REPO_ARGS, "issue_number": 999}, "issue_not_found")
    assert len(fake.calls("issues/add-sub-issue")) == 2  # the refused one and the move: no id guessed
    assert fake.calls("issues/remove-sub-issue") == []  # the parent read failed first


async def test_dependencies_both_ways(fake: FakeGitHub, issues: list[int]) -> None:
    first, second, third, _ = issues
    async with opened(fake) as s:
        await s.ok("github_add_issue_dependency", {**REPO_ARGS, "issue_number": first, "blocked_by_issue_number": second})
        await s.ok("github_add_issue_dependency", {**REPO_ARGS, "issue_number": second, "blocked_by_issue_number": third})
        blocked_by = await s.ok("github_list_issue_dependencies", {**REPO_ARGS, "issue_number": first})
        assert numbers(blocked_by["issues"]) == [second] and blocked_by["has_more"] is False
        blocking = await s.ok("github_list_issue_dependencies", {**REPO_ARGS, "issue_number": second,
                                                                 "direction": "blocking"})
        assert numbers(blocking["issues"]) == [first]
        cycle = await s.error("github_add_issue_dependency", {**REPO_ARGS, "issue_number": third,
                                                              "blocked_by_issue_number": first}, "dependency_refused")
        assert cycle["details"]["field"] == "blocked_by_issue_number"
        assert fake.blocker_numbers(OWNER, REPO, third) == []
        gone = await s.ok("github_remove_issue_dependency", {**REPO_ARGS, "issue_number": first,
                                                              "blocked_by_issue_number": second})
        assert gone["removed"] is True and fake.blocker_numbers(OWNER, REPO, first) == []
        again = await s.ok("github_remove_issue_dependency", {**REPO_ARGS, "issue_number": first,
                                                               "blocked_by_issue_number": second})
        assert again["removed"] is False


async def test_a_long_dependency_list_pages_with_the_direction_it_was_asked_for(
        fake: FakeGitHub, issues: list[int]) -> None:
    target = issues[0]
    for i in range(31):
        fake.add_blocker(OWNER, REPO, target, fake.add_issue(OWNER, REPO, f"blocker {i}"))
    async with opened(fake) as s:
        first = await s.ok("github_list_issue_dependencies", {**REPO_ARGS, "issue_number": target})
        assert len(first["issues"]) == 30 and first["has_more"] is True
        rest = await s.ok("github_list_issue_dependencies", {**REPO_ARGS, "issue_number": target,
                                                              "cursor": first["next_cursor"]})
        assert len(rest["issues"]) == 1 and rest["has_more"] is False
        await s.error("github_list_issue_dependencies", {**REPO_ARGS, "issue_number": target, "direction": "blocking",
                                                          "cursor": first["next_cursor"]}, "invalid_field")


async def test_writes_without_push_access(fake: FakeGitHub, issues: list[int]) -> None:
    fake.add_token("ghp_visitor00000000000000000000000000001", "visitor", scopes=("repo",), collaborator_on=())
    server = in_memory_server(fake, token="ghp_visitor00000000000000000000000000001", spec=SERVER)
    async with Opened(server) as s:
        await s.error("github_add_sub_issue", {**REPO_ARGS, "issue_number": issues[0], "sub_issue_number": issues[1]},
                      "no_push_access")
