"""Opt-in: forgejo-mcp (every toolset: labels and issues) against a real Forgejo, over stdio, both
protocol eras.

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
    return StdioServerParameters(command=sys.executable, args=["-m", "forgejo_mcp", "--toolsets", "all"],
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


def raw(path: str, method: str = "POST", **kw: Any) -> Any:
    with httpx.Client(base_url=f"{URL}/api/v1", headers={"Authorization": f"token {TOKEN}"}, timeout=30) as api:
        resp = api.request(method, path, **kw)
        resp.raise_for_status()
        return resp.json() if resp.content else None


async def test_issue_lifecycle_by_name(client: Client, forgejo: dict[str, str]) -> None:
    """Every issue tool against the real thing: labels, milestone and assignee by name on create,
    the filters, the thread, labels added and removed by name in one update, the milestone
    cleared (Forgejo's 0), the version check, idempotent comments."""
    where = {"owner": forgejo["org"], "repo": forgejo["repo"]}
    repo = f"/repos/{forgejo['org']}/{forgejo['repo']}"
    tag = secrets.token_hex(2)
    for name in (f"bug-{tag}", f"docs-{tag}", f"triage-{tag}"):
        raw(f"{repo}/labels", json={"name": name, "color": "#d73a4a"})
    milestone = raw(f"{repo}/milestones", json={"title": f"v1-{tag}"})
    made = await call(client, "forgejo_create_issue", {
        **where, "title": f"Crash {tag}", "body": "Steps", "labels": [f"bug-{tag}", f"triage-{tag}"],
        "milestone": f"v1-{tag}", "assignee_logins": [forgejo["login"]], "idempotency_key": f"real-{tag}-1"})
    issue = made["issue"]
    assert sorted(issue["labels"]) == [f"bug-{tag}", f"triage-{tag}"] and issue["assignees"] == [forgejo["login"]]
    assert issue["milestone"] == {"id": milestone["id"], "title": f"v1-{tag}"} and "ignored_fields" not in made
    again = await call(client, "forgejo_create_issue", {
        **where, "title": f"Crash {tag}", "body": "Steps", "labels": [f"bug-{tag}", f"triage-{tag}"],
        "milestone": f"v1-{tag}", "assignee_logins": [forgejo["login"]], "idempotency_key": f"real-{tag}-1"})
    assert again["issue"]["issue_number"] == issue["issue_number"]
    unknown = await call(client, "forgejo_create_issue", {**where, "title": "x", "labels": ["no-such-label"]})
    assert unknown["code"] == "label_not_found" and unknown["details"]["unknown"] == ["labels[0]"]

    number = issue["issue_number"]
    for args in ({"labels": [f"bug-{tag}", f"triage-{tag}"]}, {"milestones": [f"v1-{tag}"]},
                 {"creator_login": forgejo["login"]}, {"assignee_login": forgejo["login"]}):
        found = await call(client, "forgejo_search_issues", {**where, **args})
        assert number in [row["issue_number"] for row in found["issues"]], args
    refused = await call(client, "forgejo_search_issues", {**where, "labels": ["no-such-label"]})
    assert refused["code"] == "label_not_found"

    commented = await call(client, "forgejo_add_comment", {**where, "issue_number": number, "body": "On it.",
                                                           "idempotency_key": f"real-{tag}-2"})
    repeat = await call(client, "forgejo_add_comment", {**where, "issue_number": number, "body": "On it.",
                                                        "idempotency_key": f"real-{tag}-2"})
    assert repeat["comment"]["comment_id"] == commented["comment"]["comment_id"]
    read = await call(client, "forgejo_get_issue", {**where, "issue_number": number})
    assert [c["body"] for c in read["comments"]] == ["On it."]

    updated = await call(client, "forgejo_update_issue", {
        **where, "issue_number": number, "add_labels": [f"docs-{tag}"], "remove_labels": [f"triage-{tag}"],
        "milestone": None, "expected_version": read["version"]})
    assert updated["changed_fields"] == ["milestone", "labels"], updated
    assert sorted(updated["issue"]["labels"]) == [f"bug-{tag}", f"docs-{tag}"] and updated["issue"]["milestone"] is None
    stale = await call(client, "forgejo_update_issue", {**where, "issue_number": number, "state": "closed",
                                                        "expected_version": read["version"]})
    assert stale["code"] == "conflict"
    closed = await call(client, "forgejo_update_issue", {**where, "issue_number": number, "state": "closed",
                                                         "assignee_logins": []})
    assert closed["issue"]["state"] == "closed" and closed["issue"]["assignees"] == []
    assert raw(f"{repo}/issues/{number}", "GET")["milestone"] is None
