"""`github-mcp --toolsets pull_requests,repos,context` (issue 33): the forge's one server serves the
pull-request, repository and context tools, and an agent ships a change with them alone — who am
I, branch, write a file, open a pull request, review it (another account), merge it guarded by the
head it read — in both eras in memory and over a real stdio subprocess, against the fake GitHub."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.exposure import ExposureFlags
from github_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, ROOT, TOKEN, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
TOOLSETS = ("pull_requests", "repos", "context")
REVIEWER = "ghp_codeflowreviewer00000000000000000001"
REPO_ARGS = {"owner": OWNER, "repo": REPO}


def chosen() -> list[str]:
    return sorted(t.name for t in SERVER.tools if t.toolset in TOOLSETS)


async def ship(author: Any, reviewer: Any, fake: FakeGitHub) -> int:
    me = await author.ok("github_get_me", {})
    assert me["login"] == "octocat"
    await author.ok("github_create_branch", {**REPO_ARGS, "branch": "add-notes"})
    await author.ok("github_create_or_update_file", {**REPO_ARGS, "path": "docs/notes.md", "content": "# Notes\n",
                                                    "message": "Add notes", "branch": "add-notes"})
    made = await author.ok("github_create_pull_request", {**REPO_ARGS, "title": "Add notes", "head": "add-notes",
                                                         "base": "main"})
    number = made["pull_request"]["pull_number"]
    await reviewer.ok("github_add_pull_request_review", {**REPO_ARGS, "pull_number": number, "event": "APPROVE"})
    read = await author.ok("github_get_pull_request", {**REPO_ARGS, "pull_number": number})
    assert read["reviews"][0]["state"] == "APPROVED" and read["files"][0]["path"] == "docs/notes.md"
    merged = await author.ok("github_merge_pull_request", {**REPO_ARGS, "pull_number": number,
                                                          "head_sha": read["pull_request"]["head_sha"]})
    assert merged["merged"] is True
    return number


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_three_toolsets_ship_a_change(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    fake.add_token(REVIEWER, "hubot", scopes=("repo",))
    fake.protect_branch(OWNER, REPO, "main", required_reviews=1)
    flags = ExposureFlags(toolsets=TOOLSETS)
    async with (Opened(in_memory_server(fake, spec=SERVER, exposure=flags), mode=mode) as author,
                Opened(in_memory_server(fake, REVIEWER, spec=SERVER, exposure=flags), mode=mode) as reviewer):
        assert sorted(author.tools) == chosen()
        number = await ship(author, reviewer, fake)
    assert fake.get_issue(OWNER, REPO, number).merged_at is not None
    assert fake.file_bytes(OWNER, REPO, "docs/notes.md") == b"# Notes\n"


async def test_over_stdio_the_flag_selects_them(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    with fake.serve() as base_url:
        env = {"PATH": os.environ.get("PATH", ""), "GITHUB_API_URL": base_url, "GITHUB_TOKEN": TOKEN,
               "GHMCP_CURSOR_SECRET": "functional-tests"}
        params = StdioServerParameters(command=sys.executable, args=["-m", "github_mcp", "--toolsets",
                                                                      ",".join(TOOLSETS)], env=env, cwd=str(ROOT))
        async with Client(params, cache=None) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            got = await client.call_tool("github_get_file_contents", {**REPO_ARGS, "path": "README.md"})
    assert names == chosen() and len(names) == 18
    assert not got.is_error and got.structured_content["file"]["text"] == f"# {REPO}\n"
