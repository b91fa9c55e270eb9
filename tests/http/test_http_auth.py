"""MCP authorization over streamable HTTP: the probes of the security review, as tests.

A server started with the operator's GITHUB_TOKEN in its environment must never act with it for
an HTTP caller (unless the operator opts in on loopback): a request without a usable bearer
token is HTTP 401 with an RFC 9728 challenge, and GitHub sees nothing.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.serving.app import Settings, http_app
from github_issues_mcp import SERVER
from tests.functional.conftest import OWNER, REPO
from tests.http.conftest import LOGIN_X, LOGIN_Y, TOKEN_X, TOKEN_Y
from tests.http.http_support import (
    SERVER_SECRET,
    asgi_in_thread,
    console_script,
    free_port,
    http_server_process,
    mcp_client,
    server_env,
)

pytestmark = pytest.mark.anyio

OPERATOR = TOKEN_X  # the operator's GITHUB_TOKEN in the server's environment
JSON_RPC = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
BASE = {"owner": OWNER, "repo": REPO}
TEMPLATE = "ghissues://repos/{owner}/{repo}/issues/{issue_number}"
# the review's requests: a write, a private read, a resource read and a completion
PROBES = [
    ("tools/call", {"name": "github_create_issue", "arguments": {**BASE, "title": "pwned"}}),
    ("tools/call", {"name": "github_search_issues", "arguments": {**BASE, "state": "all"}}),
    ("resources/read", {"uri": f"ghissues://repos/{OWNER}/{REPO}/issues/1"}),
    ("completion/complete", {"ref": {"type": "ref/resource", "uri": TEMPLATE},
                             "argument": {"name": "repo", "value": ""},
                             "context": {"arguments": {"owner": OWNER}}}),
    ("tools/list", {}),
]
UNUSABLE = {
    "no Authorization": None,
    "Basic": "Basic b2N0b2NhdDpzZWNyZXQ=",
    "empty Bearer": "Bearer",  # what a server sees of "Bearer " (trailing space is OWS)
    "Bearer with a space inside": "Bearer ghp_abc def",
    "Bearer with non-ASCII": "Bearer ghp_t\u00f6ken0000000000000000000000000000000",
}


def rpc(method: str, params: dict[str, Any], id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def metadata_url(endpoint: str) -> str:
    return endpoint.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")


@pytest.fixture
def operator_endpoint(fake_url: str) -> Iterator[str]:
    """The console script with the operator's GITHUB_TOKEN set, no opt-in."""
    with http_server_process(server_env(fake_url, GITHUB_TOKEN=OPERATOR)) as url:
        yield url


@pytest.mark.parametrize("authorization", list(UNUSABLE.values()), ids=list(UNUSABLE))
def test_no_usable_bearer_token_is_401_with_the_challenge_and_github_sees_nothing(
    operator_endpoint: str, fake: FakeGitHub, authorization: str | None
) -> None:
    headers = dict(JSON_RPC)
    if authorization is not None:
        headers["authorization"] = authorization
    with httpx.Client(timeout=10) as raw:
        for i, (method, params) in enumerate(PROBES):
            resp = raw.post(operator_endpoint, json=rpc(method, params, i),
                            headers={k: v.encode("latin-1") for k, v in headers.items()})
            assert resp.status_code == 401, (method, resp.status_code, resp.text)
            challenge = resp.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert f'resource_metadata="{metadata_url(operator_endpoint)}"' in challenge
            assert resp.json()["error"] == "invalid_token"
            assert "octocat" not in resp.text
    assert fake.calls() == []


def test_metadata_document_names_resource_authorization_server_and_scopes(
    operator_endpoint: str,
) -> None:
    with httpx.Client(timeout=10) as raw:
        challenge = raw.post(operator_endpoint, json=rpc("tools/list", {}), headers=JSON_RPC)
        url = challenge.headers["www-authenticate"].split('resource_metadata="')[1].rstrip('"')
        doc = raw.get(url)
        root = raw.get(operator_endpoint.replace("/mcp", "/.well-known/oauth-protected-resource"))
    assert doc.status_code == 200 and doc.headers["content-type"].startswith("application/json")
    meta = doc.json()
    assert meta["resource"] == operator_endpoint
    assert meta["authorization_servers"] == ["https://github.com/login/oauth"]
    assert meta["scopes_supported"] == ["repo", "public_repo"]
    assert meta["bearer_methods_supported"] == ["header"]
    assert root.status_code == 200 and root.json() == meta


def test_metadata_follows_public_url_and_github_enterprise(fake_url: str) -> None:
    enterprise = Settings(api_url="https://ghe.example.com/api/v3", server_secret=b"s",
                          public_url="https://mcp.example.com/mcp")
    custom = Settings(server_secret=b"s", authorization_server="https://sso.example.com/oauth")
    with httpx.Client(timeout=10) as raw:
        with asgi_in_thread(http_app(SERVER, enterprise)) as url:
            meta = raw.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
            challenge = raw.post(url, json=rpc("tools/list", {}), headers=JSON_RPC)
        with asgi_in_thread(http_app(SERVER, custom)) as url:
            other = raw.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
    assert meta["resource"] == "https://mcp.example.com/mcp"
    assert meta["authorization_servers"] == ["https://ghe.example.com/login/oauth"]
    assert ('resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
            in challenge.headers["www-authenticate"])
    assert other["authorization_servers"] == ["https://sso.example.com/oauth"]


def author_of(fake: FakeGitHub, number: int) -> str:
    with fake.lock:
        repo = fake.state.find_repo(OWNER, REPO)
        assert repo is not None
        return repo.issues[number].author


async def test_each_caller_acts_as_itself_with_the_operator_token_configured(
    operator_endpoint: str, fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    async with mcp_client(operator_endpoint, TOKEN_Y) as y:
        made = await y.call_tool("github_create_issue", {**BASE, "title": "as hubot"})
    assert not made.is_error, made.structured_content
    assert author_of(fake, made.structured_content["issue"]["issue_number"]) == LOGIN_Y


def test_get_is_refused_instead_of_holding_an_idle_stream(operator_endpoint: str) -> None:
    with httpx.Client(timeout=10) as raw:
        resp = raw.get(operator_endpoint, headers={"accept": "text/event-stream",
                                                   "authorization": f"Bearer {TOKEN_Y}"})
    assert resp.status_code == 405 and resp.headers["allow"] == "POST"


@pytest.mark.parametrize(("header", "value"), [
    ("host", "127.0.0.1:{port}.evil.example"),
    ("host", "localhost:{port}@evil.example"),
    ("host", "127.0.0.1:notaport"),
    ("host", "127.0.0.1.evil.example:{port}"),
    ("origin", "http://localhost:3000.evil.example"),
    ("origin", "http://127.0.0.1:{port}/path"),
    ("origin", "https://127.0.0.1:{port}"),
])
def test_host_and_origin_are_compared_exactly(
    operator_endpoint: str, header: str, value: str
) -> None:
    port = operator_endpoint.split(":")[2].split("/")[0]
    headers = {**JSON_RPC, "authorization": f"Bearer {TOKEN_Y}", header: value.format(port=port)}
    with httpx.Client(timeout=10) as raw:
        resp = raw.post(operator_endpoint, json=rpc("tools/list", {}), headers=headers)
    assert resp.status_code == (421 if header == "host" else 403), resp.text


# --- the operator's explicit opt-in ---------------------------------------------------------


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([console_script(), *args], env=env, capture_output=True, text=True,
                          timeout=60, check=False)


def test_allow_server_token_is_refused_off_loopback(fake_url: str) -> None:
    env = server_env(fake_url, GITHUB_TOKEN=OPERATOR)
    done = _run("--transport", "http", "--host", "0.0.0.0", "--port", str(free_port()),
                "--allow-server-token", env=env)
    assert done.returncode == 2 and "loopback" in done.stderr
    with pytest.raises(ValueError, match="loopback"):
        http_app(SERVER, Settings(token=OPERATOR), host="0.0.0.0", allow_server_token=True)


async def test_allow_server_token_on_loopback_lets_requests_without_authorization_act_as_operator(
    fake_url: str, fake: FakeGitHub
) -> None:
    env = server_env(fake_url, GITHUB_TOKEN=OPERATOR)
    with http_server_process(env, "--allow-server-token") as url:
        async with mcp_client(url, None) as anon:
            made = await anon.call_tool("github_create_issue", {**BASE, "title": "as operator"})
        assert not made.is_error, made.structured_content
        with httpx.Client(timeout=10) as raw:
            # a credential that is present but unusable is refused, never upgraded
            bad = raw.post(url, json=rpc("tools/list", {}),
                           headers={**JSON_RPC, "authorization": "Bearer"})
        assert bad.status_code == 401
    assert author_of(fake, made.structured_content["issue"]["issue_number"]) == LOGIN_X


def test_allow_server_token_logs_a_warning_line_at_start(fake_url: str) -> None:
    env = server_env(fake_url, GITHUB_TOKEN=OPERATOR)
    output: list[str] = []
    with http_server_process(env, "--allow-server-token", output=output) as url:
        httpx.post(url, json=rpc("tools/list", {}), headers=JSON_RPC, timeout=10)
    lines = [json.loads(line) for line in output if line.strip()]
    warnings = [e for e in lines if e.get("event") == "config_warning"]
    assert any("--allow-server-token" in e["reason"] for e in warnings), lines


# --- the upstream URL -----------------------------------------------------------------------


@pytest.mark.parametrize(("url", "opt_in", "refused"), [
    ("http://api.example.com", "", True),
    ("http://10.0.0.5:8080/api/v3", "", True),
    ("http://api.example.com", "1", False),
    ("http://127.0.0.1:9", "", False),
    ("http://localhost:9/api/v3", "", False),
    ("http://[::1]:9", "", False),
    ("https://ghe.example.com/api/v3", "", False),
    ("ftp://api.example.com", "1", True),
])
def test_plain_http_api_url_is_refused_unless_loopback_or_opted_in(
    url: str, opt_in: str, refused: bool
) -> None:
    settings = Settings.from_env({"GITHUB_API_URL": url, "GHMCP_ALLOW_INSECURE_API_URL": opt_in})
    if refused:
        with pytest.raises(ValueError, match="GITHUB_API_URL"):
            settings.check()
    else:
        settings.check()


def test_console_script_refuses_plain_http_api_url() -> None:
    env = {**server_env("http://api.example.com")}
    done = _run("--transport", "http", "--port", str(free_port()), env=env)
    assert done.returncode == 2 and "GITHUB_API_URL" in done.stderr
    assert "https://" in done.stderr


def test_redis_store_without_a_server_secret_is_refused_at_start(fake_url: str) -> None:
    env = {k: v for k, v in server_env(fake_url).items() if k != "GHMCP_SERVER_SECRET"}
    done = _run("--transport", "http", "--port", str(free_port()), "--idempotency-store",
                "redis://127.0.0.1:1/0", env=env)
    assert done.returncode == 2 and "GHMCP_SERVER_SECRET" in done.stderr


def test_settings_used_by_replicas_share_caller_identity() -> None:
    from ghmcp_runtime.guards.caller import caller_id, identity_key

    same = caller_id(identity_key(SERVER_SECRET.encode()), TOKEN_X)
    assert same == caller_id(identity_key(SERVER_SECRET.encode()), TOKEN_X)
    assert same != caller_id(identity_key(b"another deployment"), TOKEN_X)
