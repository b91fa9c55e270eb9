"""Security review t14 (rounds 2 and 3): with --allow-server-token on loopback, a request carrying
`Proxy-Authorization` (and no proxy's forwarding header) acted as the operator. That header is
meant for a proxy, so a request bearing it is not this machine's own: it gets 401, like one
with a forwarding header, and nothing reaches GitHub with the operator's token."""

from __future__ import annotations

from typing import Any

import httpx

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO
from tests.http.conftest import TOKEN_X
from tests.http.http_support import http_server_process, server_env

JSON_RPC = {"accept": "application/json, text/event-stream", "content-type": "application/json",
            "mcp-protocol-version": "2025-06-18"}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "github_list_labels", "arguments": {"owner": OWNER, "repo": REPO}}}


def test_proxy_authorization_never_acts_as_the_operator(
    fake: FakeGitHub, fake_url: str, seeded: dict[str, Any]
) -> None:
    with http_server_process(server_env(fake_url, GITHUB_TOKEN=TOKEN_X), "--allow-server-token") as url:
        local = httpx.post(url, json=CALL, headers=JSON_RPC, timeout=10)
        before = len(fake.calls())
        proxied = httpx.post(url, json=CALL, timeout=10,
                             headers={**JSON_RPC, "proxy-authorization": "Basic dXNlcjpwYXNz"})
    assert local.status_code == 200 and "labels" in local.json()["result"]["structuredContent"]
    assert proxied.status_code == 401 and "resource_metadata" in proxied.headers["www-authenticate"]
    assert len(fake.calls()) == before
