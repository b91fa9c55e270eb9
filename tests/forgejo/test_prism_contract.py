"""Every tool of forgejo-labels-mcp against Prism serving Forgejo's pinned description: the
description's own examples (static mode) and random schema-valid answers (dynamic mode). Prism
checks every request the server sends (a violation comes back as 422, which the server reports as
invalid_field: not an answer); the official client checks every result against the tool's
outputSchema. The server runs as a real stdio subprocess."""

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
SERVER = next(s for s in SERVERS if s.package == "forgejo_labels_mcp")
TOKEN = "0123456789abcdef0123456789abcdef01234567"
# beyond each tool's own example: the other modes of the writes
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "forgejo_delete_repo_label": [{"owner": "acme", "repo": "web", "label_id": 7, "delete_mode": "force"}],
    "forgejo_delete_org_label": [{"org": "acme", "label_id": 3, "delete_mode": "force"}],
    "forgejo_edit_repo_label": [{"owner": "acme", "repo": "web", "label_id": 7, "name": "renamed",
                                 "description": ""}],
    "forgejo_create_repo_label": [{"owner": "acme", "repo": "web", "name": "x", "color": "ABCDEF",
                                   "description": "with a description"}],
}


def operations() -> list[str]:
    return sorted({op.operation_id for tool in built(SERVER).tools for op in tool.operations}
                  | {"repoGet", "orgGet"})  # the runtime's parent probes after a 404


def calls() -> list[tuple[Any, dict[str, Any]]]:
    return [(tool, args) for tool in built(SERVER).tools
            for args in [dict(tool.example), *VARIANTS.get(tool.name, [])]]


@pytest.mark.parametrize("dynamic", [False, True], ids=["examples", "random"])
async def test_every_tool_answers_prism_without_a_request_violation(
    prism: StartPrism, dynamic: bool, tmp_path: Path
) -> None:
    mock = prism(operations(), overrides=SERVER.overrides, dynamic=dynamic)
    env = {"PATH": os.environ.get("PATH", ""), **SERVER.env(mock.base_url, TOKEN),
           "GHMCP_ALLOW_INSECURE_API_URL": "1"}
    params = StdioServerParameters(command=sys.executable, args=["-m", SERVER.package], env=env,
                                   cwd=str(tmp_path))
    answered: dict[str, list[str]] = {}
    async with Client(params, cache=None) as client:
        for tool, args in calls():
            result = await client.call_tool(tool.name, args)  # the client checks the outputSchema
            problem = answer_problem(tool, result)
            assert problem is None, (problem, mock.log_text()[-3000:])
            answered.setdefault(tool.name, []).append(result.structured_content.get("code", "ok"))
    assert set(answered) == {t.name for t in built(SERVER).tools}
    log = mock.log_text()
    assert "Request did not pass the validation rules" not in log, log[-3000:]
    # a listing and a read answer successfully in both modes
    assert answered["forgejo_list_repo_labels"] == ["ok"] and answered["forgejo_get_org_label"] == ["ok"]
