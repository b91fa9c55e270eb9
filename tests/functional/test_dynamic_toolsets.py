"""github-mcp --dynamic-toolsets through the official MCP client: it starts with three tools, the
model lists toolsets, looks at one, enables some, and the client is told the tool list changed
(2025-11-25: notifications/tools/list_changed; 2026-07-28: an event on subscriptions/listen), in
memory and over a real stdio subprocess, against the fake GitHub. Every exposure flag bounds what
an enable adds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.types import ServerNotification, ToolListChangedNotification

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.exposure import ExposureFlags
from github_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server, stdio_params
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
META = ["github_enable_toolsets", "github_get_toolset_tools", "github_list_toolsets"]
REPO_ARGS = {"owner": OWNER, "repo": REPO}


def members(*toolsets: str) -> list[str]:
    return sorted(t.name for t in SERVER.tools if t.toolset in toolsets)


def dynamic(fake: FakeGitHub, **flags: Any) -> Any:
    return in_memory_server(fake, spec=SERVER, exposure=ExposureFlags(dynamic=True, **flags))


async def names(client: Client) -> list[str]:
    return sorted(t.name for t in (await client.list_tools()).tools)


class Notifications:
    """The client's message handler: the server notifications it got, in order."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ServerNotification):
            self.seen.append(message)

    @property
    def tools_changed(self) -> int:
        return sum(isinstance(m, ToolListChangedNotification) for m in self.seen)


async def test_it_starts_with_three_tools_that_describe_every_toolset(fake: FakeGitHub) -> None:
    async with Opened(dynamic(fake)) as s:
        assert await names(s.client) == META
        assert "github_enable_toolsets enables some" in (s.client.instructions or "")
        listed = (await s.ok("github_list_toolsets", {}))["toolsets"]
        assert [t["name"] for t in listed] == list(SERVER.toolsets)
        for row in listed:
            assert row["tools"] == len(members(row["name"])) and row["enabled"] is False
            assert row["description"] == SERVER.toolsets[row["name"]]
            assert row["default"] == (row["name"] in (SERVER.default_toolsets or ()))
        shown = await s.ok("github_get_toolset_tools", {"toolset": "milestones"})
        assert [t["name"] for t in shown["tools"]] == members("milestones") and shown["enabled"] is False
        assert {t["read_only"] for t in shown["tools"]} == {True, False}
        # a name no toolset has is refused by the published enum, located
        bad = await s.error("github_enable_toolsets", {"toolsets": ["milestone"]}, "invalid_field")
        assert bad["details"]["field"].startswith("toolsets")
        assert await names(s.client) == META  # looking changed nothing


async def test_2025_era_enabling_grows_the_list_and_sends_list_changed(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    got = Notifications()
    async with Client(dynamic(fake), mode="legacy", message_handler=got) as client:
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("github_get_milestone", {**REPO_ARGS, "milestone_number": 1})
        listed = await names(client)  # cached by the client until a list_changed evicts it
        result = await client.call_tool("github_enable_toolsets", {"toolsets": ["milestones"]})
        answer = result.structured_content
        assert answer is not None and not result.is_error
        assert answer["toolsets"] == ["milestones"] and answer["added_tools"] == members("milestones")
        assert answer["applied"] is True and answer["notified"] is True
        with anyio.fail_after(5):
            while got.tools_changed == 0:
                await anyio.sleep(0.01)
        assert listed == META and await names(client) == sorted(META + members("milestones"))
        read = await client.call_tool("github_get_milestone", {**REPO_ARGS, "milestone_number": seeded["milestone"]})
        assert not read.is_error and read.structured_content["milestone"]["title"] == "v1.0"
        again = await client.call_tool("github_enable_toolsets", {"toolsets": ["milestones"]})
        assert again.structured_content["added_tools"] == [] and again.structured_content["notified"] is False
    assert got.tools_changed == 1  # nothing added, nothing announced


async def test_2026_era_enabling_publishes_on_the_listen_stream(fake: FakeGitHub) -> None:
    async with Client(dynamic(fake), mode="auto") as client:  # response cache on
        assert client.protocol_version == "2026-07-28" and client.server_capabilities is not None and client.server_capabilities.tools
        assert client.server_capabilities.tools.list_changed is True
        assert await names(client) == META
        async with client.listen(tools_list_changed=True) as events:
            result = await client.call_tool("github_enable_toolsets", {"toolsets": ["issues", "labels"]})
            assert result.structured_content["notified"] is True
            with anyio.fail_after(5):
                event = await events.__anext__()
        assert type(event).__name__ == "ToolsListChanged"
        # the cached 3-tool list was evicted by the event: the next list is the grown one
        assert await names(client) == sorted(META + members("issues", "labels"))


async def test_exposure_flags_bound_what_an_enable_adds(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    flags = {"read_only": True, "exclude_tools": ("github_get_milestone",), "toolsets": ("labels",),
             "repos": (f"{OWNER}/{REPO}",)}
    async with Opened(dynamic(fake, **flags)) as s:
        start = await names(s.client)
        assert start == sorted([*META, "github_list_labels"])  # --toolsets: enabled at start, read-only
        added = (await s.ok("github_enable_toolsets", {"toolsets": ["milestones"]}))["added_tools"]
        assert added == ["github_list_milestones"]  # no writes, not the excluded tool
        listed = (await s.ok("github_list_toolsets", {}))["toolsets"]
        assert {r["name"]: r["tools"] for r in listed}["milestones"] == 1
        outside = await s.client.call_tool("github_list_milestones", {"owner": OWNER, "repo": "secret"})
        assert outside.is_error and outside.structured_content["code"] == "repo_not_allowed"
        assert fake.requests == []
        shown = await s.ok("github_get_toolset_tools", {"toolset": "milestones"})
        assert [t["name"] for t in shown["tools"]] == ["github_list_milestones"] and shown["enabled"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio_both_eras(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    script = Path(sys.executable).parent / "github-mcp"
    got = Notifications()
    with fake.serve() as url:
        params = stdio_params(url, TOKEN)
        params.command, params.args = str(script), ["--dynamic-toolsets"]
        async with Client(params, mode=mode, message_handler=got) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            caps = client.server_capabilities
            assert caps is not None and caps.tools is not None and caps.tools.list_changed is True
            assert await names(client) == META
            if mode == "legacy":
                await client.call_tool("github_enable_toolsets", {"toolsets": ["sub_issues"]})
                with anyio.fail_after(10):
                    while got.tools_changed == 0:
                        await anyio.sleep(0.02)
            else:
                async with client.listen(tools_list_changed=True) as events:
                    await client.call_tool("github_enable_toolsets", {"toolsets": ["sub_issues"]})
                    with anyio.fail_after(10):
                        await events.__anext__()
            assert await names(client) == sorted(META + members("sub_issues"))
            listed = await client.call_tool("github_list_sub_issues", {**REPO_ARGS, "issue_number": seeded["first"]})
    assert not listed.is_error, listed.structured_content
