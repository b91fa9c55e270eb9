"""github-mcp, the GitHub forge's one server: every GitHub override file's toolsets in one server,
chosen with --toolsets across files, end to end through the official MCP client against the fake
GitHub (every request and response validated against the pinned spec), in memory in both eras
and over a real stdio subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.exposure import ExposureFlags
from github_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, ROOT, TOKEN, in_memory_server, stdio_params
from tests.functional.session import Opened
from tests.support.servers import FORGE_SERVERS

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]
REPO_ARGS = {"owner": OWNER, "repo": REPO}
GITHUB = next(f for f in FORGE_SERVERS if f.package == "github_mcp")


def published(package: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads(
        (ROOT / "generated" / package / "tools.json").read_text(encoding="utf-8"))["tools"]
    return tools


def toolset_tools(*names: str) -> list[str]:
    return sorted(t.name for t in SERVER.tools if t.toolset in names)


def wire(listed: Any) -> list[dict[str, Any]]:
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]


@pytest.mark.parametrize("mode", MODES)
async def test_all_serves_every_tool_of_every_github_override_file_as_published(
        fake: FakeGitHub, mode: str) -> None:
    every = sorted((t for part in GITHUB.parts for t in published(part.package)), key=lambda t: t["name"])
    assert len(GITHUB.parts) >= 3 and {p.name for p in GITHUB.parts} == {
        p.name for p in SERVER.parts}
    server = in_memory_server(fake, spec=SERVER, exposure=ExposureFlags(toolsets=("all",)))
    async with Client(server, mode=mode, cache=None) as client:
        served = wire(await client.list_tools())
        assert client.server_info is not None and client.server_info.name == "github-mcp"
    assert served == every  # byte for byte the per-file tools.json, in name order


@pytest.mark.parametrize("mode", MODES)
async def test_without_flags_the_default_toolsets_are_served(fake: FakeGitHub, mode: str) -> None:
    assert SERVER.default_toolsets is not None
    async with Client(in_memory_server(fake, spec=SERVER), mode=mode, cache=None) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        instructions = client.instructions or ""
    assert names == toolset_tools(*SERVER.default_toolsets)
    hidden = [n for n in SERVER.toolsets if n not in SERVER.default_toolsets]
    assert hidden and f"Toolsets not here: {', '.join(hidden)}" in instructions
    for name in SERVER.default_toolsets:
        assert f"{name} (" in instructions.split("Toolsets here: ", 1)[1].split("\n", 1)[0]


async def test_toolsets_narrow_across_files_and_default_combines(fake: FakeGitHub) -> None:
    picked = ExposureFlags(toolsets=("labels", "milestones", "dependencies"))  # three files
    async with Client(in_memory_server(fake, spec=SERVER, exposure=picked), cache=None) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        instructions = client.instructions or ""
    assert names == toolset_tools("labels", "milestones", "dependencies")
    assert {SERVER.part_of(n).name for n in names} == {
        "github-issues-mcp", "github-milestones-mcp", "github-sub-issues-mcp"}
    # a part's lines come only for the toolsets it shows; the forge's own lines replace theirs
    assert "[issues" not in instructions and "[labels] Scope:" in instructions
    assert "ghissues://server/errors" not in instructions and "github://server/errors" in instructions
    more = ExposureFlags(toolsets=("default", "dependencies"))
    async with Client(in_memory_server(fake, spec=SERVER, exposure=more), cache=None) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
    assert names == toolset_tools(*SERVER.default_toolsets or (), "dependencies")


async def test_an_unknown_toolset_is_refused_and_names_the_toolsets(fake: FakeGitHub) -> None:
    from ghmcp_runtime.guards.exposure import ExposureError

    with pytest.raises(ExposureError, match=r"unknown name 'milestone'.*milestones"):
        in_memory_server(fake, spec=SERVER, exposure=ExposureFlags(toolsets=("milestone",)))


async def test_each_tool_runs_with_its_own_files_shapes_and_error_rules(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    parent, child = (fake.add_issue(OWNER, REPO, f"piece {i}") for i in range(2))
    async with Opened(in_memory_server(fake, spec=SERVER, exposure=ExposureFlags(toolsets=("all",)))) as s:
        issue = (await s.ok("github_get_issue", {**REPO_ARGS, "issue_number": seeded["first"]}))["issue"]
        assert issue["issue_number"] == seeded["first"] and "labels" in issue
        milestone = (await s.ok("github_get_milestone", {**REPO_ARGS, "milestone_number": seeded["milestone"]}))
        assert milestone["milestone"]["title"] == "v1.0" and "open_issues" in milestone["milestone"]
        await s.ok("github_add_sub_issue", {**REPO_ARGS, "issue_number": parent, "sub_issue_number": child})
        listed = await s.ok("github_list_sub_issues", {**REPO_ARGS, "issue_number": parent})
        assert [r["issue_number"] for r in listed["sub_issues"]] == [child]
        # each file's own error wording and repair: the issues file repairs through its search
        missing = await s.error("github_get_issue", {**REPO_ARGS, "issue_number": 999}, "issue_not_found")
        assert missing["fingerprint"].startswith("github-mcp@")
        await s.error("github_get_milestone", {**REPO_ARGS, "milestone_number": 999}, "milestone_not_found")
        await s.error("github_list_sub_issues", {**REPO_ARGS, "issue_number": 999}, "issue_not_found")
        catalog = json.loads((await s.client.read_resource("github://server/errors")).contents[0].text)  # type: ignore[union-attr]
    wordings = [c for c in catalog["codes"] if c["code"] == "issue_not_found"]
    assert len(wordings) == 2 and sorted(t for c in wordings for t in c["tools"]) == sorted(
        t.name for t in SERVER.tools if "issue_not_found" in t.error_codes)


async def test_a_hidden_tool_of_another_file_is_unknown(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    only = ExposureFlags(toolsets=("milestones",))
    async with Client(in_memory_server(fake, spec=SERVER, exposure=only), cache=None) as client:
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("github_get_issue", {**REPO_ARGS, "issue_number": 1})
    assert fake.requests == []


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_the_console_script_serves_all_over_stdio(
        fake: FakeGitHub, seeded: dict[str, Any], mode: str, version: str) -> None:
    script = Path(sys.executable).parent / "github-mcp"  # installed by `make generate`
    with fake.serve() as url:
        params = stdio_params(url, TOKEN)
        params.command, params.args = str(script), ["--toolsets", "all"]
        async with Client(params, mode=mode, cache=None) as client:
            assert client.protocol_version == version
            names = sorted(t.name for t in (await client.list_tools()).tools)
            listed = await client.call_tool("github_list_milestones", REPO_ARGS)
            issue = await client.call_tool("github_get_issue", {**REPO_ARGS, "issue_number": seeded["first"]})
    assert names == sorted(t.name for t in SERVER.tools)
    assert not listed.is_error and not issue.is_error, (listed.structured_content, issue.structured_content)
