"""Conditional requests as GitHub answers them, the fixed response delay and the request timeline."""

from __future__ import annotations

import httpx
import pytest
from fake_support import OWNER, REPO, TOKEN

from fakegithub import FakeGitHub

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"


def remaining(response: httpx.Response) -> int:
    return int(response.headers["x-ratelimit-remaining"])


async def test_a_200_carries_githubs_validators(gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    issue = await gh.get(f"{R}/issues/{seeded['first']}")
    assert issue.headers["etag"].startswith('W/"')
    assert issue.headers["cache-control"] == "private, max-age=60, s-maxage=60"
    assert "Authorization" in issue.headers["vary"]
    assert issue.headers["last-modified"].endswith(" GMT")
    listing = await gh.get(f"{R}/issues")
    assert "etag" in listing.headers and "last-modified" not in listing.headers  # lists: ETag only


async def test_if_none_match_gets_a_304_that_spends_no_budget(
    gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    url = f"{R}/issues/{seeded['first']}"
    first = await gh.get(url)
    again = await gh.get(url, headers={"if-none-match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert "content-length" not in again.headers and "content-type" not in again.headers
    assert again.headers["etag"] == first.headers["etag"]
    assert remaining(again) == remaining(first)  # not decremented
    plain = await gh.get(url)
    assert plain.status_code == 200 and remaining(plain) == remaining(first) - 1


async def test_a_change_or_another_tag_gets_the_new_200(gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    url = f"{R}/issues/{seeded['first']}"
    first = await gh.get(url)
    assert (await gh.get(url, headers={"if-none-match": 'W/"other"'})).status_code == 200
    assert (await gh.get(url, headers={"if-none-match": '"x", ' + first.headers["etag"]})).status_code == 304
    assert (await gh.get(url, headers={"if-none-match": "*"})).status_code == 304
    await gh.post(f"{url}/labels", json={"labels": ["enhancement"]})
    changed = await gh.get(url, headers={"if-none-match": first.headers["etag"]})
    assert changed.status_code == 200 and changed.headers["etag"] != first.headers["etag"]
    assert "enhancement" in [lb["name"] for lb in changed.json()["labels"]]


async def test_if_modified_since_only_without_if_none_match(
    gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    url = f"{R}/issues/{seeded['first']}"
    first = await gh.get(url)
    since = first.headers["last-modified"]
    assert (await gh.get(url, headers={"if-modified-since": since})).status_code == 304
    old = "Mon, 01 Jan 2001 00:00:00 GMT"
    assert (await gh.get(url, headers={"if-modified-since": old})).status_code == 200
    # If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2)
    both = await gh.get(url, headers={"if-modified-since": since, "if-none-match": 'W/"other"'})
    assert both.status_code == 200


async def test_writes_and_errors_are_never_304(gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    url = f"{R}/issues/{seeded['first']}"
    tag = (await gh.get(url)).headers["etag"]
    patched = await gh.patch(url, json={"title": "Crash on empty config"}, headers={"if-none-match": "*"})
    assert patched.status_code == 200
    missing = await gh.get(f"{R}/issues/999", headers={"if-none-match": tag})
    assert missing.status_code == 404 and "etag" not in missing.headers


async def test_latency_and_timeline(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    fake.latency = 0.05
    async with fake.client(TOKEN) as gh:
        first = await gh.get(f"{R}/issues/{seeded['first']}")
        await gh.get(f"{R}/issues/{seeded['first']}", headers={"if-none-match": first.headers["etag"]})
    a, b = list(fake.timeline)
    assert (a.operation_id, a.status, a.spent) == ("issues/get", 200, True)
    assert (b.status, b.spent) == (304, False)
    assert a.ended - a.started >= 0.05 and b.started >= a.ended  # one after the other
    fake.reset()
    assert list(fake.timeline) == []


async def test_timeline_and_latency_over_the_control_api(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    async with fake.client(TOKEN) as gh:
        assert (await gh.post("/_fake/latency", json={"seconds": 0.01})).status_code == 200
        assert (await gh.post("/_fake/latency", json={"seconds": -1})).status_code == 400
        await gh.get(f"{R}/labels")
        [entry] = (await gh.get("/_fake/timeline")).json()
        assert entry["operation_id"] == "issues/list-labels-for-repo" and entry["status"] == 200
        assert entry["ended"] - entry["started"] >= 0.01
        assert (await gh.delete("/_fake/timeline")).status_code == 204
        assert (await gh.get("/_fake/timeline")).json() == []
    assert fake.latency == 0.01
