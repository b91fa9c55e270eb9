"""github_search_issues returns what was asked, as completely as GitHub allows, and says when not.

Regression tests for the write-safety issue, defects 10-12 (/work/shared/repro/correctness/).
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server
from tests.functional.test_issue_tools import call

pytestmark = pytest.mark.anyio


async def walk_all(client: Client, args: dict[str, Any]) -> tuple[list[int], dict[str, Any], int]:
    """Every issue number over all pages, the last page, and how many pages it took."""
    seen: list[int] = []
    cursor: str | None = None
    for pages in range(1, 40):
        is_error, data = await call(client, "github_search_issues",
                                    {**args, **({"cursor": cursor} if cursor else {})})
        assert not is_error, data
        seen += [i["issue_number"] for i in data["issues"]]
        if not data["has_more"]:
            return seen, data, pages
        cursor = data["next_cursor"]
    raise AssertionError("the walk did not end")


async def test_issues_behind_many_pull_requests_are_reachable(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_pagination.py (B): 310 recent pull requests hid every issue (10 empty pages, then truncated)
    fake.add_repo(OWNER, "prheavy")
    old = [fake.add_issue(OWNER, "prheavy", f"old issue {i}", created_at="2020-01-01T00:00:00Z")
           for i in range(5)]
    for i in range(310):
        fake.add_pull_request(OWNER, "prheavy", f"pr {i}")
    async with Client(in_memory_server(fake), cache=None) as client:
        seen, last, pages = await walk_all(client, {"owner": OWNER, "repo": "prheavy", "state": "all"})
    assert sorted(seen) == old and last["truncated"] is False
    assert pages <= 2


async def test_the_row_cap_counts_issues_and_the_scan_limit_is_reported(
        fake: FakeGitHub, seeded: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    import github_issues_mcp.hooks as hooks

    monkeypatch.setattr(hooks, "WALK_CAP", 40)
    monkeypatch.setattr(hooks, "SCAN_LIMIT", 200)
    fake.add_repo(OWNER, "mixed")
    issues = []
    for i in range(150):  # 2 pull requests for every issue
        if i % 3 == 0:
            issues.append(fake.add_issue(OWNER, "mixed", f"issue {i}"))
        else:
            fake.add_pull_request(OWNER, "mixed", f"pr {i}")
    base = {"owner": OWNER, "repo": "mixed", "state": "all", "sort": "created", "order": "asc"}
    async with Client(in_memory_server(fake), cache=None) as client:
        seen, last, _ = await walk_all(client, base)
        assert seen == issues[:40] and last["truncated"] is True  # 40 issues, not 40 items
        assert "first 300 rows" in last["truncation_hint"]
        for i in range(300):
            fake.add_pull_request(OWNER, "mixed", f"more pr {i}")
        monkeypatch.setattr(hooks, "WALK_CAP", 300)
        seen, last, _ = await walk_all(client, {**base, "order": "desc"})
    assert seen == [] and last["truncated"] is True
    assert "1,000 items" in last["truncation_hint"]


@pytest.mark.parametrize("mode", ["list", "search"])
@pytest.mark.parametrize(("wanted", "impostor"), [
    ("needs,info", ["needs", "info"]),
    ('say "hi"', ["say hi"]),
    ("back\\slash", ["back", "slash"]),
])
async def test_label_filters_match_names_with_commas_quotes_and_backslashes_exactly(
        fake: FakeGitHub, seeded: dict[str, Any], mode: str, wanted: str, impostor: list[str]) -> None:
    # r_labels.py: ["needs,info"] matched the issue labelled needs and info; 'say "hi"' matched
    # the label say hi
    for name in (wanted, *impostor):
        fake.add_label(OWNER, REPO, name)
    right = fake.add_issue(OWNER, REPO, "has the label", labels=[wanted, "bug"])
    fake.add_issue(OWNER, REPO, "has the impostor", labels=[*impostor, "bug"])
    query = {"query": "has"} if mode == "search" else {}
    async with Client(in_memory_server(fake), cache=None) as client:
        for labels in ([wanted], [wanted.upper(), "bug"]):
            seen, last, _ = await walk_all(client, {"owner": OWNER, "repo": REPO, "state": "all",
                                                    "labels": labels, **query})
            assert seen == [right], labels
            assert "estimated_total" not in last  # GitHub's count covers the unfiltered query
    if mode == "search":
        assert all(wanted not in c.query["q"] for c in fake.calls("search/issues-and-pull-requests"))
    elif "," in wanted:  # the listing's labels filter is a comma list; quotes are plain characters
        assert all(wanted not in c.query.get("labels", "") for c in fake.calls("issues/list-for-repo"))


async def test_incomplete_search_results_are_reported(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # r_incomplete.py: GitHub's incomplete_results was dropped, a partial list looked complete
    for i in range(5):
        fake.add_issue(OWNER, REPO, f"crash report {i}")
    args = {"owner": OWNER, "repo": REPO, "query": "crash", "state": "all"}
    async with fake.client(TOKEN) as gh:
        body = (await gh.get("/search/issues", params={"q": f"crash is:issue repo:{OWNER}/{REPO}"})).json()
    body.update(items=body["items"][:2], total_count=2, incomplete_results=True)
    async with Client(in_memory_server(fake), cache=None) as client:
        _, complete = await call(client, "github_search_issues", args)
        fake.faults.add(Match(operation="search/issues-and-pull-requests"), "status", status=200, body=body)
        _, partial = await call(client, "github_search_issues", args)
    assert "incomplete" not in complete and len(complete["issues"]) == 6
    assert partial["incomplete"] is True and len(partial["issues"]) == 2


def test_n11_every_list_tool_states_its_cursor_semantics() -> None:
    # offset pages can skip or repeat items that move between pages (inherent: GitHub pages by
    # offset); an agent must be told, and that a search cursor works only with its own query
    from github_issues_mcp import SERVER as ISSUES
    from github_milestones_mcp import SERVER as MILESTONES

    tools = {t.name: t.description for spec in (ISSUES, MILESTONES) for t in spec.tools}
    for name in ("github_search_issues", "github_list_labels", "github_list_milestones"):
        assert "offsets" in tools[name], name
    assert "skip or repeat" in tools["github_search_issues"]
    assert "same arguments" in tools["github_search_issues"]
