"""github-mcp --dynamic-toolsets over stateless streamable HTTP on 127.0.0.1: no connection
remembers an enable, so an enable changes nothing on the server and answers with the
X-MCP-Toolsets header to send; each request's surface is the toolsets its header names (within
the operator's flags) plus the three toolset tools. One caller's choice never reaches another,
and lists that vary with headers are neither shared nor kept (ttlMs 0, cacheScope private)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, http_app
from github_mcp import SERVER
from tests.functional.conftest import OWNER, REPO
from tests.http.conftest import TOKEN_X, TOKEN_Y
from tests.http.http_support import SERVER_SECRET, asgi_in_thread

pytestmark = pytest.mark.anyio
META = ["github_enable_toolsets", "github_get_toolset_tools", "github_list_toolsets"]


def members(*toolsets: str) -> list[str]:
    return sorted(t.name for t in SERVER.tools if t.toolset in toolsets)


def client(url: str, token: str, mode: str, seen: list[dict[str, Any]] | None = None,
           **headers: str) -> Client:
    async def record(response: Any) -> None:
        if seen is not None and response.headers.get("content-type", "").startswith("application/json"):
            body = await response.aread()
            if body.strip():
                seen.append(response.json())

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **headers}, timeout=30,
                              event_hooks={"response": [record]})
    return Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)


@pytest.fixture
def endpoint(fake_url: str) -> Iterator[str]:
    flags = ExposureFlags(dynamic=True, read_only=True)
    settings = Settings(api_url=fake_url, server_secret=SERVER_SECRET.encode(), exposure=flags)
    with asgi_in_thread(http_app(SERVER, settings, host="127.0.0.1")) as url:
        yield url


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_enable_answers_the_header_and_changes_nothing_for_anyone(
        endpoint: str, seeded: dict[str, Any], mode: str) -> None:
    seen: list[dict[str, Any]] = []
    async with client(endpoint, TOKEN_X, mode, seen) as x:
        assert sorted(t.name for t in (await x.list_tools()).tools) == META
        listed = next(m["result"] for m in seen if "tools" in m.get("result", {}))
        if mode == "auto":  # 2026-07-28 carries cache hints: none may keep a header-dependent list
            assert (listed["ttlMs"], listed["cacheScope"]) == (0, "private")
        answer = (await x.call_tool("github_enable_toolsets", {"toolsets": ["milestones", "labels"]}))
        content = answer.structured_content
        assert content is not None and not answer.is_error
        assert content["applied"] is False and content["notified"] is False
        assert content["send_header"] == {"X-MCP-Toolsets": "labels,milestones"}
        reads = sorted(t.name for t in SERVER.tools if t.toolset in ("labels", "milestones")
                       and t.annotations.read_only)  # the server runs --read-only
        assert content["added_tools"] == reads
        assert sorted(t.name for t in (await x.list_tools()).tools) == META  # nothing remembered
    async with client(endpoint, TOKEN_Y, mode) as y:  # another caller never sees X's choice
        assert sorted(t.name for t in (await y.list_tools()).tools) == META
    header = content["send_header"]
    async with client(endpoint, TOKEN_X, mode, **header) as again:
        tools = sorted(t.name for t in (await again.list_tools()).tools)
        assert tools == sorted(META + content["added_tools"])
        result = await again.call_tool("github_list_milestones", {"owner": OWNER, "repo": REPO})
        assert not result.is_error, result.structured_content
        listed = (await again.call_tool("github_list_toolsets", {})).structured_content
        assert {r["name"] for r in listed["toolsets"] if r["enabled"]} == {"labels", "milestones"}


async def test_a_header_cannot_reach_past_the_operators_flags(endpoint: str, seeded: dict[str, Any]) -> None:
    async with client(endpoint, TOKEN_X, "auto", **{"X-MCP-Toolsets": "milestones"}) as x:
        tools = sorted(t.name for t in (await x.list_tools()).tools)
        with pytest.raises(MCPError, match="Unknown tool"):
            await x.call_tool("github_create_milestone", {"owner": OWNER, "repo": REPO, "title": "v9"})
    writes = [t.name for t in SERVER.tools if t.toolset == "milestones" and not t.annotations.read_only]
    assert writes and not set(writes) & set(tools)  # --read-only bounds every header
    assert "github_list_milestones" in tools
