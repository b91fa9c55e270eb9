"""Discovery surface: summary and error-catalog resources, templates, completions, resource errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import ResourceTemplateReference

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, in_memory_server

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]
INDEX = "ghissues://repos/{owner}/{repo}/issues{?state,labels,page}"
ROOT = f"ghissues://repos/{OWNER}/{REPO}"


async def read_json(client: Client, uri: str) -> dict[str, Any]:
    result = await client.read_resource(uri)
    assert result.contents[0].mime_type == "application/json"
    data: dict[str, Any] = json.loads(result.contents[0].text)  # type: ignore[union-attr]
    return data


@pytest.mark.parametrize("mode", MODES)
async def test_summary_and_catalog_agree_with_discovery(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        assert client.server_info is not None and client.server_info.description is not None
        fingerprint = client.server_info.description.rsplit(" ", 1)[-1]
        assert fingerprint.startswith("github-issues-mcp@0.1.0+")
        assert client.instructions is not None and fingerprint in client.instructions
        listed = await client.list_resources()
        assert [r.uri for r in listed.resources] == ["ghissues://server/summary", "ghissues://server/errors"]
        assert all(r.title and r.description and r.mime_type for r in listed.resources)
        summary = (await client.read_resource("ghissues://server/summary")).contents[0]
        assert summary.mime_type == "text/markdown" and fingerprint in summary.text  # type: ignore[union-attr]
        assert "Does not:" in summary.text  # type: ignore[union-attr]
        catalog = await read_json(client, "ghissues://server/errors")
        tools = {t.name for t in (await client.list_tools()).tools}
        failing = await client.call_tool("github_get_issue", {"owner": OWNER, "repo": REPO, "issue_number": 999})
    assert catalog["fingerprint"] == fingerprint
    assert failing.structured_content["fingerprint"] == fingerprint
    codes = {c["code"]: c for c in catalog["codes"]}
    assert {"rate_limited", "cursor_expired", "conflict", "label_not_found"} <= set(codes)
    assert codes["rate_limited"]["temporary"] is True
    assert all(set(c["tools"]) <= tools and c["tools"] for c in catalog["codes"])
    assert catalog["envelope_schema"]["required"] == ["code", "message", "temporary", "retry_after_ms",
                                                      "request_id"]


@pytest.mark.parametrize("mode", MODES)
async def test_templates_are_complete_and_each_is_reachable_through_a_tool(fake: FakeGitHub, mode: str) -> None:
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        first = await client.list_resource_templates()
        second = await client.list_resource_templates()
        tools = {t.name for t in (await client.list_tools()).tools}
        summary = (await client.read_resource("ghissues://server/summary")).contents[0].text  # type: ignore[union-attr]
    assert first == second
    templates = first.resource_templates
    assert templates[0].uri_template == INDEX
    for template in templates:
        assert template.name and template.title and template.description and template.mime_type
        line = next(line for line in summary.splitlines() if template.uri_template in line)
        assert line.split("Same content through `")[1].split("`")[0] in tools


async def test_issue_index_carries_triage_metadata_only(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        index = await read_json(client, f"{ROOT}/issues?state=all&labels=bug")
        result = await client.read_resource(f"{ROOT}/issues")
    assert sorted(i["title"] for i in index["issues"]) == ["Crash on empty config", "Old bug"]
    assert all("body" not in i and "preview" not in i for i in index["issues"])
    assert result.ttl_ms == 15000 and result.cache_scope == "private"


async def test_issue_and_comment_chunks_link_to_each_other(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    n = seeded["first"]
    async with Client(in_memory_server(fake), cache=None) as client:
        issue = await read_json(client, f"{ROOT}/issues/{n}")
        tool = await client.call_tool("github_get_issue", {"owner": OWNER, "repo": REPO, "issue_number": n})
        bodies: list[str] = []
        uri: str | None = issue["comments"]
        while uri:
            chunk = await read_json(client, uri)
            bodies += [c["body"] for c in chunk["comments"]]
            uri = chunk.get("next")
        again = await read_json(client, f"{ROOT}/issues/{n}/comments?page=2")
    assert issue["version"] == tool.structured_content["version"]
    assert bodies == [f"comment {i}" for i in range(35)]
    assert [c["body"] for c in again["comments"]] == bodies[30:]


async def test_labels_collection_is_bounded_and_points_at_the_tool(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        page = await read_json(client, f"{ROOT}/labels?limit=2")
        whole = await read_json(client, f"{ROOT}/labels")
        with pytest.raises(MCPError) as too_many:
            await client.read_resource(f"{ROOT}/labels?limit=500")
    assert len(page["labels"]) == 2 and page["truncated"]["enumerate_with"] == "github_list_labels"
    assert page["next"] == f"{ROOT}/labels?page=2&limit=2"
    assert len(whole["labels"]) == 5 and "truncated" not in whole
    assert too_many.value.error.code == -32602
    assert too_many.value.error.data["details"]["field"] == "uri"


@pytest.mark.parametrize(("uri", "machine_code"), [
    ("ghissues://nowhere/at/all", "invalid_field"),
    (f"{ROOT}/issues/999", "issue_not_found"),
    ("ghissues://repos/octo-org/missing/issues/1", "repo_not_found"),
    ("ghissues://repos/bad owner!/x/issues", "invalid_field"),
])
async def test_resource_failures_carry_the_renamed_envelope(
    fake: FakeGitHub, seeded: dict[str, Any], uri: str, machine_code: str
) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        with pytest.raises(MCPError) as failure:
            await client.read_resource(uri)
    error = failure.value.error
    assert error.code == -32602
    data = error.data
    assert data["machine_code"] == machine_code and "code" not in data and "message" not in data
    assert data["human_message"] and data["temporary"] is False and data["retry_after_ms"] is None
    assert data["details"]["field"] == "uri" and data["resource_uri"] == uri


async def test_resource_reads_need_a_credential_like_tools(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake, token=None), cache=None) as client:
        with pytest.raises(MCPError) as failure:
            await client.read_resource(f"{ROOT}/issues")
        summary = await client.read_resource("ghissues://server/summary")
    assert failure.value.error.data["machine_code"] == "missing_credential"
    assert summary.contents


async def test_completion_offers_owners_repositories_and_labels(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_repo("octocat", "dotfiles")
    ref = ResourceTemplateReference(uri=INDEX)
    async with Client(in_memory_server(fake), cache=None) as client:
        owners = await client.complete(ref, argument={"name": "owner", "value": "oc"})
        repos = await client.complete(ref, argument={"name": "repo", "value": ""},
                                      context_arguments={"owner": OWNER})
        labels = await client.complete(ref, argument={"name": "labels", "value": "g"},
                                       context_arguments={"owner": OWNER, "repo": REPO})
    assert owners.completion.values == ["octo-org", "octocat"]
    assert repos.completion.values == [REPO]
    assert labels.completion.values == ["good first issue"]


async def test_one_label_resource(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        label = await read_json(client, f"{ROOT}/labels/good%20first%20issue")
        with pytest.raises(MCPError) as missing:
            await client.read_resource(f"{ROOT}/labels/no-such-label")
        names = await client.complete(ResourceTemplateReference(uri="ghissues://repos/{owner}/{repo}/labels/{name}"),
                                      argument={"name": "name", "value": "tri"},
                                      context_arguments={"owner": OWNER, "repo": REPO})
    assert label == {"label": {"name": "good first issue", "color": "ededed", "description": None}}
    data = missing.value.error.data
    assert data["machine_code"] == "label_not_found" and data["details"]["field"] == "uri"
    assert "no-such-label" not in json.dumps(data["details"]) + data["human_message"]
    assert names.completion.values == ["triage"]
