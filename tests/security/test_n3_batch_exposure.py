"""Security review n3: batch tools ran their item tool and their listing whether or not the
caller's surface exposed them (`--exclude-tools github_update_issue`, `X-MCP-Exclude-Tools`,
`--tools` naming only the batch; a `match` batch walked a hidden search). A tool that runs other
tools is now exposed only with all of them, whatever hid one, and a composite asking the host
for a tool outside its surface is refused before anything is sent."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from fakegithub import FakeGitHub
from forgejo_labels_mcp import SERVER as FORGEJO_LABELS
from forgejo_mcp import SERVER as FORGEJO
from ghmcp_runtime.core.model import ServerSpec
from ghmcp_runtime.guards.exposure import ExposureError, ExposureFlags, ExposurePolicy
from github_issues_mcp import SERVER
from github_mcp import SERVER as GITHUB
from github_milestones_mcp import SERVER as MILESTONES
from github_sub_issues_mcp import SERVER as SUB_ISSUES
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server, payload
from tests.http.http_support import http_server_process, server_env

pytestmark = pytest.mark.anyio
BASE = {"owner": OWNER, "repo": REPO}
SERVERS = [SERVER, MILESTONES, SUB_ISSUES, FORGEJO_LABELS, GITHUB, FORGEJO]
WRITES = ("POST", "PATCH", "PUT", "DELETE")


def writes(fake: FakeGitHub) -> list[Any]:
    return [c for c in fake.calls() if c.method in WRITES]


async def names(c: Client) -> set[str]:
    return {t.name for t in (await c.list_tools()).tools}


@pytest.mark.parametrize("spec", SERVERS, ids=lambda s: s.name)
def test_hiding_any_tool_a_composite_runs_hides_the_composite(spec: ServerSpec) -> None:
    """Every composite of every generated server, every tool it runs, every way to hide it."""
    composites = [t for t in spec.tools if t.runs]
    for tool in composites:
        for ran in tool.runs:
            for flags in (ExposureFlags(exclude_tools=(ran,)),
                          ExposureFlags(tools=tuple(t.name for t in spec.tools if t.name not in (ran, tool.name)))):
                policy = ExposurePolicy(spec.tools, spec.toolsets, flags)
                assert tool.name not in policy.base.tools, (tool.name, ran, flags)
            policy = ExposurePolicy(spec.tools, spec.toolsets, ExposureFlags())
            assert tool.name not in policy.for_request({"x-mcp-exclude-tools": ran}).tools
    assert spec.name not in ("github-issues-mcp", "github-milestones-mcp", "github-mcp") or composites


@pytest.mark.parametrize("named", ["github_get_issue,github_update_issues",
                                   "github_update_issue,github_update_issues"])
def test_naming_a_composite_without_the_tools_it_runs_is_refused(named: str) -> None:
    with pytest.raises(ExposureError, match="github_update_issues runs github_"):
        ExposurePolicy(SERVER.tools, SERVER.toolsets, ExposureFlags(tools=tuple(named.split(","))))
    policy = ExposurePolicy(SERVER.tools, SERVER.toolsets, ExposureFlags())
    with pytest.raises(ExposureError, match="X-MCP-Tools: github_update_issues runs"):
        policy.for_request({"x-mcp-tools": named})
    whole = "github_update_issue,github_search_issues,github_update_issues"
    assert "github_update_issues" in policy.for_request({"x-mcp-tools": whole}).tools


@pytest.mark.parametrize("hidden", ["github_update_issue", "github_search_issues"])
async def test_the_batch_is_unknown_when_a_tool_it_runs_is_excluded(
    fake: FakeGitHub, seeded: dict[str, Any], hidden: str
) -> None:
    first = seeded["first"]
    async with Client(in_memory_server(fake, exposure=ExposureFlags(exclude_tools=(hidden,))),
                      cache=None) as c:
        listed = await names(c)
        assert hidden not in listed and "github_update_issues" not in listed
        assert "github_get_issue" in listed
        for args in ({**BASE, "issue_numbers": [first], "add_labels": ["wontfix"], "state": "closed"},
                     {**BASE, "match": {"labels": ["bug"]}, "add_labels": ["wontfix"]}):
            with pytest.raises(MCPError) as unknown:
                await c.call_tool("github_update_issues", args)
            assert unknown.value.error.code == INVALID_PARAMS
    assert fake.calls() == []
    assert "wontfix" not in fake.label_names(OWNER, REPO, first)


async def test_milestones_batch_follows_its_item_tool(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    server = in_memory_server(fake, spec=MILESTONES,
                              exposure=ExposureFlags(exclude_tools=("github_update_milestone",)))
    async with Client(server, cache=None) as c:
        assert "github_update_milestones" not in await names(c)
        with pytest.raises(MCPError):
            await c.call_tool("github_update_milestones", {**BASE, "milestone_numbers": [seeded["milestone"]],
                                                           "state": "closed"})
    assert writes(fake) == []
    assert fake.milestones(OWNER, REPO)[0].state == "open"


async def test_a_composite_running_an_undeclared_tool_is_refused_before_any_write(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    """The backstop: a composite whose `runs` does not name the tool it asks for (a hook, or a
    declaration out of step) gets internal_error, and nothing is sent."""
    tools = tuple(replace(t, runs=()) if t.name == "github_update_issues" else t for t in SERVER.tools)
    spec = replace(SERVER, tools=tools)
    async with Client(in_memory_server(fake, spec=spec), cache=None) as c:
        result = await c.call_tool("github_update_issues", {**BASE, "issue_numbers": [seeded["first"]],
                                                            "add_labels": ["wontfix"]})
    data = payload(result)
    assert result.is_error and data["code"] == "internal_error" and "repair" not in data
    assert writes(fake) == []


def test_over_http_a_header_that_hides_the_item_tool_hides_the_batch(
    fake: FakeGitHub, fake_url: str, seeded: dict[str, Any]
) -> None:
    """The console script over real HTTP: X-MCP-Exclude-Tools and X-MCP-Tools, as n3 sent them."""
    first = seeded["first"]
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}

    def rpc(url: str, method: str, params: dict[str, Any], **extra: str) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer: dict[str, Any] = httpx.post(url, json=body, headers={**headers, **extra}, timeout=30).json()
        return answer

    batch = {"name": "github_update_issues",
             "arguments": {**BASE, "issue_numbers": [first], "add_labels": ["wontfix"], "state": "closed"}}
    with http_server_process(server_env(fake_url)) as url:
        for header in ({"X-MCP-Exclude-Tools": "github_update_issue"},
                       {"X-MCP-Exclude-Tools": "github_search_issues"}):
            listed = {t["name"] for t in rpc(url, "tools/list", {}, **header)["result"]["tools"]}
            assert "github_update_issues" not in listed
            assert rpc(url, "tools/call", batch, **header)["error"]["code"] == INVALID_PARAMS
        refused = rpc(url, "tools/call", batch, **{"X-MCP-Tools": "github_get_issue,github_update_issues"})
        assert refused["error"]["code"] == INVALID_PARAMS
        assert "github_update_issues runs github_" in refused["error"]["message"]
    assert writes(fake) == []
    assert fake.get_issue(OWNER, REPO, first).state == "open"
