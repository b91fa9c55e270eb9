"""github-milestones-mcp, a server declared with no hook code, end to end: official MCP client →
generated server → fake GitHub (every request and response validated against the pinned spec)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from fakegithub import FakeGitHub
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from github_milestones_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, ROOT, TOKEN, in_memory_server, payload
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
SECRET = "Secret plan 7f2a"  # a free-form title that must never come back in an error
TOOLS_JSON = ROOT / "generated" / "github_milestones_mcp" / "tools.json"


def opened(fake: FakeGitHub, **kw: Any) -> Opened:
    return Opened(in_memory_server(fake, spec=SERVER, **kw), secrets=(SECRET,))


def writes(fake: FakeGitHub) -> list[Any]:
    return [r for r in fake.requests if r.method != "GET"]


async def test_the_tools_served_are_the_published_tools_json(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    published = json.loads(TOOLS_JSON.read_text(encoding="utf-8"))["tools"]
    async with Client(in_memory_server(fake, spec=SERVER), cache=None) as client:
        listed = await client.list_tools()
    served = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    assert sorted(served, key=lambda t: t["name"]) == sorted(published, key=lambda t: t["name"])
    assert SERVER.name == "github-milestones-mcp"
    assert not (ROOT / "generated" / "github_milestones_mcp" / "hooks.py").exists()


async def test_list_get_and_page(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_milestone(OWNER, REPO, "v0.9", state="closed")
    for i in range(31):
        fake.add_milestone(OWNER, REPO, f"sprint {i:02d}", due_on=f"2027-01-{(i % 28) + 1:02d}")
    async with opened(fake) as s:
        first = await s.ok("github_list_milestones", {**REPO_ARGS, "sort": "due_on", "direction": "desc"})
        assert len(first["milestones"]) == 30 and first["has_more"] is True
        assert fake.calls("issues/list-milestones")[-1].query == {
            "state": "open", "sort": "due_on", "direction": "desc", "per_page": "30", "page": "1"}
        second = await s.ok("github_list_milestones", {**REPO_ARGS, "sort": "due_on", "direction": "desc",
                                                        "cursor": first["next_cursor"]})
        assert second["has_more"] is False and "next_cursor" not in second
        titles = {m["title"] for m in first["milestones"] + second["milestones"]}
        assert "v1.0" in titles and "v0.9" not in titles and len(titles) == 32
        closed = await s.ok("github_list_milestones", {**REPO_ARGS, "state": "closed"})
        assert [m["title"] for m in closed["milestones"]] == ["v0.9"]
        foreign = await s.error("github_list_milestones", {**REPO_ARGS, "state": "closed",
                                                           "cursor": first["next_cursor"]}, "invalid_field")
        assert foreign["details"]["field"] == "cursor"


async def test_get_counts_open_and_closed_issues(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = seeded["milestone"]
    fake.add_issue(OWNER, REPO, "Done already", state="closed", milestone=number, author="hubot")
    async with opened(fake) as s:
        got = await s.ok("github_get_milestone", {**REPO_ARGS, "milestone_number": number})
        row = got["milestone"]
        assert (row["milestone_number"], row["title"], row["open_issues"], row["closed_issues"]) == (
            number, "v1.0", 1, 1)
        assert row["creator"] and row["url"].rstrip("/").endswith(str(number))
        missing = await s.error("github_get_milestone", {**REPO_ARGS, "milestone_number": 999},
                                "milestone_not_found")
        assert missing["temporary"] is False
        await s.error("github_get_milestone", {"owner": OWNER, "repo": "nope", "milestone_number": 1},
                      "repo_not_found")


async def test_create_sends_exactly_the_arguments_and_refuses_a_taken_title(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    async with opened(fake) as s:
        made = await s.ok("github_create_milestone", {**REPO_ARGS, "title": SECRET, "description": "d",
                                                      "due_on": "2027-03-01T00:00:00Z"})
        assert fake.calls("issues/create-milestone")[-1].body == {
            "title": SECRET, "description": "d", "due_on": "2027-03-01T00:00:00Z"}
        assert made["milestone"]["title"] == SECRET and made["milestone"]["state"] == "open"
        taken = await s.error("github_create_milestone", {**REPO_ARGS, "title": SECRET}, "milestone_exists")
        assert taken["details"] == {"field": "title", "reason": "another milestone already has this title"}
        assert taken["repair"]["tool"] == "github_list_milestones"
    assert len(fake.calls("issues/create-milestone")) == 2


async def test_idempotency_key_replays_and_recovers_a_lost_create(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    store = IdempotencyRunner(MemoryStore())
    args = {**REPO_ARGS, "title": SECRET, "idempotency_key": "create-v2-0001"}
    fake.faults.add("issues/create-milestone", "timeout", after_commit=True, delay=2.0)
    async with opened(fake, timeout=0.5, idempotency=store) as s:
        lost = await s.error("github_create_milestone", args, "upstream_unavailable")
        assert lost["temporary"] is True
        first = await s.ok("github_create_milestone", args)  # found by its title, not created again
        again = await s.ok("github_create_milestone", args)
        assert first["milestone"] == again["milestone"] and first["milestone"]["title"] == SECRET
        other = await s.error("github_create_milestone", {**args, "description": "x"}, "invalid_field")
        assert other["details"]["field"] == "idempotency_key"
    assert len(fake.calls("issues/create-milestone")) == 1


async def test_update_changes_only_what_differs(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_milestone(OWNER, REPO, "v2.0", description="old", due_on="2027-05-01")
    base = {**REPO_ARGS, "milestone_number": number}
    async with opened(fake) as s:
        same = await s.ok("github_update_milestone", {**base, "title": "v2.0", "description": "old",
                                                      "due_on": "2027-05-01T12:00:00Z"})
        assert same["changed_fields"] == [] and fake.calls("issues/update-milestone") == []
        closed = await s.ok("github_update_milestone", {**base, "state": "closed", "description": "old"})
        assert closed["changed_fields"] == ["state"]
        assert fake.calls("issues/update-milestone")[-1].body == {"state": "closed"}
        assert closed["milestone"]["state"] == "closed" and closed["milestone"]["closed_at"]
        await s.error("github_update_milestone", base, "invalid_field")
        fake.add_milestone(OWNER, REPO, "v3.0")
        taken = await s.error("github_update_milestone", {**base, "title": "v3.0"}, "milestone_exists")
        assert taken["details"]["field"] == "title"
        await s.error("github_update_milestone", {**REPO_ARGS, "milestone_number": 999, "state": "open"},
                      "milestone_not_found")
    assert len(fake.calls("issues/update-milestone")) == 2


async def test_safe_delete_refuses_while_issues_carry_it_and_force_deletes(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    number = seeded["milestone"]
    base = {**REPO_ARGS, "milestone_number": number}
    async with opened(fake) as s:
        refused = await s.error("github_delete_milestone", base, "milestone_in_use")
        assert refused["details"]["count"] == 1 and refused["details"]["field"] == "milestone_number"
        assert refused["repair"]["tool"] == "github_get_milestone"
        assert 'delete_mode "force"' in refused["repair"]["alternative"]
        assert writes(fake) == []
        gone = await s.ok("github_delete_milestone", {**base, "delete_mode": "force"})
        assert gone["deleted_milestone"]["title"] == "v1.0"
        await s.error("github_get_milestone", base, "milestone_not_found")
        again = await s.error("github_delete_milestone", {**base, "delete_mode": "force"}, "milestone_not_found")
        assert again["temporary"] is False
        unused = fake.add_milestone(OWNER, REPO, "empty")
        await s.ok("github_delete_milestone", {**REPO_ARGS, "milestone_number": unused})
    assert [r.operation_id for r in writes(fake)] == ["issues/delete-milestone"] * 2


async def test_writes_without_push_access_are_no_push_access(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token("ghp_visitor00000000000000000000000000001", "visitor", scopes=("repo",), collaborator_on=())
    server = in_memory_server(fake, token="ghp_visitor00000000000000000000000000001", spec=SERVER)
    async with Opened(server) as s:
        await s.error("github_create_milestone", {**REPO_ARGS, "title": "x"}, "no_push_access")
        listed = await s.ok("github_list_milestones", {**REPO_ARGS, "state": "all"})
    assert [m["title"] for m in listed["milestones"]] == ["v1.0"]  # GitHub refused: nothing created


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_over_stdio(fake: FakeGitHub, seeded: dict[str, Any], mode: str, version: str) -> None:
    with fake.serve() as url:
        env = {"PATH": os.environ.get("PATH", ""), "GITHUB_API_URL": url, "GITHUB_TOKEN": TOKEN,
               "GHMCP_CURSOR_SECRET": "functional-tests",
               "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])}
        params = StdioServerParameters(command=sys.executable, args=["-m", "github_milestones_mcp"],
                                       env=env, cwd=str(ROOT))
        async with Client(params, mode=mode, cache=None) as client:
            assert client.protocol_version == version
            assert client.server_info is not None and client.server_info.name == "github-milestones-mcp"
            got = payload(await client.call_tool("github_get_milestone",
                                                 {**REPO_ARGS, "milestone_number": seeded["milestone"]}))
            assert got["milestone"]["title"] == "v1.0"
            summary = await client.read_resource("ghmilestones://server/summary")
            assert "Capability fingerprint" in summary.contents[0].text  # type: ignore[union-attr]


def test_the_package_is_importable_on_its_own() -> None:
    assert Path(SERVER.tools[0].operations[0].path).name  # declared operations, no hooks module
    assert all(t.handler.__name__ in ("handler", "checked") for t in SERVER.tools)
