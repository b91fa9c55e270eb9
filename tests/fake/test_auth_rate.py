"""Authentication, OAuth scopes, rate limits and the headers every response carries."""

from __future__ import annotations

import httpx
import pytest
from fake_support import NO_SCOPE, OWNER, REPO, TOKEN, take_violations

from fakegithub import FakeClock, FakeGitHub

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"
RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset",
                "x-ratelimit-used", "x-ratelimit-resource")


async def test_missing_and_bad_credentials(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    async with fake.client() as anonymous:
        response = await anonymous.get(f"{R}/issues")
        assert response.status_code == 401
        assert response.json()["message"] == "Requires authentication"
        assert response.headers["x-ratelimit-limit"] == "60"
        assert (await anonymous.get("/user")).status_code == 401  # declared 401: validated
    async with fake.client("ghp_wrong") as wrong:
        response = await wrong.get(f"{R}/issues")
        assert response.status_code == 401 and response.json()["message"] == "Bad credentials"
    async with fake.client() as client:
        for header in (f"token {TOKEN}", f"Bearer {TOKEN}", f"bearer {TOKEN}"):
            ok = await client.get("/user", headers={"authorization": header})
            assert ok.status_code == 200, header
        odd = await client.get("/user", headers={"authorization": f"Basic {TOKEN}"})
        assert odd.status_code == 401


async def test_writes_need_repo_scope(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    async with fake.client(NO_SCOPE) as weak:
        assert (await weak.get(f"{R}/issues/1")).status_code == 200  # reads are fine (public)
        refused = await weak.post(f"{R}/issues", json={"title": "nope"})
        assert refused.status_code == 403
        assert refused.headers["x-accepted-oauth-scopes"] == "repo"
        assert refused.headers["x-oauth-scopes"] == "read:user"
        assert refused.json()["message"] == "Resource not accessible by personal access token"
        assert (await weak.delete(f"{R}/labels/bug")).status_code == 403
    assert len(fake.issues(OWNER, REPO)) == 4
    fake.add_token("ghp_public", "octocat", ("public_repo",), collaborator_on="*")
    fake.add_repo(OWNER, "secret", private=True)
    async with fake.client("ghp_public") as public:
        assert (await public.post(f"{R}/issues", json={"title": "ok"})).status_code == 201
        hidden = await public.post(f"/repos/{OWNER}/secret/issues", json={"title": "x"})
        assert hidden.status_code == 404  # private repositories need `repo`: GitHub hides them


async def test_every_response_carries_github_headers(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    ids = set()
    for response in [await gh.get(f"{R}/issues"), await gh.get(f"{R}/issues/999"),
                     await gh.post(f"{R}/issues", json={}), await gh.get("/user")]:
        for name in (*RATE_HEADERS, "x-github-request-id", "x-oauth-scopes"):
            assert name in response.headers, (response.request.url, name)
        ids.add(response.headers["x-github-request-id"])
    assert len(ids) == 4
    assert response.headers["x-oauth-scopes"] == "repo"
    assert response.headers["x-ratelimit-resource"] == "core"
    assert int(response.headers["x-ratelimit-used"]) == 4
    take_violations(fake)  # the empty create body


async def test_rate_limit_exhaustion_and_reset(fake: FakeGitHub, clock: FakeClock,
                                               gh: httpx.AsyncClient) -> None:
    fake.set_rate_limit(TOKEN, limit=10, remaining=2)
    first = await gh.get(f"{R}/issues")
    assert first.headers["x-ratelimit-remaining"] == "1"
    second = await gh.get(f"{R}/issues")
    assert second.status_code == 200 and second.headers["x-ratelimit-remaining"] == "0"
    blocked = await gh.post(f"{R}/issues", json={"title": "too many"})
    assert blocked.status_code == 403
    assert blocked.json()["message"].startswith("API rate limit exceeded for user ID ")
    assert blocked.headers["x-ratelimit-remaining"] == "0"
    assert blocked.headers["x-ratelimit-used"] == "10"
    reset_at = int(blocked.headers["x-ratelimit-reset"])
    assert reset_at == int(clock().timestamp()) + 3600
    assert len(fake.issues(OWNER, REPO)) == 4  # nothing was written
    # search has its own budget
    assert (await gh.get("/search/issues", params={"q": "crash"})).status_code == 200
    clock.advance(hours=1)
    again = await gh.get(f"{R}/issues")
    assert again.status_code == 200 and again.headers["x-ratelimit-remaining"] == "9"


async def test_search_budget(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    fake.set_rate_limit(TOKEN, remaining=0, resource="search")
    blocked = await gh.get("/search/issues", params={"q": "x"})
    assert blocked.status_code == 403 and blocked.headers["x-ratelimit-resource"] == "search"
    assert (await gh.get(f"{R}/issues")).status_code == 200


async def test_api_version_header(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    assert (await gh.get("/user", headers={"x-github-api-version": "2022-11-28"})).status_code == 200
    async with fake.client(TOKEN) as client:
        del client.headers["x-github-api-version"]
        assert (await client.get("/user")).status_code == 200  # missing is accepted
        await client.get("/user", headers={"x-github-api-version": "2026-03-10"})
    found = take_violations(fake)
    assert len(found) == 1 and "2026-03-10" in found[0]


async def test_requests_log(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    await gh.get(f"{R}/issues", params={"state": "closed"})
    await gh.post(f"{R}/issues/1/comments", json={"body": "hi"})
    await gh.get(f"{R}/labels/good%20first%20issue")
    get, post, label = fake.requests
    assert get == ("GET", f"{R}/issues", {"state": "closed"}, None, "issues/list-for-repo")
    assert post.body == {"body": "hi"} and post.operation_id == "issues/create-comment"
    assert label.path == f"{R}/labels/good first issue"
    assert [r.method for r in fake.calls("issues/create-comment")] == ["POST"]


async def test_what_answers_tell_of_each_kind_of_token(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    """Classic and OAuth-app tokens: X-OAuth-Scopes on every answer ("" for none), which their
    owner may change; fine-grained and installation tokens: no OAuth scope headers, and
    X-Accepted-GitHub-Permissions naming the permissions an issue endpoint accepts."""
    fake.add_token("gho_narrow", "octocat", scopes=("read:org", "public_repo"))
    fake.add_fine_grained_token("github_pat_fine", "octocat", {"issues": "read"})
    fake.add_installation_token("ghs_actions", "ci")
    async with fake.client("gho_narrow") as oauth:
        told = await oauth.get("/rate_limit")
        assert told.status_code == 200 and told.headers["x-oauth-scopes"] == "read:org, public_repo"
        assert told.json()["resources"]["core"]["remaining"] == 5000  # asking spends nothing
        fake.set_token_scopes("gho_narrow", ())
        assert (await oauth.get(f"{R}/labels")).headers["x-oauth-scopes"] == ""
    async with fake.client("github_pat_fine") as fine:
        labels = await fine.get(f"{R}/labels")
        assert "x-oauth-scopes" not in labels.headers
        assert labels.headers["x-accepted-github-permissions"] == "issues=read; pull_requests=read"
        refused = await fine.post(f"{R}/labels", json={"name": "x", "color": "ff0000"})
        assert refused.status_code == 403
        assert refused.json()["message"] == "Resource not accessible by personal access token"
        assert refused.headers["x-accepted-github-permissions"] == "issues=write; pull_requests=write"
    async with fake.client("ghs_actions") as installation:
        answer = await installation.get("/rate_limit")
        assert answer.status_code == 200 and "x-oauth-scopes" not in answer.headers
        assert (await installation.get("/user")).status_code == 403  # no account of its own
    assert fake.violations == []
