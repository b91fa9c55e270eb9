"""The installed console script over a real stdio pipe, both protocol eras, against a real HTTP fake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, stdio_params

pytestmark = pytest.mark.anyio
PUBLISHED = len(json.loads((Path(__file__).resolve().parents[2] / "generated" / "github_issues_mcp"
                            / "tools.json").read_text(encoding="utf-8"))["tools"])


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_every_tool_works_over_stdio(
    fake: FakeGitHub, seeded: dict[str, Any], mode: str, version: str
) -> None:
    n = seeded["first"]
    base = {"owner": OWNER, "repo": REPO}
    with fake.serve() as url:
        async with Client(stdio_params(url), mode=mode, cache=None) as client:
            assert client.protocol_version == version
            assert client.server_info is not None and client.server_info.name == "github-issues-mcp"
            assert client.instructions and "Does not:" in client.instructions
            tools = await client.list_tools()
            assert len(tools.tools) == PUBLISHED
            calls = [
                ("github_search_issues", {**base, "state": "all"}),
                ("github_search_issues", {"query": "crash", **base}),
                ("github_get_issue", {**base, "issue_number": n}),
                ("github_list_labels", base),
                ("github_create_issue", {**base, "title": "From stdio", "labels": ["bug"]}),
                ("github_update_issue", {**base, "issue_number": n, "add_labels": ["wontfix"]}),
                ("github_add_comment", {**base, "issue_number": n, "body": "hello"}),
            ]
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert not result.is_error, (name, result.structured_content)
                assert result.structured_content["request_id"].startswith("req_")
            missing = await client.call_tool("github_get_issue", {**base, "issue_number": 9999})
            assert missing.is_error and missing.structured_content["code"] == "issue_not_found"


async def test_without_a_token_the_server_lists_tools_and_answers_missing_credential(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    with fake.serve() as url:
        async with Client(stdio_params(url, token=None), cache=None) as client:
            assert len((await client.list_tools()).tools) == PUBLISHED
            result = await client.call_tool("github_list_labels", {"owner": OWNER, "repo": REPO})
    assert result.is_error and result.structured_content["code"] == "missing_credential"
    assert fake.requests == []
