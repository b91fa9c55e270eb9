"""Issue semantics: create/update/lock/comments, validation errors, permissions, timestamps."""

from __future__ import annotations

import httpx
import pytest
from fake_support import OUTSIDER, OWNER, REPO, take_violations

from fakegithub import FakeClock, FakeGitHub

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"


async def test_create_issue_with_everything(fake: FakeGitHub, gh: httpx.AsyncClient,
                                            seeded: dict[str, int]) -> None:
    response = await gh.post(f"{R}/issues", json={
        "title": "Add CSV export", "body": "please", "labels": ["enhancement", "brand new"],
        "assignees": ["hubot", "octocat"], "milestone": seeded["milestone"]})
    assert response.status_code == 201
    issue = response.json()
    assert issue["number"] == 5  # issues and pull requests share numbers
    assert response.headers["location"] == f"http://fake-github.test{R}/issues/5"
    assert [lb["name"] for lb in issue["labels"]] == ["enhancement", "brand new"]
    assert "brand new" in fake.label_names(OWNER, REPO)  # unknown labels are created
    assert [a["login"] for a in issue["assignees"]] == ["hubot", "octocat"]
    assert issue["milestone"]["number"] == seeded["milestone"]
    assert issue["user"]["login"] == "octocat" and issue["state"] == "open"
    assert fake.get_issue(OWNER, REPO, 5).title == "Add CSV export"


async def test_create_issue_integer_title_and_string_milestone(gh: httpx.AsyncClient,
                                                               seeded: dict[str, int]) -> None:
    response = await gh.post(f"{R}/issues", json={"title": 42, "milestone": str(seeded["milestone"])})
    assert response.status_code == 201
    assert response.json()["title"] == "42" and response.json()["milestone"]["number"] == 1


@pytest.mark.parametrize(
    ("payload", "field", "value"),
    [
        ({"title": "x", "assignees": ["ghost"]}, "assignees", "ghost"),
        ({"title": "x", "assignees": ["jane"]}, "assignees", "jane"),  # exists, not assignable
        ({"title": "x", "milestone": 99}, "milestone", 99),
    ],
)
async def test_create_issue_semantic_422(fake: FakeGitHub, gh: httpx.AsyncClient, seeded: dict[str, int],
                                         payload: dict[str, object], field: str, value: object) -> None:
    before = len(fake.issues(OWNER, REPO))
    response = await gh.post(f"{R}/issues", json=payload)
    assert response.status_code == 422
    body = response.json()
    assert body["message"] == "Validation Failed"
    assert body["errors"] == [{"resource": "Issue", "field": field, "code": "invalid", "value": value}]
    assert len(fake.issues(OWNER, REPO)) == before
    assert fake.violations == []  # a semantic error is not a contract violation


@pytest.mark.parametrize(
    ("method", "path", "payload", "expect"),
    [
        ("POST", "/issues", {"body": "no title"}, "'title' is a required property"),
        ("POST", "/issues", {"title": ["x"]}, "title"),
        ("POST", "/issues", None, "Missing required request body"),
        ("PATCH", "/issues/1", {"state": "bogus"}, "'bogus' is not one of ['open', 'closed']"),
        ("PATCH", "/issues/1", {"state_reason": "because"}, "state_reason"),
        ("PUT", "/issues/1/lock", {"lock_reason": "nope"}, "lock_reason"),
        ("POST", "/issues/1/comments", {"body": 5}, "5 is not of type 'string'"),
        ("POST", "/labels", {"color": "ffffff"}, "'name' is a required property"),
        ("GET", "/issues?state=bogus", None, "'bogus' is not one of"),
        ("GET", "/issues?per_page=abc", None, "per_page"),
        ("GET", "/issues?since=yesterday", None, "date-time"),
        ("GET", "/issues/abc", None, "issue_number"),
    ],
)
async def test_requests_the_spec_rejects_get_422_and_a_violation(
    fake: FakeGitHub, gh: httpx.AsyncClient, method: str, path: str, payload: object, expect: str
) -> None:
    response = await gh.request(method, R + path, json=payload)
    assert response.status_code == 422
    body = response.json()
    assert body["message"].startswith("Invalid request.") and body["documentation_url"].startswith("https://docs.github.com/")
    found = take_violations(fake)
    assert found and all("request:" in v for v in found)
    assert any(expect in v for v in found), found


async def test_search_without_q_is_a_violation(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    assert (await gh.get("/search/issues")).status_code == 422
    assert any("Missing required query parameter: q" in v for v in take_violations(fake))


async def test_update_state_reason_and_timestamps(fake: FakeGitHub, clock: FakeClock,
                                                  gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    n = seeded["first"]
    before = (await gh.get(f"{R}/issues/{n}")).json()
    clock.advance(minutes=5)
    closed = (await gh.patch(f"{R}/issues/{n}", json={"state": "closed"})).json()
    assert closed["state"] == "closed" and closed["state_reason"] == "completed"
    assert closed["closed_by"]["login"] == "octocat"
    assert closed["closed_at"] == "2024-03-01T12:05:00Z"
    assert closed["updated_at"] > before["updated_at"]

    again = (await gh.patch(f"{R}/issues/{n}", json={"state": "closed", "state_reason": "not_planned"})).json()
    assert again["state_reason"] == "not_planned"
    assert again["updated_at"] > closed["updated_at"]  # strictly later even on a frozen clock

    reopened = (await gh.patch(f"{R}/issues/{n}", json={"state": "open"})).json()
    assert reopened["state_reason"] == "reopened" and reopened["closed_at"] is None
    assert reopened["closed_by"] is None

    dup = (await gh.patch(f"{R}/issues/{n}", json={"state": "closed", "state_reason": "duplicate"})).json()
    assert dup["state_reason"] == "duplicate"


async def test_update_replaces_labels_assignees_and_clears_milestone(
    fake: FakeGitHub, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    n = seeded["first"]
    response = await gh.patch(f"{R}/issues/{n}", json={
        "milestone": None, "labels": ["enhancement", {"name": "fresh"}], "assignees": ["octocat"],
        "body": "new body", "title": "New title"})
    assert response.status_code == 200
    issue = response.json()
    assert issue["milestone"] is None
    assert [lb["name"] for lb in issue["labels"]] == ["enhancement", "fresh"]
    assert [a["login"] for a in issue["assignees"]] == ["octocat"]
    assert (issue["title"], issue["body"]) == ("New title", "new body")
    stored = fake.get_issue(OWNER, REPO, n)
    assert stored.milestone is None and stored.assignees == ["octocat"]
    bad = await gh.patch(f"{R}/issues/{n}", json={"assignees": ["ghost"]})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "assignees"


async def test_noop_update_keeps_updated_at(gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    n = seeded["second"]
    before = (await gh.get(f"{R}/issues/{n}")).json()
    after = (await gh.patch(f"{R}/issues/{n}", json={"title": before["title"]})).json()
    assert after["updated_at"] == before["updated_at"]


async def test_lock_unlock_and_locked_comments(fake: FakeGitHub, gh: httpx.AsyncClient,
                                               seeded: dict[str, int]) -> None:
    n = seeded["first"]
    assert (await gh.put(f"{R}/issues/{n}/lock", json={"lock_reason": "too heated"})).status_code == 204
    issue = (await gh.get(f"{R}/issues/{n}")).json()
    assert issue["locked"] is True and issue["active_lock_reason"] == "too heated"

    async with fake.client(OUTSIDER) as outsider:
        refused = await outsider.post(f"{R}/issues/{n}/comments", json={"body": "let me in"})
        assert refused.status_code == 403
        assert refused.json()["message"] == "Unable to create comment because issue is locked."
        assert (await outsider.put(f"{R}/issues/{n}/lock")).status_code == 403
    # collaborators may still comment
    assert (await gh.post(f"{R}/issues/{n}/comments", json={"body": "maintainer note"})).status_code == 201

    assert (await gh.delete(f"{R}/issues/{n}/lock")).status_code == 204
    issue = (await gh.get(f"{R}/issues/{n}")).json()
    assert issue["locked"] is False and issue["active_lock_reason"] is None
    assert (await gh.put(f"{R}/issues/{n}/lock")).status_code == 204  # reason is optional


async def test_comments_count_order_since_and_paging(fake: FakeGitHub, clock: FakeClock,
                                                     gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    n = seeded["second"]
    for i in range(5):
        clock.advance(minutes=1)
        created = await gh.post(f"{R}/issues/{n}/comments", json={"body": f"c{i}"})
        assert created.status_code == 201
        assert created.json()["html_url"].endswith(f"/issues/{n}#issuecomment-{created.json()['id']}")
    issue = (await gh.get(f"{R}/issues/{n}")).json()
    assert issue["comments"] == 5
    assert issue["updated_at"] == created.json()["created_at"]
    page = await gh.get(f"{R}/issues/{n}/comments", params={"per_page": 2})
    assert [c["body"] for c in page.json()] == ["c0", "c1"]
    assert 'rel="next"' in page.headers["link"] and "page=3" in page.headers["link"]
    since = await gh.get(f"{R}/issues/{n}/comments", params={"since": "2024-03-01T12:04:00Z"})
    assert [c["body"] for c in since.json()] == ["c3", "c4"]
    assert [c.body for c in fake.comments(OWNER, REPO, n)] == [f"c{i}" for i in range(5)]
    blank = await gh.post(f"{R}/issues/{n}/comments", json={"body": "  "})
    assert blank.status_code == 422 and blank.json()["errors"][0]["code"] == "missing_field"


async def test_outsiders_write_like_on_github(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    async with fake.client(OUTSIDER) as outsider:
        created = await outsider.post(f"{R}/issues", json={
            "title": "From outside", "labels": ["bug"], "assignees": ["hubot"], "milestone": 1})
        assert created.status_code == 201
        issue = created.json()  # labels/assignees/milestone are silently dropped
        assert issue["labels"] == [] and issue["assignees"] == [] and issue["milestone"] is None
        assert issue["author_association"] == "NONE"
        own = await outsider.patch(f"{R}/issues/{issue['number']}", json={"title": "Edited"})
        assert own.status_code == 200 and own.json()["title"] == "Edited"
        other = await outsider.patch(f"{R}/issues/{seeded['second']}", json={"title": "Nope"})
        assert other.status_code == 403
        assert (await outsider.post(f"{R}/labels", json={"name": "x"})).status_code == 403
        comment = await outsider.post(f"{R}/issues/{seeded['second']}/comments", json={"body": "hi"})
        assert comment.status_code == 201


async def test_private_repos_are_invisible_to_outsiders(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    fake.add_repo(OWNER, "secret", private=True)
    fake.add_issue(OWNER, "secret", "hidden")
    async with fake.client(OUTSIDER) as outsider:
        assert (await outsider.get(f"/repos/{OWNER}/secret")).status_code == 404
        assert (await outsider.get(f"/repos/{OWNER}/secret/issues/1")).status_code == 404
    async with fake.client("ghp_testtoken") as member:  # octocat: collaborator on roadmap only
        assert (await member.get(f"/repos/{OWNER}/secret/issues/1")).status_code == 404
        fake.add_collaborator(OWNER, "secret", "octocat")
        assert (await member.get(f"/repos/{OWNER}/secret/issues/1")).status_code == 200
