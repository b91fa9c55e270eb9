"""The six issue tools end to end: official MCP client → generated server → fake GitHub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, in_memory_server, payload, sent

pytestmark = pytest.mark.anyio
TOOLS_JSON = Path(__file__).resolve().parents[2] / "generated" / "github_issues_mcp" / "tools.json"
MODES = ["auto", "legacy"]


def schema_of(name: str) -> dict[str, Any]:
    tools = json.loads(TOOLS_JSON.read_text(encoding="utf-8"))["tools"]
    return next(t for t in tools if t["name"] == name)["outputSchema"]  # type: ignore[no-any-return]


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(name, args)
    data = payload(result)
    errors = list(Draft202012Validator(schema_of(name)).iter_errors(data))
    assert not errors, errors[0].message
    return bool(result.is_error), data


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_is_exactly_the_committed_tools_json(fake: FakeGitHub, mode: str) -> None:
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        listed = await client.list_tools()
    wire = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    committed = json.loads(TOOLS_JSON.read_text(encoding="utf-8"))["tools"]
    assert [t["name"] for t in wire] == [t["name"] for t in committed]
    for got, want in zip(wire, committed, strict=True):
        assert got == want


@pytest.mark.parametrize("mode", MODES)
async def test_search_by_filters_lists_issues_and_never_pull_requests(
    fake: FakeGitHub, seeded: dict[str, Any], mode: str
) -> None:
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        is_error, data = await call(client, "github_search_issues",
                                    {"owner": OWNER, "repo": REPO, "labels": ["bug"], "state": "all"})
    assert not is_error
    titles = sorted(i["title"] for i in data["issues"])
    assert titles == ["Crash on empty config", "Old bug"]
    assert data["has_more"] is False and "next_cursor" not in data and data["truncated"] is False


async def test_search_with_query_uses_the_search_endpoint(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_search_issues",
                                    {"query": "crash", "owner": OWNER, "repo": REPO})
    assert not is_error
    assert [i["title"] for i in data["issues"]] == ["Crash on empty config"]
    assert data["estimated_total"] == 1
    assert any(r.path == "/search/issues" for r in fake.requests)


async def test_summary_rows_are_a_strict_subset_of_full_rows(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    args = {"owner": OWNER, "repo": REPO, "state": "all"}
    async with Client(in_memory_server(fake), cache=None) as client:
        _, summary = await call(client, "github_search_issues", {**args, "detail": "summary"})
        _, full = await call(client, "github_search_issues", {**args, "detail": "full"})
    assert len(summary["issues"]) == len(full["issues"]) == 3
    for small, big in zip(summary["issues"], full["issues"], strict=True):
        assert set(small) < set(big)
        assert all(big[k] == v for k, v in small.items())
    assert len(summary["issues"][0].get("preview", "")) <= 201
    assert "body" not in summary["issues"][0] and "version" in full["issues"][0]


async def test_search_requires_a_query_or_a_repository(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_search_issues", {"state": "open"})
        assert is_error and data["code"] == "invalid_field"
        is_error, data = await call(client, "github_search_issues", {"owner": OWNER, "query": "x"})
        assert is_error and data["code"] == "invalid_field" and data["details"]["field"] == "repo"
    assert sent(fake) == []


@pytest.mark.parametrize("mode", MODES)
async def test_get_issue_pages_its_comment_thread_oldest_first(
    fake: FakeGitHub, seeded: dict[str, Any], mode: str
) -> None:
    args = {"owner": OWNER, "repo": REPO, "issue_number": seeded["first"]}
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        is_error, first = await call(client, "github_get_issue", args)
        assert not is_error
        assert first["issue"]["title"] == "Crash on empty config"
        assert first["version"] == first["issue"]["version"]
        assert [c["body"] for c in first["comments"][:2]] == ["comment 0", "comment 1"]
        assert len(first["comments"]) == 30 and first["comments_has_more"] is True
        _, second = await call(client, "github_get_issue",
                               {**args, "comments_cursor": first["comments_next_cursor"]})
    assert [c["body"] for c in second["comments"]] == [f"comment {i}" for i in range(30, 35)]
    assert second["comments_has_more"] is False and "comments_next_cursor" not in second


@pytest.mark.parametrize("mode", MODES)
async def test_create_issue_sets_labels_assignees_and_milestone_in_one_call(
    fake: FakeGitHub, seeded: dict[str, Any], mode: str
) -> None:
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        is_error, created = await call(client, "github_create_issue", {
            "owner": OWNER, "repo": REPO, "title": "New thing", "body": "details",
            "labels": ["enhancement"], "assignee_logins": ["hubot"], "milestone": "v1.0"})
        assert not is_error, created
        row = created["issue"]  # the issue as GitHub answered the write: no confirmation read needed
        _, read = await call(client, "github_get_issue",
                             {"owner": OWNER, "repo": REPO, "issue_number": row["issue_number"]})
    assert row["labels"] == ["enhancement"] and row["assignees"] == ["hubot"]
    assert row["milestone"] == {"number": seeded["milestone"], "title": "v1.0"}
    assert row["state"] == "open" and row["state_reason"] is None and "preview" not in row
    assert created["version"] == read["version"] and "ignored_fields" not in created
    assert {k: v for k, v in read["issue"].items() if k in row} == row


async def test_create_issue_refuses_unknown_labels_before_creating_anything(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    before = len(fake.issues(OWNER, REPO))
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_create_issue", {
            "owner": OWNER, "repo": REPO, "title": "x", "labels": ["bug", "no-such-label"]})
    assert is_error and data["code"] == "label_not_found"
    assert data["details"] == {"field": "labels", "count": 1, "reason": "no such label: labels[1]"}
    assert data["repair"]["tool"] == "github_list_labels"
    assert data["repair"]["alternative"].startswith("github_create_label")
    assert "no-such-label" not in json.dumps(data)
    assert len(fake.issues(OWNER, REPO)) == before


@pytest.mark.parametrize("mode", MODES)
async def test_update_issue_reports_only_what_changed(
    fake: FakeGitHub, seeded: dict[str, Any], mode: str
) -> None:
    n = seeded["first"]
    base = {"owner": OWNER, "repo": REPO, "issue_number": n}
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        _, read = await call(client, "github_get_issue", base)
        is_error, closed = await call(client, "github_update_issue", {
            **base, "state": "closed", "add_labels": ["wontfix", "bug"], "remove_labels": ["triage"],
            "expected_version": read["version"]})
        assert not is_error, closed
        # the issue's fields, not parameters; closing gives the reason GitHub stores with it
        assert closed["changed_fields"] == ["state", "state_reason", "labels"]
        row = closed["issue"]
        assert (row["state"], row["state_reason"]) == ("closed", "completed")
        assert sorted(row["labels"]) == ["bug", "wontfix"] and closed["version"] != read["version"]
        _, again = await call(client, "github_update_issue", {**base, "add_labels": ["bug"]})
        assert again["changed_fields"] == [] and again["version"] == closed["version"]
        _, after = await call(client, "github_get_issue", {**base, "detail": "full"})
    issue = after["issue"]
    assert issue["state_reason"] == "completed"
    assert sorted(issue["labels"]) == ["bug", "wontfix"]


async def test_update_issue_with_a_stale_version_writes_nothing(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    base = {"owner": OWNER, "repo": REPO, "issue_number": seeded["first"]}
    async with Client(in_memory_server(fake), cache=None) as client:
        _, read = await call(client, "github_get_issue", base)
        await call(client, "github_update_issue", {**base, "title": "Renamed by someone else"})
        writes = [r for r in fake.requests if r.method != "GET"]
        is_error, data = await call(client, "github_update_issue",
                                    {**base, "title": "Mine", "expected_version": read["version"]})
    assert is_error and data["code"] == "conflict"
    assert data["repair"] == {"next_step": "reread", "tool": "github_get_issue", "arguments": base,
                              "alternative": "re-apply your change with the new version"}
    assert [r for r in fake.requests if r.method != "GET"] == writes


async def test_update_issue_locks_clears_milestone_and_replaces_assignees(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        _, created = await call(client, "github_create_issue", {
            "owner": OWNER, "repo": REPO, "title": "t", "assignee_logins": ["hubot"],
            "milestone": seeded["milestone"]})
        base = {"owner": OWNER, "repo": REPO, "issue_number": created["issue"]["issue_number"]}
        is_error, updated = await call(client, "github_update_issue", {
            **base, "milestone": None, "assignee_logins": [], "locked": True,
            "lock_reason": "resolved"})
        assert not is_error, updated
        _, read = await call(client, "github_get_issue", base)
    assert updated["changed_fields"] == ["assignees", "milestone", "locked", "lock_reason"]
    assert updated["issue"]["milestone"] is None and updated["issue"]["assignees"] == []
    issue = read["issue"]
    assert issue["milestone"] is None and issue["assignees"] == []
    assert issue["locked"] is True and issue["lock_reason"] == "resolved"


@pytest.mark.parametrize("mode", MODES)
async def test_add_comment_appends_to_the_thread(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    base = {"owner": OWNER, "repo": REPO, "issue_number": seeded["first"]}
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        is_error, posted = await call(client, "github_add_comment", {**base, "body": "On it."})
        assert not is_error, posted
    comments = fake.comments(OWNER, REPO, seeded["first"])
    assert comments[-1].id == posted["comment"]["comment_id"] and len(comments) == 36


async def test_list_labels_returns_the_catalog(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_list_labels", {"owner": OWNER, "repo": REPO})
    assert not is_error
    assert [label["name"] for label in data["labels"]] == [
        "bug", "enhancement", "good first issue", "triage", "wontfix"]
    assert set(data["labels"][0]) == {"name", "color", "description"}
    assert data["has_more"] is False
