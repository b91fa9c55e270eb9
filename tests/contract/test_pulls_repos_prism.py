"""github-pulls-mcp and github-repos-mcp against Prism (an independent validator of every request
against GitHub's spec), each as a real stdio subprocess driven by the official client (which checks
every result against the tool's outputSchema): every tool, with GitHub's documented examples and
with Prism's random schema-valid answers. A refusal the tool declares for the data it got is an
answer (GitHub's example pull request is merged, so a merge is refused `already_merged`); a request
Prism refused (`invalid_field`), a crash or an unreachable upstream is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.contract.test_declared_against_examples import REPO, server
from tests.support.prism import StartPrism
from tests.support.servers import NOT_AN_ANSWER, Server, built

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
PULLS = Server(ROOT / "overrides" / "github_pulls.yaml", "github-pulls-mcp", "github_pulls_mcp")
REPOS = Server(ROOT / "overrides" / "github_repos.yaml", "github-repos-mcp", "github_repos_mcp")
PULL_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("github_list_pull_requests", {}),
    ("github_list_pull_requests", {"base": "main", "head": "fix", "state": "all", "sort": "updated"}),
    ("github_list_pull_requests", {"author": "octocat", "label": "bug"}),
    ("github_get_pull_request", {"pull_number": 1347}),
    ("github_create_pull_request", {"title": "Fix", "head": "fix", "base": "main", "body": "Why.", "draft": True}),
    ("github_update_pull_request", {"pull_number": 1347, "title": "A new title", "state": "closed"}),
    ("github_update_pull_request_reviewers", {"pull_number": 1347, "reviewers": ["octocat", "octo-org/core"]}),
    ("github_update_pull_request_reviewers", {"pull_number": 1347, "reviewers": ["octocat"], "remove": True}),
    ("github_add_pull_request_review", {"pull_number": 1347, "event": "COMMENT", "body": "Looks good",
                                        "comments": [{"path": "file.md", "line": 2, "body": "Why?"}]}),
    ("github_add_pull_request_comment", {"pull_number": 1347, "body": "Thanks"}),
    ("github_merge_pull_request", {"pull_number": 1347, "head_sha": SHA, "merge_method": "squash"}),
    ("github_update_pull_request_branch", {"pull_number": 1347, "head_sha": SHA}),
)
REPO_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("github_get_repository", {}),
    ("github_get_file_contents", {"path": "README.md", "ref": "main"}),
    ("github_list_branches", {}),
    ("github_list_commits", {"ref": "main", "path": "README.md", "author": "octocat",
                             "since": "2024-01-01T00:00:00Z"}),
    ("github_get_commit", {"ref": SHA}),
    ("github_create_branch", {"branch": "fix"}),
    ("github_create_branch", {"branch": "fix", "from_ref": "main"}),
    ("github_create_or_update_file", {"path": "README.md", "content": "# Hi\n", "message": "Edit",
                                      "branch": "main", "sha": "95b966ae1c166bd92f8ae7d1c313e738c731dfc3"}),
    ("github_search_code", {"query": "addClass repo:octocat/hello-world"}),
    ("github_get_me", {}),
)
OWNERLESS = {"github_search_code", "github_get_me"}


async def call_each(client: Client, srv: Server, calls: tuple[tuple[str, dict[str, Any]], ...],
                    log: Any) -> None:
    tools = {t.name: t for t in built(srv).tools}
    assert {name for name, _ in calls} == set(tools)  # every tool
    for name, args in calls:
        full = args if name in OWNERLESS else {**REPO, **args}
        result = await client.call_tool(name, full)  # the client validates the outputSchema
        data = result.structured_content
        assert result.is_error == ("code" in data), data
        if result.is_error:
            code = data["code"]
            assert code not in NOT_AN_ANSWER and code in tools[name].error_codes, (name, full, data, log()[-1500:])


@pytest.mark.parametrize("dynamic", [False, True], ids=["examples", "random"])
@pytest.mark.parametrize(("srv", "calls"), [(PULLS, PULL_CALLS), (REPOS, REPO_CALLS)], ids=["pulls", "repos"])
async def test_every_tool_through_prism(prism: StartPrism, dynamic: bool, srv: Server,
                                        calls: tuple[tuple[str, dict[str, Any]], ...]) -> None:
    ops = sorted({op.operation_id for t in built(srv).tools for op in t.operations})
    mock = prism(ops, overrides=srv.overrides, dynamic=dynamic)
    async with server(srv.package, mock.base_url) as client:
        await call_each(client, srv, calls, mock.log_text)
