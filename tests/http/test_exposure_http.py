"""Exposure controls over real HTTP on 127.0.0.1: X-MCP-* headers narrow each request within the
server's flags, never beyond them; lists that vary per request are cacheScope private.

Each test runs against the console script (a subprocess with command-line flags) and against
`http_app(...)` under uvicorn in a thread (flags through Settings)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import INVALID_PARAMS

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, http_app
from github_issues_mcp import SERVER
from tests.functional.conftest import OWNER, REPO
from tests.http.conftest import TOKEN_X
from tests.http.http_support import SERVER_SECRET, asgi_in_thread, http_server_process, server_env

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
BASE = {"owner": OWNER, "repo": REPO}
SECRET = {"owner": OWNER, "repo": "secret"}
ALL = sorted(t.name for t in SERVER.tools)
READS = ["github_get_issue", "github_list_labels", "github_search_issues"]
LABELS = ["github_create_label", "github_delete_label", "github_list_labels", "github_update_label"]
BOUNDED = ExposureFlags(read_only=True, repos=(f"{OWNER}/*",))
BOUNDED_ARGS = ("--read-only", "--repos", f"{OWNER}/*")


def client(url: str, mode: str = "auto", **headers: str) -> Client:
    sent = {"Authorization": f"Bearer {TOKEN_X}", **headers}
    http = httpx2.AsyncClient(headers=sent, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)


def start(request: pytest.FixtureRequest, fake_url: str, flags: ExposureFlags,
          args: tuple[str, ...]) -> Iterator[str]:
    if request.param == "console-script":
        with http_server_process(server_env(fake_url), *args) as url:
            yield url
    else:
        settings = Settings(api_url=fake_url, server_secret=SERVER_SECRET.encode(), exposure=flags)
        with asgi_in_thread(http_app(SERVER, settings, host="127.0.0.1")) as url:
            yield url


@pytest.fixture(params=["console-script", "asgi-in-thread"])
def open_endpoint(request: pytest.FixtureRequest, fake_url: str) -> Iterator[str]:
    """A server without exposure flags."""
    yield from start(request, fake_url, ExposureFlags(), ())


@pytest.fixture(params=["console-script", "asgi-in-thread"])
def bounded_endpoint(request: pytest.FixtureRequest, fake: FakeGitHub, fake_url: str) -> Iterator[str]:
    """A read-only server whose allowlist is every repository of octo-org."""
    fake.add_repo("someone-else", "thing")
    fake.add_repo(OWNER, "secret")
    yield from start(request, fake_url, BOUNDED, BOUNDED_ARGS)


def leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def names(listed: Any) -> list[str]:
    return sorted(t.name for t in listed.tools)


def fingerprint_of(c: Client) -> str:
    assert c.server_info is not None and c.server_info.description is not None
    return c.server_info.description.rsplit(" ", 1)[-1]


@pytest.mark.parametrize("mode", MODES)
async def test_headers_narrow_each_request_and_its_documents(open_endpoint: str, mode: str) -> None:
    async with client(open_endpoint, mode) as whole, \
            client(open_endpoint, mode, **{"X-MCP-Toolsets": "labels"}) as labels, \
            client(open_endpoint, mode, **{"X-MCP-Readonly": "true"}) as reads, \
            client(open_endpoint, mode, **{"X-MCP-Tools": "github_get_issue"}) as one:
        listed = {name: await c.list_tools() for name, c in
                  (("whole", whole), ("labels", labels), ("reads", reads), ("one", one))}
        with pytest.raises(MCPError) as hidden:
            await labels.call_tool("github_get_issue", {**BASE, "issue_number": 1})
        visible = await whole.call_tool("github_get_issue", {**BASE, "issue_number": 1})
        summary = (await labels.read_resource("ghissues://server/summary")).contents[0].text  # type: ignore[union-attr]
        templates = (await labels.list_resource_templates()).resource_templates
        fingerprints = [fingerprint_of(c) for c in (whole, labels, reads, one)]
        lists = [await whole.list_resources(), await whole.list_resource_templates(),
                 await labels.list_resources(), await labels.list_resource_templates()]
        summary_read = await whole.read_resource("ghissues://server/summary")
        instructions = labels.instructions or ""
    assert names(listed["whole"]) == ALL and names(listed["labels"]) == LABELS
    assert names(listed["reads"]) == READS and names(listed["one"]) == ["github_get_issue"]
    assert hidden.value.error.code == INVALID_PARAMS and not visible.is_error
    assert fingerprints[0] == SERVER.fingerprint and len(set(fingerprints)) == 4
    assert fingerprints[1] in instructions and f"`{fingerprints[1]}`" in summary
    assert "Tools here: github_create_label, github_delete_label, github_list_labels" in instructions
    assert [t.name for t in templates] == ["labels", "label"]
    if mode == "auto":  # 2026-07-28 results carry cache hints; every list here varies per request
        assert {r.cache_scope for r in [*listed.values(), *lists, summary_read]} == {"private"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_header_never_widens_the_servers_flags(
    bounded_endpoint: str, seeded: dict[str, Any], mode: str
) -> None:
    widen = {"X-MCP-Readonly": "false", "X-MCP-Toolsets": "all",
             "X-MCP-Tools": "github_create_issue,github_get_issue",
             "X-MCP-Repos": "someone-else/thing, octo-org/roadmap"}
    async with client(bounded_endpoint, mode) as plain, client(bounded_endpoint, mode, **widen) as wide:
        assert names(await plain.list_tools()) == READS
        assert names(await wide.list_tools()) == READS
        with pytest.raises(MCPError) as hidden:
            await wide.call_tool("github_create_issue", {**BASE, "title": "must not exist"})
        elsewhere = await wide.call_tool("github_list_labels", {"owner": "someone-else", "repo": "thing"})
        narrowed = await wide.call_tool("github_list_labels", SECRET)
        allowed_plain = await plain.call_tool("github_list_labels", SECRET)
        inside = await wide.call_tool("github_get_issue", {**BASE, "issue_number": seeded["first"]})
    assert hidden.value.error.code == INVALID_PARAMS
    for refused in (elsewhere, narrowed):
        assert refused.is_error and refused.structured_content["code"] == "repo_not_allowed"
    # the header narrowed octo-org/* to octo-org/roadmap; someone-else/thing stayed out
    assert narrowed.structured_content["details"]["allowed_repositories"] == [f"{OWNER}/{REPO}"]
    assert not allowed_plain.is_error and not inside.is_error


async def test_a_header_the_server_cannot_apply_is_invalid_params(open_endpoint: str) -> None:
    legacy = {"accept": "application/json, text/event-stream", "content-type": "application/json",
              "authorization": f"Bearer {TOKEN_X}", "mcp-protocol-version": "2025-11-25"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx.AsyncClient(timeout=10) as raw:
        bad = (await raw.post(open_endpoint, json=body,
                              headers={**legacy, "x-mcp-toolsets": "isues"})).json()
        good = (await raw.post(open_endpoint, json=body, headers=legacy)).json()
    assert bad["error"]["code"] == INVALID_PARAMS
    assert bad["error"]["message"].startswith("X-MCP-Toolsets: unknown name 'isues'; this server has")
    assert len(good["result"]["tools"]) == len(ALL)
    # the official client cannot even connect with it: discover and initialize refuse it too
    with pytest.raises(BaseException) as refused:
        async with client(open_endpoint, **{"X-MCP-Toolsets": "isues"}) as c:
            await c.list_tools()
    assert any(isinstance(e, MCPError) and e.error.code == INVALID_PARAMS and "'isues'" in e.error.message
               for e in leaves(refused.value))


async def test_discovery_is_private_and_describes_the_requests_surface(open_endpoint: str) -> None:
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
    base: Mapping[str, str] = {
        "accept": "application/json, text/event-stream", "content-type": "application/json",
        "authorization": f"Bearer {TOKEN_X}", "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}}
    async with httpx.AsyncClient(timeout=10) as raw:
        whole = (await raw.post(open_endpoint, json=body, headers=base)).json()["result"]
        narrowed = (await raw.post(open_endpoint, json=body,
                                   headers={**base, "x-mcp-readonly": "1"})).json()["result"]
    assert whole["cacheScope"] == narrowed["cacheScope"] == "private"
    assert whole["instructions"] == SERVER.instructions
    assert "Read-only: no tool here writes to GitHub." in narrowed["instructions"]
    stamped = narrowed["_meta"]["io.modelcontextprotocol/serverInfo"]["description"]
    assert stamped.rsplit(" ", 1)[-1] in narrowed["instructions"]
    assert stamped != whole["_meta"]["io.modelcontextprotocol/serverInfo"]["description"]
    assert json.dumps(narrowed).count("github_create_issue") == 0
    assert "tools" in whole["capabilities"] and "tools" in narrowed["capabilities"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_request_narrowed_to_nothing_advertises_no_tools(open_endpoint: str, mode: str) -> None:
    nothing = {"X-MCP-Toolsets": "labels", "X-MCP-Readonly": "true", "X-MCP-Exclude-Tools": "github_list_labels"}
    async with client(open_endpoint, mode, **nothing) as c, client(open_endpoint, mode) as whole:
        assert c.server_capabilities is not None and c.server_capabilities.tools is None
        assert (await c.list_tools()).tools == []
        assert "Tools here: none (0 of 10;" in (c.instructions or "")
        assert whole.server_capabilities is not None and whole.server_capabilities.tools is not None
