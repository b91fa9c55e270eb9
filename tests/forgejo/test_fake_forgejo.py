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
        unknown = await api.get("/api/v1/repos/alice/r/releases")
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



# -- issues (issue 38) -------------------------------------------------------------------------------


def issues_world(fake: FakeForgejo) -> dict[str, int]:
    """acme/web (see forgejo_support.seed) plus carol (reads acme/web), milestones, assignees,
    comments with mentions and a dependency."""
    fake.add_user("carol")
    with fake.lock:
        fake.state.repo(ORG, REPO).collaborators["carol"] = "read"  # type: ignore[union-attr]
    fake.add_token("e5" * 20, "carol", ("write:issue", "read:repository"))
    labels = {lb.name: lb for lb in fake.labels_of(repo=f"{ORG}/{REPO}")}
    titled = fake.add_milestone(f"{ORG}/{REPO}", "v1")
    numeric = fake.add_milestone(f"{ORG}/{REPO}", str(titled.id))  # titled like the other's id
    a = fake.add_issue(f"{ORG}/{REPO}", "Dark mode", author="carol", body="cc @alice and @carol",
                       labels=[labels["bug"], labels["docs"]], assignees=["bob"], milestone=titled)
    b = fake.add_issue(f"{ORG}/{REPO}", "Numeric", author="bob", milestone=numeric)
    fake.add_comment(f"{ORG}/{REPO}", b.number, "The CSS is READY, @bob", author="alice")
    return {"a": a.number, "b": b.number, "titled": titled.id, "numeric": numeric.id, "bug": labels["bug"].id,
            "docs": labels["docs"].id}


async def test_the_issue_listing_filters_as_forgejo_does(fake: FakeForgejo, ids: dict[str, int]) -> None:
    w = issues_world(fake)

    async def listed(**query: str) -> list[int]:
        async with fake.client(OWNER_TOKEN) as api:
            resp = await api.get(f"{R}/issues", params={"type": "issues", "state": "all", **query})
        assert resp.status_code == 200, resp.text
        return [row["number"] for row in resp.json()]

    assert await listed(labels="bug,docs") == [w["a"]]  # every label (an AND)
    assert await listed(labels="docs,nope") == [w["a"]]  # an unknown name is dropped
    assert await listed(labels="nope") == await listed()  # ... and with none left, no filter
    # a title first, then an id: "<titled's id>" is the title of the other milestone
    assert await listed(milestones=str(w["titled"])) == [w["b"]]
    assert await listed(milestones=f"v1,{w['numeric']}") == [w["b"], w["a"]]
    assert await listed(mentioned_by="alice") == [w["a"]] and await listed(mentioned_by="bob") == [w["b"]]
    assert await listed(mentioned_by="carol") == []  # the writer's own mention is not recorded
    assert await listed(q="css is ready") == [w["b"]]  # comments too, ignoring case
    assert await listed(assigned_by="BOB") == [w["a"]] and await listed(created_by="carol") == [w["a"]]
    assert (await listed(sort="oldest"))[:2] == [1, 2]
    async with fake.client(OWNER_TOKEN) as api:
        unknown = await api.get(f"{R}/issues", params={"created_by": "nobody"})
    assert unknown.status_code == 404 and unknown.json()["errors"] == ["user redirect does not exist [name: nobody]"]


async def test_issue_writes_as_forgejo_does_them(fake: FakeForgejo, ids: dict[str, int]) -> None:
    w = issues_world(fake)
    async with fake.client(OWNER_TOKEN) as alice, fake.client("e5" * 20) as carol:
        dropped = await carol.post(f"{R}/issues", json={"title": "x", "labels": [w["bug"]], "milestone": w["titled"]})
        assert dropped.status_code == 201 and dropped.json()["labels"] == [] and "milestone" not in dropped.json()
        assert dropped.json()["pull_request"] is None  # as Forgejo sends it (the spec patch allows it)
        refused = await alice.post(f"{R}/issues", json={"title": "x", "assignees": ["carol"]})
        assert refused.status_code == 422  # carol cannot be assigned: she only reads
        own = await carol.patch(f"{R}/issues/{w['a']}", json={"title": "Dark theme", "milestone": 0})
        assert own.status_code == 201 and own.json()["title"] == "Dark theme" and "milestone" in own.json()
        bare = await carol.patch(f"{R}/issues/{w['b']}", json={"title": "mine"})
        assert bare.status_code == 403 and bare.content == b""
        cleared = await alice.patch(f"{R}/issues/{w['a']}", json={"milestone": 0})
        assert "milestone" not in cleared.json()
        crash = await alice.patch(f"{R}/issues/{w['a']}", json={"milestone": 999})
        assert crash.status_code == 500
        fake.add_dependency(f"{ORG}/{REPO}", w["a"], depends_on=w["b"])
        blocked = await alice.patch(f"{R}/issues/{w['a']}", json={"state": "closed"})
        assert blocked.status_code == 412
        by_name = await alice.post(f"{R}/issues/{w['b']}/labels", json={"labels": ["docs", "nope"]})
        assert [lb["name"] for lb in by_name.json()] == ["docs"]
        mixed = await alice.post(f"{R}/issues/{w['b']}/labels", json={"labels": ["docs", w["bug"]]})
        assert mixed.status_code == 400
        assert (await alice.delete(f"{R}/issues/{w['b']}/labels/999999")).status_code == 422
        assert (await alice.delete(f"{R}/issues/{w['b']}/labels/{w['bug']}")).status_code == 204  # not carried
        locked = fake.add_issue(f"{ORG}/{REPO}", "Heated", locked=True)
        no = await carol.post(f"{R}/issues/{locked.number}/comments", json={"body": "+1"})
        assert no.status_code == 403 and no.json()["message"] == "You cannot comment on a locked issue."
        comments = await alice.get(f"{R}/issues/{w['b']}/comments")
        assert [c["body"] for c in comments.json()] == ["The CSS is READY, @bob"]


def test_python_m_fakeforgejo_serves_the_demo(tmp_path: object) -> None:
    """`python -m fakeforgejo --seed demo` on a free loopback port answers with the demo's issues."""
    import socket
    import subprocess
    import sys
    import time

    import httpx

    from fakeforgejo.demo import DEMO_TOKEN

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "fakeforgejo", "--port", str(port), "--seed", "demo"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):  # at most ~10 s
            try:
                resp = httpx.get(f"http://127.0.0.1:{port}/api/v1/repos/acme/web/issues",
                                 headers={"authorization": f"token {DEMO_TOKEN}"}, params={"type": "issues"})
                break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise AssertionError("the fake did not start")
        assert resp.status_code == 200 and resp.headers["x-total-count"] == "6"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
