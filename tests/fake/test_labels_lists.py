"""Labels (repo and issue), milestones, list filters, pagination and Link headers."""

from __future__ import annotations

import httpx
import pytest
from fake_support import OWNER, REPO, take_violations

from fakegithub import FakeClock, FakeGitHub
from fakegithub.paging import link_header

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"


async def test_create_label_duplicate_is_case_insensitive(gh: httpx.AsyncClient) -> None:
    created = await gh.post(f"{R}/labels", json={"name": "Needs Info", "color": "aabbcc"})
    assert created.status_code == 201 and created.json()["color"] == "aabbcc"
    dup = await gh.post(f"{R}/labels", json={"name": "needs info"})
    assert dup.status_code == 422
    assert dup.json()["errors"] == [{"resource": "Label", "field": "name", "code": "already_exists",
                                     "value": "needs info"}]
    bad_color = await gh.post(f"{R}/labels", json={"name": "x", "color": "red"})
    assert bad_color.status_code == 422 and bad_color.json()["errors"][0]["field"] == "color"
    got = await gh.get(f"{R}/labels/NEEDS%20INFO")
    assert got.status_code == 200 and got.json()["name"] == "Needs Info"
    assert got.json()["url"].endswith("/labels/Needs%20Info")


async def test_update_label_renames_everywhere(fake: FakeGitHub, gh: httpx.AsyncClient,
                                               seeded: dict[str, int]) -> None:
    updated = await gh.patch(f"{R}/labels/bug", json={"new_name": "type: bug", "description": "broken"})
    assert updated.status_code == 200 and updated.json()["name"] == "type: bug"
    issue = (await gh.get(f"{R}/issues/{seeded['first']}")).json()
    assert [lb["name"] for lb in issue["labels"]] == ["type: bug", "triage"]
    clash = await gh.patch(f"{R}/labels/triage", json={"new_name": "Type: Bug"})
    assert clash.status_code == 422
    assert (await gh.patch(f"{R}/labels/nope", json={"color": "000000"})).status_code == 404


async def test_delete_label_removes_it_from_issues_and_pull_requests(
    fake: FakeGitHub, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    carriers = [seeded["first"], seeded["closed"], seeded["pr"]]
    assert all("bug" in fake.label_names(OWNER, REPO, n) for n in carriers)
    assert (await gh.delete(f"{R}/labels/bug")).status_code == 204
    assert "bug" not in fake.label_names(OWNER, REPO)
    for n in carriers:
        assert "bug" not in fake.label_names(OWNER, REPO, n)
    pr = (await gh.get(f"{R}/issues/{seeded['pr']}")).json()
    assert pr["labels"] == []
    assert (await gh.get(f"{R}/labels/bug")).status_code == 404
    assert (await gh.get(f"{R}/issues", params={"labels": "bug", "state": "all"})).json() == []


async def test_issue_label_operations(fake: FakeGitHub, gh: httpx.AsyncClient,
                                      seeded: dict[str, int]) -> None:
    n = seeded["second"]
    added = await gh.post(f"{R}/issues/{n}/labels", json={"labels": ["bug", "auto created"]})
    assert [lb["name"] for lb in added.json()] == ["enhancement", "bug", "auto created"]
    assert fake.get_issue(OWNER, REPO, n).label_ids  # stored
    assert "auto created" in fake.label_names(OWNER, REPO)
    bare = await gh.post(f"{R}/issues/{n}/labels", json=["triage"])  # documented bare array
    assert [lb["name"] for lb in bare.json()][-1] == "triage"
    listed = await gh.get(f"{R}/issues/{n}/labels")
    assert len(listed.json()) == 4
    removed = await gh.delete(f"{R}/issues/{n}/labels/auto%20created")
    assert removed.status_code == 200
    assert [lb["name"] for lb in removed.json()] == ["enhancement", "bug", "triage"]
    missing = await gh.delete(f"{R}/issues/{n}/labels/good%20first%20issue")
    assert missing.status_code == 404 and missing.json()["message"] == "Label does not exist"
    replaced = await gh.put(f"{R}/issues/{n}/labels", json={"labels": ["good first issue"]})
    assert [lb["name"] for lb in replaced.json()] == ["good first issue"]
    assert fake.label_names(OWNER, REPO, n) == ["good first issue"]


async def test_set_labels_with_empty_list_is_a_spec_quirk(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                          seeded: dict[str, int]) -> None:
    # The docs allow {"labels": []} to clear; the schema says minItems 1, so the fake flags it.
    response = await gh.put(f"{R}/issues/{seeded['second']}/labels", json={"labels": []})
    assert response.status_code == 422
    assert take_violations(fake)


async def test_list_issues_filters(fake: FakeGitHub, clock: FakeClock, gh: httpx.AsyncClient,
                                   seeded: dict[str, int]) -> None:
    async def numbers(**params: str) -> list[int]:
        response = await gh.get(f"{R}/issues", params=params)
        assert response.status_code == 200, response.text
        return [i["number"] for i in response.json()]

    assert await numbers() == [4, 2, 1]  # open, issues and PRs, newest first
    assert await numbers(state="closed") == [3]
    assert await numbers(state="all", direction="asc") == [1, 2, 3, 4]
    assert await numbers(labels="bug,triage") == [1]
    assert await numbers(labels="BUG") == [4, 1]
    assert await numbers(assignee="hubot") == [1]
    assert await numbers(assignee="none") == [4, 2]
    assert await numbers(assignee="*") == [1]
    assert await numbers(creator="jane") == [1]
    assert await numbers(milestone="1") == [1]
    assert await numbers(milestone="none") == [4, 2]
    assert await numbers(milestone="*") == [1]
    assert await numbers(sort="comments") == [1, 4, 2]
    clock.advance(hours=1)
    await gh.patch(f"{R}/issues/2", json={"body": "touched"})
    assert await numbers(sort="updated") == [2, 1, 4]  # #1 got a comment after #4 was made
    assert await numbers(since="2024-03-01T12:30:00Z") == [2]
    assert await numbers(mentioned="nobody") == []


async def test_pagination_and_link_headers(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    for i in range(7):
        fake.add_issue(OWNER, REPO, f"bulk {i}")
    first = await gh.get(f"{R}/issues", params={"per_page": 3})
    assert len(first.json()) == 3
    link = first.headers["link"]
    base = f"http://fake-github.test{R}/issues"
    assert link == (f'<{base}?per_page=3&page=2>; rel="next", <{base}?per_page=3&page=4>; rel="last"')
    assert first.links["next"]["url"] == f"{base}?per_page=3&page=2"
    middle = await gh.get(f"{R}/issues", params={"per_page": 3, "page": 2})
    assert set(middle.links) == {"prev", "next", "last", "first"}
    last = await gh.get(middle.links["last"]["url"])
    assert set(last.links) == {"prev", "first"} and len(last.json()) == 1
    seen: list[int] = []
    url: str | None = f"{R}/issues?per_page=4&state=all"
    while url:
        page = await gh.get(url)
        seen.extend(i["number"] for i in page.json())
        url = page.links.get("next", {}).get("url")
    assert sorted(seen) == list(range(1, 12))
    single = await gh.get(f"{R}/labels")
    assert "link" not in single.headers
    capped = await gh.get(f"{R}/issues", params={"per_page": 500, "state": "all"})
    assert len(capped.json()) == 11  # per_page is capped at 100, not rejected


def test_link_header_shapes() -> None:
    assert link_header("u", {}, 1, 1) is None
    assert link_header("u", {}, 5, 2) == '<u?page=2>; rel="prev", <u?page=1>; rel="first"'


async def test_milestones_list_and_counts(fake: FakeGitHub, gh: httpx.AsyncClient,
                                          seeded: dict[str, int]) -> None:
    fake.add_milestone(OWNER, REPO, "v0.9", state="closed")
    fake.add_milestone(OWNER, REPO, "v2.0", due_on="2025-01-01T00:00:00Z")
    fake.add_milestone(OWNER, REPO, "someday")
    open_ = (await gh.get(f"{R}/milestones")).json()
    assert [m["title"] for m in open_] == ["v1.0", "v2.0", "someday"]
    assert open_[0]["open_issues"] == 1 and open_[0]["due_on"] == "2024-05-31T07:00:00Z"
    closed = (await gh.get(f"{R}/milestones", params={"state": "closed"})).json()
    assert [m["title"] for m in closed] == ["v0.9"] and closed[0]["closed_at"]
    every = (await gh.get(f"{R}/milestones", params={"state": "all", "direction": "desc"})).json()
    assert len(every) == 4
    await gh.patch(f"{R}/issues/{seeded['first']}", json={"state": "closed"})
    v1 = (await gh.get(f"{R}/milestones")).json()[0]
    assert (v1["open_issues"], v1["closed_issues"]) == (0, 1)
