"""Security review t4/t14: a duplicated X-MCP-* header took its last value, so a client could
relax a narrowing a gateway had added (`X-MCP-Readonly: true` then `false`). Each X-MCP-*
header may now be sent once; a second one is refused (-32602) before anything runs."""

from __future__ import annotations

import httpx
import pytest

from tests.http.conftest import TOKEN_X
from tests.http.http_support import http_server_process, server_env

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "github_list_labels", "arguments": {"owner": "octo-org", "repo": "roadmap"}}}
BASE = [(b"accept", b"application/json, text/event-stream"), (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {TOKEN_X}".encode())]




@pytest.mark.parametrize(("header", "values"), [
    ("X-MCP-Readonly", ("true", "false")), ("X-MCP-Toolsets", ("labels", "all")),
    ("X-MCP-Tools", ("github_list_labels", "github_delete_label")),
    ("X-MCP-Exclude-Tools", ("github_delete_label", "")), ("X-MCP-Repos", ("octo-org/roadmap", "*/*")),
    ("X-MCP-Lockdown", ("true", "false")),
])
def test_a_duplicated_exposure_header_is_refused(fake_url: str, header: str, values: tuple[str, str]) -> None:
    raw = [*BASE, *((header.encode(), v.encode()) for v in values)]
    with http_server_process(server_env(fake_url)) as url, httpx.Client(timeout=10) as client:
        for body in (LIST, CALL):
            answer = client.post(url, json=body, headers=httpx.Headers(raw)).json()
            assert answer["error"]["code"] == -32602, answer
            assert f"{header} was sent more than once" in answer["error"]["message"]
        once = client.post(url, json=LIST, headers=httpx.Headers([*BASE, (header.encode(), values[0].encode())]))
    assert "result" in once.json()
