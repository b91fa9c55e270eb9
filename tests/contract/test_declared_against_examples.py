"""Servers declared in YAML alone answer correctly against a mock that serves GitHub's documented
examples (Prism, validating every request against the spec): the release server written only from
docs/overrides.md, github-milestones-mcp and github-sub-issues-mcp. Each runs as a real stdio subprocess driven by the
official MCP client, as an agent's client would start it."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.support.doc_example import generate_example
from tests.support.mock_spec import example_value, mock_spec_document
from tests.support.prism import StartPrism
from tests.support.servers import Server, built

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
REPO = {"owner": "octocat", "repo": "hello-world"}
RELEASE_OPS = ("repos/get-release", "repos/list-releases")
MILESTONE_OPS = ("issues/list-milestones", "issues/get-milestone", "issues/create-milestone",
                 "issues/update-milestone", "issues/delete-milestone")
MILESTONES = ROOT / "overrides" / "github_milestones.yaml"


@asynccontextmanager
async def server(module: str, base_url: str, *paths: Path) -> AsyncIterator[Client]:
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_API_URL": base_url,
           "GITHUB_TOKEN": "ghp_contracttesttoken0000000000000000001",
           "PYTHONPATH": os.pathsep.join(str(p) for p in (*paths, ROOT, ROOT / "generated"))}
    params = StdioServerParameters(command=sys.executable, args=["-m", module], env=env, cwd=str(ROOT))
    async with Client(params, cache=None) as client:
        yield client


async def call(client: Client, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, dict(args))  # the client validates the outputSchema
    data: dict[str, Any] = result.structured_content
    assert result.is_error == ("code" in data), data
    return data


async def test_the_documented_release_server_answers_from_the_examples(
    prism: StartPrism, tmp_path: Path
) -> None:
    proc, out = generate_example(tmp_path)
    assert proc.returncode == 0, proc.stderr
    mock = prism(RELEASE_OPS)
    document = mock_spec_document(RELEASE_OPS)
    release = example_value(document, "repos/get-release")
    async with server("github_releases_mcp", mock.base_url, out) as client:
        got = await call(client, "github_get_release", {**REPO, "release_id": 1})
        assert got["release"] == {  # the examples hide nothing: no hidden_removed
            "release_id": release["id"], "tag": release["tag_name"], "name": release["name"],
            "draft": release["draft"], "published_at": release["published_at"],
            "url": release["html_url"], "notes": release["body"], "author": release["author"]["login"]}
        listed = await call(client, "github_list_releases", REPO)
        rows = example_value(document, "repos/list-releases")
        assert [r["release_id"] for r in listed["releases"]] == [r["id"] for r in rows]
        # the documented Link header example points at a next page: the cursor follows it
        assert listed["has_more"] is ("next_cursor" in listed) is True
        following = await call(client, "github_list_releases", {**REPO, "cursor": listed["next_cursor"]})
        assert "code" not in following and len(following["releases"]) == len(rows)
        refused = await call(client, "github_get_release", {**REPO, "release_id": 0})
        assert refused["code"] == "invalid_field" and refused["details"]["field"] == "release_id"


async def test_the_milestones_server_answers_from_the_examples(prism: StartPrism) -> None:
    mock = prism(MILESTONE_OPS, overrides=MILESTONES)
    document = mock_spec_document(MILESTONE_OPS, overrides=MILESTONES)
    example = example_value(document, "issues/get-milestone")
    number = {**REPO, "milestone_number": example["number"]}
    async with server("github_milestones_mcp", mock.base_url) as client:
        got = await call(client, "github_get_milestone", number)
        assert got["milestone"]["title"] == example["title"]
        assert (got["milestone"]["open_issues"], got["milestone"]["closed_issues"]) == (
            example["open_issues"], example["closed_issues"])
        listed = await call(client, "github_list_milestones", {**REPO, "state": "all"})
        assert [m["milestone_number"] for m in listed["milestones"]] == [
            m["number"] for m in example_value(document, "issues/list-milestones")]
        made = await call(client, "github_create_milestone", {**REPO, "title": "v1.0"})
        assert made["milestone"]["title"] == example_value(document, "issues/create-milestone", "201")["title"]
        changed = await call(client, "github_update_milestone", {**number, "title": "v2.0"})
        assert changed["changed_fields"] == ["title"]
        refused = await call(client, "github_delete_milestone", number)
        total = example["open_issues"] + example["closed_issues"]
        assert refused["code"] == "milestone_in_use" and refused["details"]["count"] == total
        deleted = await call(client, "github_delete_milestone", {**number, "delete_mode": "force"})
        assert deleted["deleted_milestone"]["milestone_number"] == example["number"]


SUB_ISSUES = ROOT / "overrides" / "github_sub_issues.yaml"
REFUSED_BY_THE_MOCK = {"the number belongs to a pull request", "already a sub-issue of this parent",
                       "the dependency exists already"}
SUB_ISSUE_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("github_list_sub_issues", {"issue_number": 1}),
    ("github_get_parent_issue", {"issue_number": 2}),
    ("github_add_sub_issue", {"issue_number": 1, "sub_issue_number": 2, "replace_parent": True}),
    ("github_remove_sub_issue", {"issue_number": 1, "sub_issue_number": 2}),
    ("github_move_sub_issue", {"issue_number": 1, "sub_issue_number": 2, "after_issue_number": 3}),
    ("github_move_sub_issue", {"issue_number": 1, "sub_issue_number": 2, "before_issue_number": 3}),
    ("github_list_issue_dependencies", {"issue_number": 1}),
    ("github_list_issue_dependencies", {"issue_number": 1, "direction": "blocking"}),
    ("github_add_issue_dependency", {"issue_number": 1, "blocked_by_issue_number": 2}),
    ("github_remove_issue_dependency", {"issue_number": 1, "blocked_by_issue_number": 2}),
)


@pytest.mark.parametrize("dynamic", [False, True], ids=["examples", "random"])
async def test_the_sub_issues_server_answers_every_call_through_prism(prism: StartPrism, dynamic: bool) -> None:
    """Every tool of the third server, with GitHub's documented examples and with Prism's random
    schema-valid answers: Prism accepts every request (a refused one would be invalid_field), and
    the client accepts every result against the tool's outputSchema."""
    ops = sorted({op.operation_id for t in built(Server(SUB_ISSUES, "github-sub-issues-mcp",
                                                        "github_sub_issues_mcp")).tools for op in t.operations})
    mock = prism(ops, overrides=SUB_ISSUES, dynamic=dynamic)
    async with server("github_sub_issues_mcp", mock.base_url) as client:
        for tool, args in SUB_ISSUE_CALLS:
            got = await call(client, tool, {**REPO, **args})
            if "code" in got and got.get("details", {}).get("reason") in REFUSED_BY_THE_MOCK:
                # Prism's issue is a pull request (GitHub's documented issue example carries
                # pull_request), or its listing holds the issue already: an add is refused, as it
                # must be, before its POST (whose shape the fake checks in tests/functional), and
                # a parent's read answers is_pull_request; removals and moves reach GitHub
                assert tool in ("github_add_sub_issue", "github_add_issue_dependency",
                                "github_get_parent_issue"), (tool, got)
                continue
            assert "code" not in got, (tool, args, got, mock.log_text()[-1500:])
            if tool == "github_get_parent_issue":
                assert got["has_parent"] is True and "parent" in got
            if tool.startswith("github_remove_"):
                assert got["removed"] is True
