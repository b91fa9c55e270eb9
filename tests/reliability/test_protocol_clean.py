"""Failures stay inside the protocol: malformed tokens are refused before anything is sent, an
unexpected exception never reaches the caller as text (tools: internal_error; other methods:
JSON-RPC -32603), an unknown tool is -32602, and every stderr line is a JSON log line naming
the caller of the call it belongs to."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, ResourceTemplateReference

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.errors import INTERNAL_MESSAGE
from ghmcp_runtime.guards.caller import caller_id, identity_key
from ghmcp_runtime.serving.app import Settings, build_server
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from github_issues_mcp import SERVER
from tests.reliability.reliability_support import (
    OWNER,
    REPO,
    RETRY,
    TOKEN,
    TOOLS,
    Recorder,
    server_for,
    small_seed,
)

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
ISSUE_TEMPLATE = "ghissues://repos/{owner}/{repo}/issues/{issue_number}"
ISSUE_URI = f"ghissues://repos/{OWNER}/{REPO}/issues/1"
# tokens that cannot be GitHub tokens: the review's non-ASCII and CRLF probes, and whitespace
MALFORMED = {
    "non-ASCII": "ghp_t\u00f6k\u00e9n000000000000000000000000000000",
    "CRLF": "ghp_abc000000000000000000000000000000\r\nX-Injected: 1",
    "space": "ghp_abc 000000000000000000000000000000",
    "tab": "ghp_abc\t000000000000000000000000000000",
}
GOOD_CALLS: dict[str, dict[str, Any]] = {
    "github_add_comment": {"owner": OWNER, "repo": REPO, "issue_number": 1, "body": "b"},
    "github_create_issue": {"owner": OWNER, "repo": REPO, "title": "t"},
    "github_create_label": {"owner": OWNER, "repo": REPO, "name": "n", "color": "00ff00"},
    "github_delete_label": {"owner": OWNER, "repo": REPO, "name": "obsolete"},
    "github_get_issue": {"owner": OWNER, "repo": REPO, "issue_number": 1},
    "github_list_labels": {"owner": OWNER, "repo": REPO},
    "github_search_issues": {"owner": OWNER, "repo": REPO},
    "github_update_issue": {"owner": OWNER, "repo": REPO, "issue_number": 1, "title": "t"},
    "github_update_issues": {"owner": OWNER, "repo": REPO, "issue_numbers": [1], "add_labels": ["bug"]},
    "github_update_label": {"owner": OWNER, "repo": REPO, "name": "triage", "description": "d"},
}


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every line parsed as JSON (fails on a plain-text line such as a traceback)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def fake() -> FakeGitHub:
    github = FakeGitHub()
    small_seed(github)
    return github


@pytest.mark.parametrize("token", list(MALFORMED.values()), ids=list(MALFORMED))
async def test_malformed_token_is_invalid_credential_and_nothing_is_sent(
    fake: FakeGitHub, token: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert set(GOOD_CALLS) == set(TOOLS), "a new tool needs a call here"
    recorder = Recorder(fake.asgi_transport())
    async with Client(server_for(recorder, token=token), mode="legacy", cache=None) as client:
        for name, args in GOOD_CALLS.items():
            result = await client.call_tool(name, args)
            env = result.structured_content
            assert result.is_error and env["code"] == "invalid_credential", (name, env)
            assert "may have been applied" not in json.dumps(env)
        with pytest.raises(MCPError) as read:
            await client.read_resource(ISSUE_URI)
        completed = await client.complete(ResourceTemplateReference(uri=ISSUE_TEMPLATE),
                                          argument={"name": "repo", "value": ""},
                                          context_arguments={"owner": OWNER})
    assert recorder.sent == []
    assert read.value.error.code not in (0, INTERNAL_ERROR)
    assert read.value.error.data["machine_code"] == "invalid_credential"
    assert completed.completion.values == []
    err = capsys.readouterr().err
    assert "Traceback" not in err and token not in err
    json_lines(err)


def crashing_spec() -> Any:
    async def crash(*_: Any) -> Any:
        raise UnicodeEncodeError("ascii", "secret \u00e9", 7, 8, "internal detail")

    templates = tuple(
        replace(t, handler=crash, completions=dict.fromkeys(t.completions, crash))
        for t in SERVER.templates
    )
    return replace(SERVER, templates=templates)


async def test_unexpected_exception_outside_tools_is_a_generic_32603(
    fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                              transport=fake.asgi_transport(), retry=RETRY)
    server = build_server(crashing_spec(), Settings(token=TOKEN), upstream=upstream)
    async with Client(server, mode="legacy", cache=None) as client:
        with pytest.raises(MCPError) as read:
            await client.read_resource(ISSUE_URI)
        with pytest.raises(MCPError) as complete:
            await client.complete(ResourceTemplateReference(uri=ISSUE_TEMPLATE),
                                  argument={"name": "repo", "value": "r"},
                                  context_arguments={"owner": OWNER})
    for info in (read, complete):
        assert info.value.error.code == INTERNAL_ERROR
        assert info.value.error.message == INTERNAL_MESSAGE
        assert "internal detail" not in json.dumps(info.value.error.model_dump(mode="json"))
    lines = json_lines(capsys.readouterr().err)
    crashed = [e for e in lines if e["event"] in ("resource_crashed", "completion_crashed")]
    assert len(crashed) == 2 and all("UnicodeEncodeError" in e["exc"] for e in crashed)
    assert {e["request_id"] for e in crashed} == {read.value.error.data["request_id"],
                                                  complete.value.error.data["request_id"]}


async def test_unknown_tool_is_json_rpc_invalid_params(fake: FakeGitHub) -> None:
    async with Client(server_for(fake.asgi_transport()), mode="legacy", cache=None) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("github_delete_repository", {})
        with pytest.raises(MCPError) as odd:
            await client.call_tool("x" * 500 + "\u00e9", {})
    assert info.value.error.code == INVALID_PARAMS
    assert "github_delete_repository" in info.value.error.message
    assert odd.value.error.code == INVALID_PARAMS and "x" * 65 not in odd.value.error.message


async def test_every_log_line_of_a_call_names_the_caller(
    fake: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = b"log-test-secret"
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                              transport=fake.asgi_transport(), retry=RETRY)
    server = build_server(SERVER, Settings(token=TOKEN, server_secret=secret),
                          upstream=upstream, idempotency=IdempotencyRunner(MemoryStore()))
    capsys.readouterr()
    async with Client(server, mode="legacy", cache=None) as client:
        made = await client.call_tool("github_create_issue", GOOD_CALLS["github_create_issue"])
        await client.read_resource(ISSUE_URI)
        missing = await client.call_tool("github_get_issue",
                                         {**GOOD_CALLS["github_get_issue"], "issue_number": 99})
    assert not made.is_error and missing.is_error
    lines = json_lines(capsys.readouterr().err)
    expected = caller_id(identity_key(secret), TOKEN)
    assert expected.startswith("c_") and TOKEN not in json.dumps(lines)
    # tool_call, resource_read and every upstream request (the 404 repository probe included)
    assert {e["event"] for e in lines} >= {"tool_call", "resource_read", "upstream"}
    assert all(e.get("caller") == expected and e.get("request_id") for e in lines), lines


async def test_stdio_stderr_is_json_lines_even_with_a_malformed_token(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_TOKEN": MALFORMED["non-ASCII"],
           "GITHUB_API_URL": "http://127.0.0.1:9"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "github_issues_mcp"],
                                   env=env, cwd=str(ROOT))
    errlog = tmp_path / "stderr.log"
    with errlog.open("w") as err:
        async with Client(stdio_client(params, errlog=err), mode="legacy", cache=None) as client:
            tool = await client.call_tool("github_get_issue", GOOD_CALLS["github_get_issue"])
            with pytest.raises(MCPError) as read:
                await client.read_resource(ISSUE_URI)
            await client.complete(ResourceTemplateReference(uri=ISSUE_TEMPLATE),
                                  argument={"name": "repo", "value": ""},
                                  context_arguments={"owner": OWNER})
    assert tool.structured_content["code"] == "invalid_credential"
    assert read.value.error.data["machine_code"] == "invalid_credential"
    lines = json_lines(errlog.read_text())
    assert any(e["event"] == "config_warning" for e in lines)
    assert all(e.get("caller") for e in lines if e["event"] in ("tool_call", "resource_read"))
