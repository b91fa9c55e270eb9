"""forgejo-mcp, the Forgejo forge's one server: every Forgejo override file's toolsets in one
server, through the official MCP client in both eras against the Forgejo fake (every request and
answer checked against the pinned Forgejo description) and over a real stdio subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from fakeforgejo import FakeForgejo
from forgejo_mcp import SERVER
from ghmcp_runtime.guards.exposure import ExposureFlags
from tests.forgejo.forgejo_support import ORG, OWNER_TOKEN, REPO, in_memory_server, stdio_params
from tests.functional.session import Opened
from tests.support.servers import FORGE_SERVERS

pytestmark = pytest.mark.anyio
FORGEJO = next(f for f in FORGE_SERVERS if f.package == "forgejo_mcp")
ROOT = Path(__file__).resolve().parents[2]


def published() -> list[dict[str, Any]]:
    tools = [t for part in FORGEJO.parts for t in json.loads(
        (ROOT / "generated" / part.package / "tools.json").read_text(encoding="utf-8"))["tools"]]
    return sorted(tools, key=lambda t: t["name"])


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_all_serves_every_forgejo_tool_and_toolsets_narrow(
        fake: FakeForgejo, ids: dict[str, Any], mode: str) -> None:
    server = in_memory_server(fake, spec=SERVER, exposure=ExposureFlags(toolsets=("all",)))
    async with Client(server, mode=mode, cache=None) as client:
        served = [t.model_dump(by_alias=True, exclude_none=True, mode="json")
                  for t in (await client.list_tools()).tools]
        assert client.server_info is not None and client.server_info.name == "forgejo-mcp"
    assert served == published()
    only = in_memory_server(fake, spec=SERVER, exposure=ExposureFlags(toolsets=("org_labels",)))
    async with Opened(only, mode=mode) as s:
        names = sorted(t.name for t in (await s.client.list_tools()).tools)
        assert names == sorted(t.name for t in SERVER.tools if t.toolset == "org_labels")
        listed = await s.ok("forgejo_list_org_labels", {"org": ORG})
        assert listed["labels"]
    both = in_memory_server(fake, spec=SERVER, exposure=ExposureFlags(toolsets=("issues", "labels")))
    async with Opened(both, mode=mode) as s:
        names = sorted(t.name for t in (await s.client.list_tools()).tools)
        assert names == sorted(t.name for t in SERVER.tools if t.toolset in ("issues", "labels"))
        found = await s.ok("forgejo_search_issues", {"owner": ORG, "repo": REPO, "labels": ["bug"]})
        assert [row["issue_number"] for row in found["issues"]] == [1]
        assert (await s.ok("forgejo_list_repo_labels", {"owner": ORG, "repo": REPO}))["labels"]


async def test_the_console_script_serves_it_over_stdio(fake: FakeForgejo, ids: dict[str, Any]) -> None:
    with fake.serve() as url:
        params = stdio_params(url, OWNER_TOKEN)
        params.command, params.args = str(Path(sys.executable).parent / "forgejo-mcp"), []
        async with Client(params, mode="legacy", cache=None) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            result = await client.call_tool("forgejo_list_repo_labels", {"owner": ORG, "repo": REPO})
    assert names == sorted(t.name for t in SERVER.tools)  # the default set is every toolset here
    assert not result.is_error, result.structured_content


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_issues_and_labels_toolsets_over_stdio(fake: FakeForgejo, ids: dict[str, Any], mode: str) -> None:
    """`forgejo-mcp --toolsets issues,labels`: the issue tools and the repository label tools of one
    server (GitHub's toolset names), nothing else, a real subprocess, both protocol eras."""
    with fake.serve() as url:
        params = stdio_params(url, OWNER_TOKEN)
        params.command = str(Path(sys.executable).parent / "forgejo-mcp")
        params.args = ["--toolsets", "issues,labels"]
        async with Client(params, mode=mode, cache=None) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            made = await client.call_tool("forgejo_create_issue", {"owner": ORG, "repo": REPO, "title": "Over stdio",
                                                                   "labels": ["bug", "docs"]})
            label = await client.call_tool("forgejo_create_repo_label", {"owner": ORG, "repo": REPO,
                                                                         "name": "stdio", "color": "00ff00"})
            number = made.structured_content["issue"]["issue_number"]
            updated = await client.call_tool("forgejo_update_issue", {"owner": ORG, "repo": REPO,
                                                                      "issue_number": number,
                                                                      "add_labels": ["stdio"], "remove_labels": ["bug"]})
    assert names == {t.name for t in SERVER.tools if t.toolset in ("issues", "labels")}
    assert {"forgejo_search_issues", "forgejo_update_issue", "forgejo_delete_repo_label"} <= names
    assert "forgejo_list_org_labels" not in names
    assert not made.is_error and not label.is_error, (made.structured_content, label.structured_content)
    assert updated.structured_content["issue"]["labels"] == ["docs", "stdio"], updated.structured_content
