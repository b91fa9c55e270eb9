"""Security review t27: `--allow-server-token` was gated on the bind address only, so behind a
reverse proxy (`--allowed-host`) every request without Authorization acted as the operator. Now
any non-loopback name clients reach the server by refuses the flag at start, and a request
carrying a proxy's headers never acts with the operator's token."""

from __future__ import annotations

import subprocess

import httpx
import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.host_guard import server_token_refusal
from ghmcp_runtime.serving.app import Settings, http_app
from github_issues_mcp import SERVER
from tests.http.conftest import TOKEN_X
from tests.http.http_support import console_script, free_port, http_server_process, server_env

OPERATOR = TOKEN_X
JSON_RPC = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.mark.parametrize(("hosts", "origins", "public_url", "refused"), [
    ((), (), None, None),
    (("localhost:*", "127.0.0.1:8000", "[::1]"), ("http://127.0.0.1:3000",), "http://localhost:8000/mcp", None),
    (("mcp.example.com",), (), None, "--allowed-host"),
    (("mcp.example.com:*",), (), None, "--allowed-host"),
    (("10.0.0.5",), (), None, "--allowed-host"),
    ((), ("https://app.example.com",), None, "--allowed-origin"),
    ((), (), "https://mcp.example.com/mcp", "GHMCP_PUBLIC_URL"),
])
def test_a_name_beyond_loopback_refuses_the_operator_token(
    hosts: tuple[str, ...], origins: tuple[str, ...], public_url: str | None, refused: str | None
) -> None:
    reason = server_token_refusal("127.0.0.1", hosts, origins, public_url)
    assert (reason is None) == (refused is None)
    if refused is not None:
        assert reason is not None and refused in reason
        with pytest.raises(ValueError, match=refused):
            http_app(SERVER, Settings(token=OPERATOR, public_url=public_url), allowed_hosts=hosts,
                     allowed_origins=origins, allow_server_token=True)


def test_the_command_refuses_to_start_behind_an_allowed_host(fake_url: str) -> None:
    done = subprocess.run(
        [console_script(), "--transport", "http", "--port", str(free_port()), "--allow-server-token",
         "--allowed-host", "mcp.example.com", "--allowed-origin", "https://app.example.com"],
        env=server_env(fake_url, GITHUB_TOKEN=OPERATOR), capture_output=True, text=True, timeout=60,
        check=False)
    assert done.returncode == 2 and "--allowed-host" in done.stderr


@pytest.mark.parametrize("proxy", [{"x-forwarded-for": "203.0.113.9"}, {"forwarded": "for=203.0.113.9"},
                                   {"x-real-ip": "203.0.113.9"}, {"via": "1.1 proxy"}])
def test_a_request_through_a_proxy_never_acts_as_the_operator(
    fake_url: str, fake: FakeGitHub, proxy: dict[str, str]
) -> None:
    with http_server_process(server_env(fake_url, GITHUB_TOKEN=OPERATOR), "--allow-server-token") as url:
        local = httpx.post(url, json=LIST, headers=JSON_RPC, timeout=10)
        proxied = httpx.post(url, json=LIST, headers={**JSON_RPC, **proxy}, timeout=10)
    assert local.status_code == 200
    assert proxied.status_code == 401 and "resource_metadata" in proxied.headers["www-authenticate"]
