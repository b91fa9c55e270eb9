"""Fault injection, in process (the transport behaves like a network) and rule mechanics."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from fake_support import OWNER, REPO, TOKEN, take_violations

from fakegithub import FakeGitHub, Match

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"


def count(fake: FakeGitHub) -> int:
    return len(fake.issues(OWNER, REPO))


async def test_status_faults_apply_in_order_and_expire(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    fake.faults.add("issues/get", "status", status=502, times=2)
    fake.faults.add("GET /issues/\\d+$", "status", status=503)
    statuses = [(await gh.get(f"{R}/issues/1")).status_code for _ in range(4)]
    assert statuses == [502, 502, 503, 200]
    assert len(fake.faults) == 0
    assert len(fake.calls("issues/get")) == 4  # faulted requests are still recorded


async def test_status_fault_is_not_performed_unless_after_commit(fake: FakeGitHub,
                                                                 gh: httpx.AsyncClient) -> None:
    before = count(fake)
    fake.faults.add("issues/create", "status", status=500)
    failed = await gh.post(f"{R}/issues", json={"title": "x"})
    assert failed.status_code == 500 and failed.json()["message"] == "Internal Server Error"
    assert count(fake) == before
    fake.faults.add("issues/create", "status", status=502, after_commit=True)
    lost = await gh.post(f"{R}/issues", json={"title": "y"})
    assert lost.status_code == 502 and count(fake) == before + 1


async def test_github_shaped_error_faults(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    fake.faults.secondary_rate_limit("issues/create", retry_after=30)
    limited = await gh.post(f"{R}/issues", json={"title": "x"})
    assert limited.status_code == 403 and limited.headers["retry-after"] == "30"
    assert "secondary rate limit" in limited.json()["message"]

    errors = [{"resource": "Issue", "field": "title", "code": "custom", "message": "too spicy"}]
    fake.faults.add("issues/create", "status", status=422,
                    body={"message": "Validation Failed", "errors": errors,
                          "documentation_url": "https://docs.github.com/rest"})
    invalid = await gh.post(f"{R}/issues", json={"title": "x"})
    assert invalid.status_code == 422 and invalid.json()["errors"] == errors

    fake.faults.add(Match(operation="issues/update"), "status", status=409)
    assert (await gh.patch(f"{R}/issues/1", json={"title": "z"})).status_code == 409
    fake.faults.add("*", "status", status=429, headers={"retry-after": "5"})
    too_many = await gh.get("/user")
    assert too_many.status_code == 429 and too_many.headers["retry-after"] == "5"
    fake.faults.add("issues/get", "status", status=410)
    assert (await gh.get(f"{R}/issues/1")).status_code == 410
    assert fake.violations == []


async def test_a_bad_injected_body_for_a_declared_status_is_a_violation(
    fake: FakeGitHub, gh: httpx.AsyncClient
) -> None:
    fake.faults.add("issues/create", "status", status=422, body={"oops": True})
    assert (await gh.post(f"{R}/issues", json={"title": "x"})).status_code == 422
    found = take_violations(fake)
    assert any("response 422" in v and "'message' is a required property" in v for v in found)


async def test_timeout_before_commit(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    before = count(fake)
    fake.faults.add("issues/create", "timeout", delay=5)
    async with fake.client(TOKEN, timeout=0.3) as client:
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            await client.post(f"{R}/issues", json={"title": "never"})
        assert time.monotonic() - started < 2
    assert count(fake) == before


async def test_timeout_after_commit_applies_the_write(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    before = count(fake)
    fake.faults.add("issues/create", "timeout", after_commit=True, delay=5)
    async with fake.client(TOKEN, timeout=0.3) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.post(f"{R}/issues", json={"title": "written but lost"})
        assert count(fake) == before + 1
        assert fake.issues(OWNER, REPO)[-1].title == "written but lost"
        follow_up = await client.get(f"{R}/issues/{before + 1}")
        assert follow_up.json()["title"] == "written but lost"


async def test_timeout_without_client_timeout_ends_in_504(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    fake.faults.add("issues/get", "timeout", delay=0.2)
    async with fake.client(TOKEN, timeout=5) as client:
        response = await client.get(f"{R}/issues/1")
    assert response.status_code == 504


async def test_resets(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    before = count(fake)
    fake.faults.add("issues/create", "reset")
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        await gh.post(f"{R}/issues", json={"title": "dropped"})
    assert count(fake) == before
    fake.faults.add("issues/create", "reset", after_commit=True)
    with pytest.raises(httpx.RemoteProtocolError):
        await gh.post(f"{R}/issues", json={"title": "applied then dropped"})
    assert count(fake) == before + 1
    fake.faults.add("issues/get", "reset", partial=True)
    with pytest.raises(httpx.RemoteProtocolError, match="complete message body"):
        await gh.get(f"{R}/issues/1")


async def test_malformed_json_and_html(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    fake.faults.add("issues/get", "malformed_json")
    broken = await gh.get(f"{R}/issues/1")
    assert broken.status_code == 200
    assert broken.headers["content-type"].startswith("application/json")
    with pytest.raises(json.JSONDecodeError):
        broken.json()
    fake.faults.add("issues/get", "html")
    page = await gh.get(f"{R}/issues/1")
    assert page.status_code == 500 and page.headers["content-type"].startswith("text/html")
    assert "<html>" in page.text
    fake.faults.add("issues/get", "html", status=502)
    assert (await gh.get(f"{R}/issues/1")).status_code == 502


async def test_slow_body(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    fake.faults.add("issues/get", "slow_body", delay=0.05, chunks=3)
    async with fake.client(TOKEN, timeout=1) as client:
        started = time.monotonic()
        slow = await client.get(f"{R}/issues/1")
        assert slow.json()["number"] == 1 and time.monotonic() - started >= 0.15
        fake.faults.add("issues/get", "slow_body", delay=0.5, chunks=2)
    async with fake.client(TOKEN, timeout=0.2) as impatient:
        with pytest.raises(httpx.ReadTimeout):
            await impatient.get(f"{R}/issues/1")


def test_fault_rules() -> None:
    assert Match.parse("issues/create") == Match(operation="issues/create")
    assert Match.parse("POST /repos/.*/issues$") == Match(method="POST", path="/repos/.*/issues$")
    assert Match.parse("/search/") == Match(path="/search/")
    assert Match.parse("*") == Match()
    rule = Match(method="get", path=r"/issues/\d+$")
    assert rule.hits("issues/get", "GET", "/repos/o/r/issues/7")
    assert not rule.hits("issues/get", "PATCH", "/repos/o/r/issues/7")
    fake = FakeGitHub()
    forever = fake.faults.add("issues/get", "status", status=500, times=None)
    for _ in range(5):
        assert fake.faults.take("issues/get", "GET", "/x") is forever
    assert fake.faults.remove(forever.id) and fake.faults.take("issues/get", "GET", "/x") is None
    with pytest.raises(ValueError):
        fake.faults.add("issues/get", "status")  # needs status=
    with pytest.raises(ValueError):
        fake.faults.add("issues/get", "explode")  # type: ignore[arg-type]


async def test_a_faulted_bad_request_is_still_a_violation(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    fake.faults.add("issues/create", "status", status=502)
    assert (await gh.post(f"{R}/issues", json={"body": "no title"})).status_code == 502
    assert any("'title' is a required property" in v for v in take_violations(fake))
