"""Keyed creates (github_create_issue, github_add_comment) against the fake GitHub: what is sent is
stored byte for byte, and a lost answer is found again by author, exact content and time."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mcp import Client

from fakegithub import FakeGitHub
from ghmcp_runtime.stores.idempotency import RETRY_WITH_THE_SAME_KEY, IdempotencyRunner, MemoryStore
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server, payload

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
SAID = "Assigned to hubot for the Safari fix."
LEGACY = "<!-- ghmcp-idempotency:0123456789abcdef01234567 -->"


def server(fake: FakeGitHub) -> Any:
    return in_memory_server(fake, idempotency=IdempotencyRunner(MemoryStore()))


async def call(srv: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(srv, cache=None) as client:
        return payload(await client.call_tool(name, args))


def comment_bodies(fake: FakeGitHub, number: int, author: str = "octocat") -> list[str]:
    return [c.body for c in fake.comments(OWNER, REPO, number) if c.author == author]


def lose_the_answer(fake: FakeGitHub, op: str, *, committed: bool = True) -> None:
    """The next write to `op` is applied (or not) and its connection drops before the answer."""
    fake.faults.add(op, "reset", after_commit=committed)


@pytest.mark.parametrize("body", [SAID, "  spaced\r\nCRLF kept  \n", "<!-- a comment of the user's own -->"])
async def test_a_keyed_comment_is_stored_exactly_as_sent(fake: FakeGitHub, seeded: dict[str, Any],
                                                         body: str) -> None:
    """Regression: a hidden marker was appended to every comment posted with a key."""
    args = {**REPO_ARGS, "issue_number": seeded["first"], "body": body, "idempotency_key": "exact-0001"}
    posted = await call(server(fake), "github_add_comment", args)
    assert "code" not in posted, posted
    assert comment_bodies(fake, seeded["first"]) == [body]


@pytest.mark.parametrize("extra", [{"body": SAID}, {}], ids=["body", "no-body"])
async def test_a_keyed_issue_is_stored_exactly_as_sent(fake: FakeGitHub, seeded: dict[str, Any],
                                                       extra: dict[str, Any]) -> None:
    """Regression: an issue created with a key and no body had a body made only of the marker."""
    args = {**REPO_ARGS, "title": "Safari crash", **extra, "idempotency_key": "exact-issue-0001"}
    created = await call(server(fake), "github_create_issue", args)
    issue = next(i for i in fake.issues(OWNER, REPO) if i.number == created["issue"]["issue_number"])
    assert (issue.title, issue.body) == ("Safari crash", extra.get("body"))
    assert [r.body for r in fake.calls("issues/create")] == [{"title": "Safari crash", **extra}]


def written_at(fake: FakeGitHub) -> datetime:
    """When the fake stamped its last write (created_at of what a lost answer created)."""
    stamp = fake.state._last_stamp
    assert stamp is not None
    return stamp


async def test_comment_recovery_reads_every_page_of_a_busy_thread(fake: FakeGitHub,
                                                                  seeded: dict[str, Any]) -> None:
    """Regression: recovery read only the first 100 comments of the window, so on a thread with
    120 comments made while the call ran the retry posted a second comment."""
    number = fake.add_issue(OWNER, REPO, "busy thread")
    srv = server(fake)
    args = {**REPO_ARGS, "issue_number": number, "body": SAID, "idempotency_key": "busy-0001"}
    lose_the_answer(fake, "issues/create-comment")
    lost = await call(srv, "github_add_comment", args)
    assert lost["code"] == "upstream_unavailable"
    during = written_at(fake)  # made in the same second as the lost write
    for i in range(120):
        fake.add_comment(OWNER, REPO, number, f"bot comment {i}", author="hubot", created_at=during)
    for i in range(30):  # the caller's own, other words
        fake.add_comment(OWNER, REPO, number, f"{SAID} ({i})", author="octocat", created_at=during)
    retry = await call(srv, "github_add_comment", args)
    assert "code" not in retry, retry
    assert len(fake.calls("issues/create-comment")) == 1
    mine = [c for c in fake.comments(OWNER, REPO, number) if c.body == SAID]
    assert len(mine) == 1 and retry["comment"]["comment_id"] == mine[0].id
    assert max(int(r.query.get("page", "1")) for r in fake.calls("issues/list-comments")) == 2


async def test_issue_recovery_finds_the_issue_among_the_callers_newest(fake: FakeGitHub,
                                                                       seeded: dict[str, Any]) -> None:
    srv = server(fake)
    args = {**REPO_ARGS, "title": "Safari crash", "body": SAID, "idempotency_key": "newest-0001"}
    lose_the_answer(fake, "issues/create")
    assert (await call(srv, "github_create_issue", args))["code"] == "upstream_unavailable"
    during = written_at(fake)
    for i in range(150):  # the caller's own, made while the call ran (another agent's)
        fake.add_issue(OWNER, REPO, f"Safari crash #{i}", body=SAID, author="octocat", created_at=during)
    retry = await call(srv, "github_create_issue", args)
    assert [i.number for i in fake.issues(OWNER, REPO) if i.title == "Safari crash"] == [retry["issue"]["issue_number"]]
    assert len(fake.calls("issues/create")) == 1
    listed = fake.calls("issues/list-for-repo")  # 151 of the caller's issues are in the window
    assert [(r.query["creator"], r.query["page"]) for r in listed] == [("octocat", "1"), ("octocat", "2")]
    assert len(fake.calls("users/get-authenticated")) == 1


async def test_a_replayed_create_key_answers_before_labels_are_checked(fake: FakeGitHub,
                                                                       seeded: dict[str, Any]) -> None:
    """Regression: after the label was deleted, the replay answered label_not_found ("nothing was
    changed") although the issue exists, so an agent retried with a new key and duplicated it."""
    srv = server(fake)
    args = {**REPO_ARGS, "title": "Crash", "labels": ["triage"], "idempotency_key": "create-key-0001"}
    first = await call(srv, "github_create_issue", args)
    async with fake.client(TOKEN) as gh:
        assert (await gh.delete(f"/repos/{OWNER}/{REPO}/labels/triage")).status_code == 204
    replay = await call(srv, "github_create_issue", args)
    assert replay == {**first, "request_id": replay["request_id"]}


async def test_same_words_by_someone_else_or_before_the_call_are_not_the_write(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    number = seeded["first"]
    fake.add_comment(OWNER, REPO, number, SAID, author="hubot")
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    fake.add_comment(OWNER, REPO, number, SAID, author="octocat", created_at=long_ago)
    srv = server(fake)
    args = {**REPO_ARGS, "issue_number": number, "body": SAID, "idempotency_key": "not-mine-0001"}
    lose_the_answer(fake, "issues/create-comment", committed=False)
    assert (await call(srv, "github_add_comment", args))["code"] == "upstream_unavailable"
    retry = await call(srv, "github_add_comment", args)
    assert "code" not in retry, retry
    assert comment_bodies(fake, number) == [SAID, SAID]  # the old one and the retry's
    assert comment_bodies(fake, number, "hubot")[-1] == SAID
    assert retry["comment"]["comment_id"] == fake.comments(OWNER, REPO, number)[-1].id


async def test_two_identical_candidates_leave_the_outcome_unknown_and_write_nothing(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    number = seeded["first"]
    srv = server(fake)
    args = {**REPO_ARGS, "issue_number": number, "body": SAID, "idempotency_key": "twice-0001"}
    lose_the_answer(fake, "issues/create-comment")
    assert (await call(srv, "github_add_comment", args))["code"] == "upstream_unavailable"
    fake.add_comment(OWNER, REPO, number, SAID, author="octocat")  # the same words, same account
    for _ in range(2):  # the key stays unresolved: never a blind second post
        unknown = await call(srv, "github_add_comment", args)
        assert unknown["code"] == "outcome_unknown" and unknown["temporary"] is False
        mine = [c.id for c in fake.comments(OWNER, REPO, number) if c.body == SAID]
        assert unknown["details"] == {"field": "idempotency_key", "count": 2,
                                      "reason": unknown["details"]["reason"],
                                      "candidates": unknown["details"]["candidates"]}
        assert [c["id"] for c in unknown["details"]["candidates"]] == mine
        assert unknown["repair"]["tool"] == "github_get_issue"
        assert unknown["repair"]["arguments"] == {**REPO_ARGS, "issue_number": number}
        assert SAID not in json.dumps(unknown)
    assert len(fake.calls("issues/create-comment")) == 1
    fresh = await call(srv, "github_add_comment", {**args, "idempotency_key": "twice-0002"})
    assert "code" not in fresh and comment_bodies(fake, number) == [SAID] * 3


async def test_lost_answers_advise_the_same_key_only_to_keyed_calls(fake: FakeGitHub,
                                                                    seeded: dict[str, Any]) -> None:
    """Regression: every lost write answered "retry with the same idempotency key", also from
    tools that have no key."""
    srv = server(fake)
    lose_the_answer(fake, "issues/update")
    update = await call(srv, "github_update_issue",
                        {**REPO_ARGS, "issue_number": seeded["first"], "title": "Renamed"})
    lose_the_answer(fake, "issues/create-comment")
    keyless = await call(srv, "github_add_comment",
                         {**REPO_ARGS, "issue_number": seeded["first"], "body": SAID})
    # github_update_issue settles a lost answer by re-reading the issue (it answers what GitHub shows)
    assert update.get("code") is None and "idempotency" not in json.dumps(update)
    assert keyless["code"] == "upstream_unavailable" and "idempotency" not in json.dumps(keyless)
    lose_the_answer(fake, "issues/create-comment")
    keyed = await call(srv, "github_add_comment", {**REPO_ARGS, "issue_number": seeded["first"],
                                                   "body": SAID, "idempotency_key": "advice-0001"})
    assert keyed["details"]["reason"] == RETRY_WITH_THE_SAME_KEY


async def test_markers_written_by_older_versions_never_come_back(fake: FakeGitHub,
                                                                 seeded: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "Keyed long ago", body=LEGACY, author="octocat")
    fake.add_comment(OWNER, REPO, number, f"Done.\n\n{LEGACY}", author="octocat")
    fake.add_comment(OWNER, REPO, number, "<!-- ghmcp-idempotency:not-ours --> stays", author="hubot")
    srv = server(fake)
    seen = [
        await call(srv, "github_get_issue", {**REPO_ARGS, "issue_number": number}),
        await call(srv, "github_get_issue", {**REPO_ARGS, "issue_number": number, "detail": "summary"}),
        await call(srv, "github_search_issues", {**REPO_ARGS, "detail": "full"}),
    ]
    async with Client(srv, cache=None) as client:
        for uri in (f"ghissues://repos/{OWNER}/{REPO}/issues/{number}",
                    f"ghissues://repos/{OWNER}/{REPO}/issues/{number}/comments"):
            read = await client.read_resource(uri)
            seen.append(json.loads(read.contents[0].text))  # type: ignore[union-attr]
    assert all(LEGACY not in json.dumps(s) for s in seen)
    full = seen[0]
    assert full["issue"]["body"] == ""
    # a legacy marker is not the user's text: removed without a count; any other HTML comment is
    # hidden content (untrusted text is returned as GitHub's page shows it): removed and counted
    assert [(c["body"], c.get("hidden_removed")) for c in full["comments"]] == [("Done.", None),
                                                                                (" stays", 1)]


@pytest.mark.parametrize("failure", [{"kind": "status", "status": 503},
                                     {"kind": "status", "status": 403, "headers": {"retry-after": "60"},
                                      "body": {"message": "You have exceeded a secondary rate limit."}}],
                         ids=["5xx", "secondary-rate-limit"])
async def test_a_create_that_failed_before_its_write_is_retried_without_recovery(
        fake: FakeGitHub, seeded: dict[str, Any], failure: dict[str, Any]) -> None:
    """Issue 31: the label check before the POST failed (temporarily), and the retry with the key
    first looked for an issue that was never created: GET /user and a listing, two wasted
    requests (and `outcome_unknown` where the listing was ambiguous). Now the key is freed."""
    srv = server(fake)
    args = {**REPO_ARGS, "title": "Crash", "labels": ["triage"], "idempotency_key": "pre-write-0001"}
    fake.faults.add("issues/list-labels-for-repo", times=None, **failure)  # past the read's retries
    first = await call(srv, "github_create_issue", args)
    fake.faults.clear()
    assert first["code"] in ("upstream_unavailable", "rate_limited") and first["temporary"] is True
    assert fake.calls("issues/create") == []
    retry = await call(srv, "github_create_issue", args)
    assert "code" not in retry, retry
    assert len(fake.calls("issues/create")) == 1
    assert fake.calls("users/get-authenticated") == [] and fake.calls("issues/list-for-repo") == []
