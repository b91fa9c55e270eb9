"""Streamable HTTP through the official MCP client, both eras, against the fake GitHub over HTTP.

Each test runs against the console script (`github-issues-mcp --transport http`, a subprocess)
and against `http_app(...)` under uvicorn in a thread. No GITHUB_TOKEN is configured: every
request brings its own `Authorization: Bearer` credential (multi-tenant use).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.serving.app import Settings, http_app
from github_issues_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, ROOT
from tests.http.conftest import LOGIN_X, LOGIN_Y, TOKEN_X, TOKEN_Y
from tests.http.http_support import (
    SERVER_SECRET,
    asgi_in_thread,
    free_port,
    http_server_process,
    listening_addresses,
    mcp_client,
    server_env,
)

pytestmark = pytest.mark.anyio

MODES = [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
BASE = {"owner": OWNER, "repo": REPO}
PUBLISHED = json.loads((ROOT / "generated" / "github_issues_mcp" / "tools.json").read_text())
JSON_RPC = {"accept": "application/json, text/event-stream", "content-type": "application/json",
            "authorization": f"Bearer {TOKEN_X}"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "raw-http-test", "version": "0"}},
}


def published_names() -> list[str]:
    tools = PUBLISHED["tools"] if isinstance(PUBLISHED, Mapping) else PUBLISHED
    return [t["name"] for t in tools]


@pytest.fixture(params=["console-script", "asgi-in-thread"])
def endpoint(request: pytest.FixtureRequest, fake_url: str) -> Iterator[str]:
    """The MCP URL of a server with no GITHUB_TOKEN, started one of the two ways."""
    if request.param == "console-script":
        with http_server_process(server_env(fake_url), "--allowed-host", "mcp.example.com") as url:
            yield url
    else:
        settings = Settings(api_url=fake_url, server_secret=SERVER_SECRET.encode())
        app = http_app(SERVER, settings, host="127.0.0.1", allowed_hosts=["mcp.example.com"])
        with asgi_in_thread(app) as url:
            yield url


def author_of(fake: FakeGitHub, number: int) -> str:
    with fake.lock:
        repo = fake.state.find_repo(OWNER, REPO)
        assert repo is not None
        return repo.issues[number].author


def issues_titled(fake: FakeGitHub, title: str) -> list[int]:
    with fake.lock:
        repo = fake.state.find_repo(OWNER, REPO)
        assert repo is not None
        return [i.number for i in repo.issues.values() if i.title == title and not i.deleted]


@pytest.mark.parametrize(("mode", "version"), MODES)
async def test_every_tool_family_with_per_request_tokens(
    endpoint: str, fake: FakeGitHub, seeded: dict[str, Any], mode: str, version: str
) -> None:
    n = seeded["first"]
    seen: list[Mapping[str, str]] = []
    async with mcp_client(endpoint, TOKEN_X, mode, seen) as x:
        assert x.protocol_version == version
        listed = await x.list_tools()
        assert [t.name for t in listed.tools] == published_names()
        calls = [
            ("github_search_issues", {**BASE, "state": "all"}),
            ("github_search_issues", {"query": "crash", **BASE}),
            ("github_get_issue", {**BASE, "issue_number": n, "detail": "summary"}),
            ("github_list_labels", BASE),
            ("github_update_issue", {**BASE, "issue_number": n, "add_labels": ["wontfix"]}),
            ("github_add_comment", {**BASE, "issue_number": n, "body": f"hello over {mode}"}),
        ]
        for name, args in calls:
            result = await x.call_tool(name, args)
            assert not result.is_error, (name, result.structured_content)
            assert json.loads(result.content[0].text) == result.structured_content
        created_x = await x.call_tool("github_create_issue", {**BASE, "title": f"X via {mode}"})
        assert not created_x.is_error, created_x.structured_content
        missing = await x.call_tool("github_get_issue", {**BASE, "issue_number": 9999})
        assert missing.is_error and missing.structured_content["code"] == "issue_not_found"
    async with mcp_client(endpoint, TOKEN_Y, mode) as y:
        created_y = await y.call_tool("github_create_issue", {**BASE, "title": f"Y via {mode}"})
        assert not created_y.is_error, created_y.structured_content
    # one deployment, two users: each write is attributed to the caller's own token
    assert author_of(fake, created_x.structured_content["issue"]["issue_number"]) == LOGIN_X
    assert author_of(fake, created_y.structured_content["issue"]["issue_number"]) == LOGIN_Y
    with fake.lock:
        comment = fake.state.find_repo(OWNER, REPO).issues[n].comments[-1]  # type: ignore[union-attr]
        assert comment.author == LOGIN_X
    # stateless: no session id on any response, in either era
    assert seen and all("mcp-session-id" not in {k.lower() for k in h} for h in seen)


async def test_a_token_github_rejects_is_a_tool_error_not_a_crash(
    endpoint: str, fake: FakeGitHub
) -> None:
    bad = "ghp_notarealtoken0000000000000000000000"
    async with mcp_client(endpoint, bad, "auto") as wrong:
        result = await wrong.call_tool("github_list_labels", BASE)
    assert result.is_error and result.structured_content["code"] == "invalid_credential"
    assert bad not in json.dumps(result.structured_content) + result.content[0].text


@pytest.mark.parametrize(("mode", "version"), MODES)
async def test_cursors_and_idempotency_keys_are_scoped_to_the_caller(
    endpoint: str, fake: FakeGitHub, seeded: dict[str, Any], mode: str, version: str
) -> None:
    n = seeded["first"]
    title = f"Scoped create {mode}"
    create = {**BASE, "title": title, "idempotency_key": f"scoped-{mode}"}
    async with mcp_client(endpoint, TOKEN_X, mode) as x, mcp_client(endpoint, TOKEN_Y, mode) as y:
        first = await x.call_tool("github_get_issue", {**BASE, "issue_number": n})
        cursor = first.structured_content["comments_next_cursor"]
        mine = await x.call_tool("github_get_issue",
                                 {**BASE, "issue_number": n, "comments_cursor": cursor})
        assert not mine.is_error and mine.structured_content["comments"]
        theirs = await y.call_tool("github_get_issue",
                                   {**BASE, "issue_number": n, "comments_cursor": cursor})
        assert theirs.is_error, theirs.structured_content
        env = theirs.structured_content
        assert env["code"] == "invalid_field"
        assert env["details"]["field"] == "comments_cursor"
        assert env["repair"]["next_step"] == "restart_without_cursor"

        made_x = await x.call_tool("github_create_issue", create)
        again_x = await x.call_tool("github_create_issue", create)
        made_y = await y.call_tool("github_create_issue", create)
    assert not (made_x.is_error or again_x.is_error or made_y.is_error)
    nx, ny = made_x.structured_content["issue"]["issue_number"], made_y.structured_content["issue"]["issue_number"]
    assert again_x.structured_content["issue"]["issue_number"] == nx  # X's retry is deduplicated
    assert ny != nx  # Y's identical key creates Y's own issue, never sees X's result
    assert sorted(issues_titled(fake, title)) == sorted([nx, ny])
    assert (author_of(fake, nx), author_of(fake, ny)) == (LOGIN_X, LOGIN_Y)


async def test_dns_rebinding_protection(endpoint: str) -> None:
    async with httpx.AsyncClient(timeout=10) as raw:
        evil = await raw.post(endpoint, json=LIST_TOOLS, headers={**JSON_RPC, "host": "evil.example"})
        assert evil.status_code == 421
        admitted = await raw.post(endpoint, json=INITIALIZE,
                                  headers={**JSON_RPC, "host": "mcp.example.com"})
        assert admitted.status_code == 200, admitted.text
        local = await raw.post(endpoint, json=INITIALIZE, headers=JSON_RPC)
        assert local.status_code == 200
        bad_origin = await raw.post(endpoint, json=INITIALIZE,
                                    headers={**JSON_RPC, "origin": "http://evil.example"})
        assert bad_origin.status_code == 403
        ok_origin = await raw.post(endpoint, json=INITIALIZE,
                                   headers={**JSON_RPC, "origin": "http://localhost:3000"})
        assert ok_origin.status_code == 200


async def test_stateless_json_responses(endpoint: str) -> None:
    async with httpx.AsyncClient(timeout=10) as raw:
        init = await raw.post(endpoint, json=INITIALIZE, headers=JSON_RPC)
        assert init.status_code == 200
        assert init.headers["content-type"].startswith("application/json")
        assert "mcp-session-id" not in init.headers
        assert init.json()["result"]["protocolVersion"] == "2025-11-25"
        # no session: a later request needs nothing from the first one
        listed = await raw.post(endpoint, json=LIST_TOOLS,
                                headers={**JSON_RPC, "mcp-protocol-version": "2025-11-25"})
        assert listed.status_code == 200 and "mcp-session-id" not in listed.headers
        assert [t["name"] for t in listed.json()["result"]["tools"]] == published_names()


def test_console_script_binds_loopback_by_default_and_admits_allowed_hosts(fake_url: str) -> None:
    port = free_port()
    with http_server_process(server_env(fake_url), port=port) as url:
        assert listening_addresses(port) == ["127.0.0.1"]
        body = json.dumps(INITIALIZE)
        with httpx.Client(timeout=10) as raw:
            assert raw.post(url, content=body, headers={**JSON_RPC, "host": "mcp.example.com"}
                            ).status_code == 421
    port = free_port()
    with http_server_process(server_env(fake_url), "--allowed-host", "mcp.example.com",
                             "--allowed-origin", "https://app.example.com", port=port) as url:
        assert listening_addresses(port) == ["127.0.0.1"]
        with httpx.Client(timeout=10) as raw:
            assert raw.post(url, content=body, headers={**JSON_RPC, "host": "mcp.example.com"}
                            ).status_code == 200
            assert raw.post(url, content=body, headers={**JSON_RPC, "host": "evil.example"}
                            ).status_code == 421
            assert raw.post(url, content=body, headers={**JSON_RPC, "origin": "https://app.example.com"}
                            ).status_code == 200
            assert raw.post(url, content=body, headers={**JSON_RPC, "origin": "https://evil.example"}
                            ).status_code == 403


@pytest.mark.parametrize(("mode", "version"), MODES)
async def test_resources_over_http_use_the_callers_token(
    endpoint: str, seeded: dict[str, Any], mode: str, version: str
) -> None:
    from mcp import MCPError

    from github_issues_mcp import SERVER as spec

    n = seeded["first"]
    issue_uri = f"ghissues://repos/{OWNER}/{REPO}/issues/{n}"
    async with mcp_client(endpoint, TOKEN_X, mode) as x:
        listed = await x.list_resources()
        assert [str(r.uri) for r in listed.resources] == [r.uri for r in spec.resources]
        templates = await x.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == [
            t.uri_template for t in spec.templates]
        summary = await x.read_resource("ghissues://server/summary")
        assert spec.fingerprint in summary.contents[0].text  # type: ignore[union-attr]
        issue = await x.read_resource(issue_uri)
        assert json.loads(issue.contents[0].text)  # type: ignore[union-attr]
    async with mcp_client(endpoint, "ghp_notarealtoken0000000000000000000000", mode) as wrong:
        with pytest.raises(MCPError) as info:
            await wrong.read_resource(issue_uri)
    assert info.value.error.data["machine_code"] == "invalid_credential"
