"""forgejo-labels-mcp's resources (D6-D8) in both protocol eras; the console script over a real
stdio pipe; streamable HTTP with each caller's own token; --read-only and toolsets."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from fakeforgejo import FakeForgejo
from forgejo_labels_mcp import SERVER
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, http_app
from tests.forgejo.forgejo_support import (
    MEMBER_TOKEN,
    ORG,
    OWNER_TOKEN,
    REPO,
    in_memory_server,
    stdio_params,
)
from tests.http.http_support import asgi_in_thread, mcp_client

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]
LABELS = f"forgejo://repo/{ORG}/{REPO}/labels"


async def read_json(client: Client, uri: str) -> Any:
    result = await client.read_resource(uri)
    assert result.contents[0].mime_type == "application/json"
    return json.loads(result.contents[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_label_resources(fake: FakeForgejo, ids: dict[str, int], mode: str) -> None:
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        templates = {t.uri_template: t for t in (await client.list_resource_templates()).resource_templates}
        assert set(templates) == {"forgejo://repo/{owner}/{repo}/label/{label_id}",
                                  "forgejo://repo/{owner}/{repo}/labels{?page,limit}",
                                  "forgejo://org/{org}/labels{?page,limit}"}
        one = await read_json(client, f"forgejo://repo/{ORG}/{REPO}/label/{ids['bug']}")
        assert one["label"]["name"] == "bug" and one["label"]["color"] == "d73a4a"

        page = await read_json(client, f"{LABELS}?limit=2")
        assert [row["name"] for row in page["labels"]] == ["bug", "docs"]
        assert page["truncated"] == {"reason": "more labels exist than this page holds",
                                     "enumerate_with": "forgejo_list_repo_labels"}
        assert page["next"] == f"{LABELS}?page=2&limit=2"
        rest = await read_json(client, page["next"])
        assert [row["name"] for row in rest["labels"]] == ["legacy"] and "truncated" not in rest
        whole = await read_json(client, LABELS)  # the default page holds all three: no sentinel
        assert len(whole["labels"]) == 3 and "truncated" not in whole and "next" not in whole
        org = await read_json(client, f"forgejo://org/{ORG}/labels?limit=1")
        assert org["labels"][0]["name"] == "security" and org["truncated"]["enumerate_with"] == "forgejo_list_org_labels"

        for uri in (f"forgejo://repo/{ORG}/{REPO}/label/bug",    # a non-numeric id
                    f"forgejo://label/{ids['bug']}",            # no repository: no such resource
                    f"{LABELS}?limit=51", f"{LABELS}?limit=0"):  # outside 1..50
            with pytest.raises(MCPError) as info:
                await client.read_resource(uri)
            assert info.value.error.code == INVALID_PARAMS, uri
        with pytest.raises(MCPError) as info:
            await client.read_resource(f"forgejo://repo/{ORG}/{REPO}/label/999999")
        assert info.value.error.data["machine_code"] == "label_not_found"
    assert [r.query for r in fake.calls("issueListLabels")][:2] == [{"limit": "2", "page": "1"},
                                                                   {"limit": "2", "page": "2"}]


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_every_tool_over_stdio(fake: FakeForgejo, ids: dict[str, int], mode: str, version: str) -> None:
    where = {"owner": ORG, "repo": REPO}
    with fake.serve() as url:
        async with Client(stdio_params(url, OWNER_TOKEN, "--allowed-host", "127.0.0.1"), mode=mode,
                          cache=None) as client:
            assert client.protocol_version == version
            assert client.server_info is not None and client.server_info.name == "forgejo-labels-mcp"
            assert client.instructions and "Does not:" in client.instructions
            assert len((await client.list_tools()).tools) == 10
            made = await client.call_tool("forgejo_create_repo_label", {**where, "name": "stdio", "color": "123456"})
            label_id = made.structured_content["label"]["label_id"]
            calls = [
                ("forgejo_list_repo_labels", where),
                ("forgejo_get_repo_label", {**where, "label_id": label_id}),
                ("forgejo_edit_repo_label", {**where, "label_id": label_id, "description": "over stdio"}),
                ("forgejo_delete_repo_label", {**where, "label_id": label_id}),
                ("forgejo_list_org_labels", {"org": ORG}),
                ("forgejo_get_org_label", {"org": ORG, "label_id": ids["priority"]}),
                ("forgejo_create_org_label", {"org": ORG, "name": "stdio", "color": "654321"}),
                ("forgejo_edit_org_label", {"org": ORG, "label_id": ids["priority"], "color": "000000"}),
                ("forgejo_delete_org_label", {"org": ORG, "label_id": ids["priority"]}),
            ]
            for name, args in calls:
                result = await client.call_tool(name, args)
                assert not result.is_error, (name, result.structured_content)
            missing = await client.call_tool("forgejo_get_org_label", {"org": ORG, "label_id": 999999})
            assert missing.is_error and missing.structured_content["code"] == "label_not_found"


def test_without_forgejo_api_url_the_server_refuses_to_start() -> None:
    """No default instance: a token must never reach a host the operator did not name."""
    params = stdio_params("https://unused.example")
    env = {k: v for k, v in (params.env or {}).items() if k != "FORGEJO_API_URL"}
    done = subprocess.run([params.command, *params.args], env=env, cwd=params.cwd, input="",
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "FORGEJO_API_URL is not set" in done.stderr


async def test_http_uses_each_callers_own_token(fake: FakeForgejo, ids: dict[str, int]) -> None:
    with fake.serve() as url:
        settings = Settings(api_url=f"{url}/api/v1", server_secret=b"forgejo-http-tests")
        with asgi_in_thread(http_app(SERVER, settings)) as endpoint:
            async with mcp_client(endpoint, OWNER_TOKEN) as owner:
                made = await owner.call_tool("forgejo_create_org_label", {"org": ORG, "name": "http", "color": "abcdef"})
                assert not made.is_error, made.structured_content
            async with mcp_client(endpoint, MEMBER_TOKEN) as member:
                refused = await member.call_tool("forgejo_create_org_label", {"org": ORG, "name": "h2", "color": "abcdef"})
                assert refused.structured_content["code"] == "insufficient_scope"
                assert refused.structured_content["details"]["required_scopes"] == ["write:organization"]
                listed = await member.call_tool("forgejo_list_repo_labels", {"owner": ORG, "repo": "vault"})
                assert listed.structured_content["code"] == "repo_not_found"  # private: bob cannot see it
            async with httpx.AsyncClient() as raw:  # no token: 401 and the RFC 9728 challenge
                denied = await raw.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert denied.status_code == 401 and "resource_metadata" in denied.headers["www-authenticate"]


@pytest.mark.parametrize(("flags", "expected"), [
    (ExposureFlags(read_only=True), {"forgejo_list_repo_labels", "forgejo_get_repo_label",
                                     "forgejo_list_org_labels", "forgejo_get_org_label"}),
    (ExposureFlags(toolsets=("org_labels",)), {"forgejo_list_org_labels", "forgejo_get_org_label",
                                               "forgejo_create_org_label", "forgejo_edit_org_label",
                                               "forgejo_delete_org_label"}),
])
async def test_exposure_narrows_the_surface(fake: FakeForgejo, ids: dict[str, int], flags: ExposureFlags,
                                            expected: set[str]) -> None:
    async with Client(in_memory_server(fake, exposure=flags), cache=None) as client:
        assert {t.name for t in (await client.list_tools()).tools} == expected
        summary = (await client.read_resource("forgejo://server/summary")).contents[0].text  # type: ignore[union-attr]
        if flags.read_only:
            assert "Read-only: no tool here writes to Forgejo." in summary
        with pytest.raises(MCPError):
            await client.call_tool("forgejo_delete_repo_label", {"owner": ORG, "repo": REPO, "label_id": ids["bug"]})
    assert fake.calls("issueDeleteLabel") == []
