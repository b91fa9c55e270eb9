"""Oversized input over HTTP: the review's 3.9 MB `add_labels` probe is refused by the body limit
before it is parsed, one just under the limit by the size check before any element is
validated, and the largest legitimate call still fits."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, sent
from tests.http.conftest import TOKEN_X
from tests.http.http_support import http_server_process, server_env

JSON_RPC = {"accept": "application/json, text/event-stream", "content-type": "application/json",
            "mcp-protocol-version": "2025-11-25", "authorization": f"Bearer {TOKEN_X}"}
BASE = {"owner": OWNER, "repo": REPO}


def call(tool: str, arguments: dict[str, Any]) -> bytes:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}
    return json.dumps(body).encode()  # ", " separators, as the review's probe was sent


@pytest.fixture
def endpoint(fake_url: str) -> Iterator[str]:
    with http_server_process(server_env(fake_url)) as url:
        yield url


def test_body_over_the_limit_is_413_before_parsing(endpoint: str, fake: FakeGitHub) -> None:
    probe = call("github_update_issue", {**BASE, "issue_number": 1, "add_labels": [0] * 1_300_000})
    assert len(probe) > 3_900_000
    with httpx.Client(timeout=30) as raw:
        resp = raw.post(endpoint, content=probe, headers=JSON_RPC)
    assert resp.status_code == 413
    assert sent(fake) == []


def test_array_just_under_the_body_limit_is_refused_by_its_length(
    endpoint: str, fake: FakeGitHub
) -> None:
    probe = call("github_update_issue", {**BASE, "issue_number": 1, "add_labels": [0] * 340_000})
    assert 1_000_000 < len(probe) < 1024 * 1024
    with httpx.Client(timeout=30) as raw:
        resp = raw.post(endpoint, content=probe, headers=JSON_RPC)
    assert resp.status_code == 200, resp.text
    env = resp.json()["result"]["structuredContent"]
    assert env["code"] == "invalid_field"
    assert env["details"] == {"field": "add_labels", "reason": "must have at most 20 items"}
    assert sent(fake) == []


def test_the_largest_legitimate_body_fits(endpoint: str, fake: FakeGitHub,
                                          seeded: dict[str, Any]) -> None:
    # 65,536 characters, each \u-escaped on the wire: ~393 KB of JSON
    body = "\u0001" * 65_536
    request = call("github_add_comment", {**BASE, "issue_number": seeded["first"], "body": body})
    assert len(request) > 390_000
    with httpx.Client(timeout=30) as raw:
        resp = raw.post(endpoint, content=request, headers=JSON_RPC)
    assert resp.status_code == 200, resp.text
    result = resp.json()["result"]
    assert not result.get("isError"), result["structuredContent"]
    with fake.lock:
        issue = fake.state.find_repo(OWNER, REPO).issues[seeded["first"]]  # type: ignore[union-attr]
        assert issue.comments[-1].body == body
