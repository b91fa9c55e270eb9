"""The Forgejo fake itself: Forgejo v11.0.1's semantics where the server depends on them, every
request and answer checked against the pinned description, and the machinery it shares with the
GitHub fake (faults, spec violations)."""

from __future__ import annotations

import pytest

from fakeforgejo import OPERATIONS, FakeForgejo
from fakeforgejo.fake import contract
from fakegithub.app import ApiApp, SpecPipeline
from fakegithub.core import FakeForge
from fakegithub.fake import FakeGitHub
from tests.forgejo.forgejo_support import MEMBER_TOKEN, ORG, OWNER_TOKEN, READ_TOKEN, REPO

pytestmark = pytest.mark.anyio
R = f"/api/v1/repos/{ORG}/{REPO}"


def test_both_fakes_run_on_the_same_machinery() -> None:
    assert issubclass(FakeForgejo, FakeForge) and issubclass(FakeGitHub, FakeForge)
    forgejo, github = FakeForgejo(), FakeGitHub()
    for fake in (forgejo, github):
        api = next(r.app for r in fake.app.routes if getattr(r, "path", "") == "/{path:path}")
        assert isinstance(api, ApiApp) and isinstance(api.pipeline, SpecPipeline)
    assert set(contract().operations) == set(OPERATIONS)


async def test_authentication_and_token_scopes(fake: FakeForgejo, ids: dict[str, int]) -> None:
    async with fake.client() as anonymous:
        denied = await anonymous.get(f"{R}/labels")
    assert denied.status_code == 401 and denied.json()["message"] == "token is required"
    async with fake.client(READ_TOKEN) as api:
        assert (await api.get(f"{R}/labels")).status_code == 200
        refused = await api.post(f"{R}/labels", json={"name": "x", "color": "#000000"})
    assert refused.status_code == 403
    assert refused.json() == {"message": "token does not have at least one of required scope(s): [write:issue]",
                              "url": "https://forgejo.test/api/swagger"}
    async with fake.client() as api:  # Bearer works as well as `token`; the scheme word is case-sensitive
        api.headers["authorization"] = f"Bearer {OWNER_TOKEN}"
        assert (await api.get("/api/v1/user")).json()["login"] == "alice"
        api.headers["authorization"] = f"TOKEN {OWNER_TOKEN}"
        assert (await api.get("/api/v1/user")).status_code == 401


async def test_colors_are_normalised_as_forgejo_does(fake: FakeForgejo, ids: dict[str, int]) -> None:
    async with fake.client(OWNER_TOKEN) as api:
        answers = [await api.post(f"{R}/labels", json={"name": f"c{i}", "color": color})
                   for i, color in enumerate(["#ABC", "abc", "A1B2C3", "#a1b2c3", "red", "#abcd"])]
    assert [(a.status_code, a.json().get("color")) for a in answers] == [
        (201, "aabbcc"), (201, "aabbcc"), (201, "a1b2c3"), (201, "a1b2c3"), (422, None), (422, None)]
    assert answers[4].json()["message"] == "bad color code: #red"


async def test_names_need_not_be_unique_and_delete_answers_204_for_any_id(
    fake: FakeForgejo, ids: dict[str, int]
) -> None:
    async with fake.client(OWNER_TOKEN) as api:
        twice = [await api.post(f"{R}/labels", json={"name": "bug", "color": "#000000"}) for _ in range(2)]
        assert [t.status_code for t in twice] == [201, 201]
        missing = await api.delete(f"{R}/labels/999999")
        foreign = await api.delete(f"{R}/labels/{ids['security']}")  # an org label's id
    assert missing.status_code == foreign.status_code == 204
    assert fake.label(ids["security"]) is not None  # nothing was deleted
    assert [lb.name for lb in fake.labels_of(repo=f"{ORG}/{REPO}")].count("bug") == 3


async def test_the_issue_listing_filters_by_repository_label_names_only(fake: FakeForgejo, ids: dict[str, int]) -> None:
    """An organisation label's name never resolves in a repository's listing: no filter applies
    and every issue is counted (why the org count goes through the issue search)."""
    async with fake.client(OWNER_TOKEN) as api:
        bug = await api.get(f"{R}/issues", params={"labels": "bug", "state": "all", "limit": 1})
        security = await api.get(f"{R}/issues", params={"labels": "security", "state": "all", "limit": 1})
        issues_only = await api.get(f"{R}/issues", params={"labels": "bug", "state": "all", "type": "issues"})
    assert bug.headers["x-total-count"] == "3" and len(bug.json()) == 1 and 'rel="next"' in bug.headers["link"]
    assert security.headers["x-total-count"] == "3"  # all of acme/web's issues, not the one carrying it
    assert issues_only.headers["x-total-count"] == "2"


async def test_the_search_resolves_names_everywhere_and_counts_readable_repositories(
    fake: FakeForgejo, ids: dict[str, int]
) -> None:
    query = {"owner": ORG, "labels": "security", "state": "all", "limit": 1}
    async with fake.client(OWNER_TOKEN) as owner, fake.client(MEMBER_TOKEN) as member:
        assert (await owner.get("/api/v1/repos/issues/search", params=query)).headers["x-total-count"] == "3"
        assert (await member.get("/api/v1/repos/issues/search", params=query)).headers["x-total-count"] == "2"
        repos = await member.get(f"/api/v1/orgs/{ORG}/repos", params={"limit": 50})
    # the total counts every repository of the organisation; the page holds the readable ones
    assert repos.headers["x-total-count"] == "3" and [r["name"] for r in repos.json()] == ["web", "api"]


async def test_a_request_the_description_rejects_is_a_violation() -> None:
    fake = FakeForgejo()
    fake.add_token(OWNER_TOKEN, "alice")
    fake.add_repo("alice", "r")
    async with fake.client(OWNER_TOKEN) as api:
        bad = await api.post("/api/v1/repos/alice/r/labels", json={"name": "no color"})
        unknown = await api.get("/api/v1/repos/alice/r/milestones")
    assert bad.status_code == 422 and "color" in bad.json()["message"]
    assert unknown.status_code == 404
    assert len(fake.violations) == 2 and "request" in fake.violations[0]
    assert "no such operation" in fake.violations[1]


async def test_faults_come_from_the_shared_machinery(fake: FakeForgejo, ids: dict[str, int]) -> None:
    fake.faults.add("orgListLabels", "status", status=500)
    fake.faults.add("orgGetLabel", "html")
    async with fake.client(OWNER_TOKEN) as api:
        failed = await api.get(f"/api/v1/orgs/{ORG}/labels")
        html = await api.get(f"/api/v1/orgs/{ORG}/labels/{ids['security']}")
        fine = await api.get(f"/api/v1/orgs/{ORG}/labels")
    assert failed.status_code == 500 and failed.json() == {"message": "", "url": "https://forgejo.test/api/swagger"}
    assert html.status_code == 500 and "Forgejo" in html.text
    assert fine.status_code == 200 and fine.headers["x-total-count"] == "2"
