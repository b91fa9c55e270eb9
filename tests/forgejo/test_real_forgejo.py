"""Opt-in: forgejo-labels-mcp against a real Forgejo, over stdio, both protocol eras.

Skipped unless FORGEJO_URL (the instance's root, e.g. http://127.0.0.1:3000) and FORGEJO_TOKEN (a
token with the `all` scope, or write:issue, write:organization, write:repository, read:user) are
set. It creates a repository and an organisation of its own (named `mcp-test-<random>`) and
deletes both at the end. Start a throw-away instance (README, "Forgejo labels"):

    docker run --rm -d --name forgejo-mcp-test -p 127.0.0.1:3000:3000 \\
        -e FORGEJO__security__INSTALL_LOCK=true -e FORGEJO__database__DB_TYPE=sqlite3 \\
        codeberg.org/forgejo/forgejo:11.0.1
    docker exec -u git forgejo-mcp-test forgejo admin user create --admin --username tester \\
        --password tester-pass-1 --email tester@example.com --must-change-password=false
    export FORGEJO_URL=http://127.0.0.1:3000
    export FORGEJO_TOKEN=$(docker exec -u git forgejo-mcp-test forgejo admin user \\
        generate-access-token --username tester --token-name mcp --scopes all --raw)
    .venv/bin/python -m pytest -q tests/forgejo/test_real_forgejo.py

Written against Forgejo v11.0.1's documented API (spec/forgejo) and source; it is not run here.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from tests.forgejo.forgejo_support import ROOT

URL = os.environ.get("FORGEJO_URL", "").rstrip("/")
TOKEN = os.environ.get("FORGEJO_TOKEN", "")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not (URL and TOKEN), reason="set FORGEJO_URL and FORGEJO_TOKEN to run"),
]


@pytest.fixture(scope="module")
def forgejo() -> Iterator[dict[str, str]]:
    """An organisation with one repository, made for this run and deleted after it."""
    name = f"mcp-test-{secrets.token_hex(3)}"
    api = httpx.Client(base_url=f"{URL}/api/v1", headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    login = api.get("/user").raise_for_status().json()["login"]
    api.post("/orgs", json={"username": name, "visibility": "public"}).raise_for_status()
    api.post(f"/orgs/{name}/repos", json={"name": "board", "private": False}).raise_for_status()
    try:
        yield {"org": name, "repo": "board", "login": login}
    finally:
        api.delete(f"/repos/{name}/board")  # the repository first: an organisation with one stays
        api.delete(f"/orgs/{name}")
        api.close()


def server_params() -> StdioServerParameters:
    env = {"PATH": os.environ.get("PATH", ""), "FORGEJO_API_URL": f"{URL}/api/v1",
           "FORGEJO_TOKEN": TOKEN, "GHMCP_CURSOR_SECRET": "real-forgejo",
           "GHMCP_ALLOW_INSECURE_API_URL": "1"}  # a loopback test instance speaks plain http
    return StdioServerParameters(command=sys.executable, args=["-m", "forgejo_labels_mcp"],
                                 env=env, cwd=str(ROOT))


@pytest.fixture(params=[("auto", "2026-07-28"), ("legacy", "2025-11-25")], ids=["modern", "legacy"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    mode, version = request.param
    async with Client(server_params(), mode=mode, cache=None) as session:
        assert session.protocol_version == version
        yield session


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    data: dict[str, Any] = result.structured_content
    assert result.is_error == ("code" in data), data
    return data


async def test_forgejo_itself_expands_three_digit_colors(forgejo: dict[str, str]) -> None:
    """The design's open question, asked of the real thing: Forgejo accepts `#abc` (stored as
    #aabbcc); the server still refuses it (D3: six digits only, never a silent expansion)."""
    with httpx.Client(base_url=f"{URL}/api/v1", headers={"Authorization": f"token {TOKEN}"}) as api:
        made = api.post(f"/repos/{forgejo['org']}/{forgejo['repo']}/labels",
                        json={"name": f"short-{secrets.token_hex(2)}", "color": "#abc"})
        assert made.status_code == 201 and made.json()["color"] == "aabbcc"
        api.delete(f"/repos/{forgejo['org']}/{forgejo['repo']}/labels/{made.json()['id']}")


async def test_repository_label_lifecycle(client: Client, forgejo: dict[str, str]) -> None:
    where = {"owner": forgejo["org"], "repo": forgejo["repo"]}
    name = f"bug-{secrets.token_hex(2)}"
    refused = await call(client, "forgejo_create_repo_label", {**where, "name": name, "color": "#abc"})
    assert refused["code"] == "invalid_field" and refused["details"]["field"] == "color"
    made = (await call(client, "forgejo_create_repo_label", {**where, "name": name, "color": "D93F0B"}))["label"]
    assert made["color"] == "d93f0b" and made["name"] == name
    again = await call(client, "forgejo_create_repo_label", {**where, "name": name, "color": "d93f0b"})
    assert again["code"] == "label_exists"
    got = (await call(client, "forgejo_get_repo_label", {**where, "label_id": made["label_id"]}))["label"]
    assert got == made
    edited = await call(client, "forgejo_edit_repo_label", {**where, "label_id": made["label_id"], "color": "b60205"})
    assert edited["changed_fields"] == ["color"] and edited["label"]["description"] == made["description"]
    none = await call(client, "forgejo_edit_repo_label", {**where, "label_id": made["label_id"]})
    assert none["code"] == "invalid_field"
    with httpx.Client(base_url=f"{URL}/api/v1", headers={"Authorization": f"token {TOKEN}"}) as api:
        api.post(f"/repos/{forgejo['org']}/{forgejo['repo']}/issues",
                 json={"title": "carries the label", "labels": [made["label_id"]]}).raise_for_status()
    safe = await call(client, "forgejo_delete_repo_label", {**where, "label_id": made["label_id"]})
    assert safe["code"] == "label_in_use" and safe["details"]["count"] == 1
    gone = await call(client, "forgejo_delete_repo_label",
                      {**where, "label_id": made["label_id"], "delete_mode": "force"})
    assert gone["deleted_label"]["label_id"] == made["label_id"]
    missing = await call(client, "forgejo_get_repo_label", {**where, "label_id": made["label_id"]})
    assert missing["code"] == "label_not_found"


async def test_organisation_label_lifecycle(client: Client, forgejo: dict[str, str]) -> None:
    org = forgejo["org"]
    name = f"security-{secrets.token_hex(2)}"
    made = (await call(client, "forgejo_create_org_label", {"org": org, "name": name, "color": "ee0701"}))["label"]
    listed = await call(client, "forgejo_list_org_labels", {"org": org})
    assert made["label_id"] in [row["label_id"] for row in listed["labels"]]
    edited = await call(client, "forgejo_edit_org_label", {"org": org, "label_id": made["label_id"],
                                                           "description": "Security-relevant"})
    assert edited["changed_fields"] == ["description"]
    with httpx.Client(base_url=f"{URL}/api/v1", headers={"Authorization": f"token {TOKEN}"}) as api:
        api.post(f"/repos/{org}/{forgejo['repo']}/issues",
                 json={"title": "org label in use", "labels": [made["label_id"]]}).raise_for_status()
    safe = await call(client, "forgejo_delete_org_label", {"org": org, "label_id": made["label_id"]})
    assert safe["code"] == "label_in_use" and safe["details"]["count"] >= 1
    assert "The organisation has 1 repositories; those the token cannot read are not counted" in safe["message"]
    gone = await call(client, "forgejo_delete_org_label",
                      {"org": org, "label_id": made["label_id"], "delete_mode": "force"})
    assert gone["deleted_label"]["name"] == name
