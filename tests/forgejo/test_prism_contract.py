"""Every tool of the Forgejo servers (forgejo-labels-mcp, forgejo-issues-mcp) against Prism serving
Forgejo's pinned description with each file's spec patches (for the issues: `pull_request` null
for an issue, as Forgejo sends it): the description's own examples (static mode) and random
schema-valid answers (dynamic mode). Prism checks every request the server sends (a violation
comes back as 422, which the server reports as invalid_field: not an answer); the official client
checks every result against the tool's outputSchema. The server runs as a real stdio subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.support.prism import StartPrism
from tests.support.servers import SERVERS, answer_problem, built

pytestmark = pytest.mark.anyio
PACKAGES = ["forgejo_labels_mcp", "forgejo_issues_mcp"]
TOKEN = "0123456789abcdef0123456789abcdef01234567"
WEB = {"owner": "acme", "repo": "web"}
# beyond each tool's own example: the other modes of the writes, and calls no name lookup can
# refuse (Prism's labels and milestones are not named like the examples' ones)
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "forgejo_delete_repo_label": [{**WEB, "label_id": 7, "delete_mode": "force"}],
    "forgejo_delete_org_label": [{"org": "acme", "label_id": 3, "delete_mode": "force"}],
    "forgejo_edit_repo_label": [{**WEB, "label_id": 7, "name": "renamed", "description": ""}],
    "forgejo_create_repo_label": [{**WEB, "name": "x", "color": "ABCDEF", "description": "with a description"}],
    "forgejo_search_issues": [{**WEB, "state": "all", "keyword": "crash", "sort": "recentupdate",
                               "detail": "full"}],
    "forgejo_create_issue": [{**WEB, "title": "No names", "body": "text", "milestone": 3,
                              "idempotency_key": "prism-0001"}],
    "forgejo_update_issue": [{**WEB, "issue_number": 1, "title": "Renamed", "state": "open", "milestone": None},
                             {**WEB, "issue_number": 1, "milestone": 2, "body": ""}],
    "forgejo_add_comment": [{**WEB, "issue_number": 1, "body": "Noted."}],
}
# tools that answer successfully (a random issue may be a pull request, which get refuses)
ANSWERED = {
    ("forgejo_labels_mcp", False): ("forgejo_list_repo_labels", "forgejo_get_org_label"),
    ("forgejo_labels_mcp", True): ("forgejo_list_repo_labels", "forgejo_get_org_label"),
    ("forgejo_issues_mcp", False): ("forgejo_get_issue", "forgejo_search_issues", "forgejo_add_comment"),
    ("forgejo_issues_mcp", True): ("forgejo_search_issues", "forgejo_add_comment"),
}


def server(package: str) -> Any:
    return next(s for s in SERVERS if s.package == package)


def operations(package: str) -> list[str]:
    return sorted({op.operation_id for tool in built(server(package)).tools for op in tool.operations}
                  | {"repoGet", "orgGet"})  # the runtime's parent probes after a 404


def calls(package: str) -> list[tuple[Any, dict[str, Any]]]:
    return [(tool, args) for tool in built(server(package)).tools
            for args in [dict(tool.example), *VARIANTS.get(tool.name, [])]]


@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize("dynamic", [False, True], ids=["examples", "random"])
async def test_every_tool_answers_prism_without_a_request_violation(
    prism: StartPrism, dynamic: bool, package: str, tmp_path: Path
) -> None:
    spec = server(package)
    mock = prism(operations(package), overrides=spec.overrides, dynamic=dynamic)
    env = {"PATH": os.environ.get("PATH", ""), **spec.env(mock.base_url, TOKEN),
           "GHMCP_ALLOW_INSECURE_API_URL": "1"}
    params = StdioServerParameters(command=sys.executable, args=["-m", package], env=env, cwd=str(tmp_path))
    answered: dict[str, list[str]] = {}
    async with Client(params, cache=None) as client:
        for tool, args in calls(package):
            result = await client.call_tool(tool.name, args)  # the client checks the outputSchema
            problem = answer_problem(tool, result)
            assert problem is None, (problem, mock.log_text()[-3000:])
            answered.setdefault(tool.name, []).append(result.structured_content.get("code", "ok"))
    assert set(answered) == {t.name for t in built(spec).tools}
    log = mock.log_text()
    assert "Request did not pass the validation rules" not in log, log[-3000:]
    for name in ANSWERED[(package, dynamic)]:
        assert "ok" in answered[name], (name, answered[name])
