"""Conditional reads against the fake GitHub (which answers ETags and 304s as GitHub does)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client
from runtime_support import GET_ISSUE, UPDATE_ISSUE, make_ctx

from fakegithub import FakeClock, FakeGitHub
from ghmcp_runtime.calls.http_cache import HttpCache, Limits, parse_setting
from ghmcp_runtime.calls.http_cache_store import MemoryStorage
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.serving.app import Settings, build_server
from github_issues_mcp import SERVER

pytestmark = pytest.mark.anyio
OWNER, REPO = "octo-org", "secret-plans"
ALICE, BOB = "ghp_alicetoken000000000000000000000000001", "ghp_bobtoken0000000000000000000000000002"
ADD_LABELS = Operation(operation_id="issues/add-labels", method="POST",
                       path="/repos/{owner}/{repo}/issues/{issue_number}/labels",
                       not_found="issue_not_found", success_status=(200,))
LIST_COMMENTS = Operation(operation_id="issues/list-comments", method="GET",
                          path="/repos/{owner}/{repo}/issues/{issue_number}/comments",
                          not_found="issue_not_found", success_status=(200,))
ISSUE = {"owner": OWNER, "repo": REPO, "issue_number": 1}


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    github = FakeGitHub(clock=FakeClock("2024-03-01T12:00:00Z"))
    github.add_repo(OWNER, REPO, private=True)
    github.add_token(ALICE, "alice", ("repo",), collaborator_on=f"{OWNER}/{REPO}")
    github.add_token(BOB, "bob", ("repo",), collaborator_on=())
    github.add_label(OWNER, REPO, "bug")
    github.add_issue(OWNER, REPO, "Launch date", "only collaborators may read this")
    github.add_comment(OWNER, REPO, 1, "first")
    yield github
    assert github.violations == [], github.violations


def cached_upstream(fake: FakeGitHub, limits: Limits | None = None) -> ForgeUpstream:
    return ForgeUpstream(base_url="http://fake.test", transport=fake.asgi_transport(),
                          cache=HttpCache("memory", limits))


def storage_of(up: ForgeUpstream) -> MemoryStorage:
    storage = up._http()._transport.storage  # type: ignore[attr-defined]
    assert isinstance(storage, MemoryStorage)
    return storage


def statuses(fake: FakeGitHub) -> list[tuple[str, int, bool]]:
    return [(t.method, t.status, t.spent) for t in fake.timeline]


async def read(up: ForgeUpstream, token: str, identity: str, op: Operation = GET_ISSUE) -> Any:
    return (await up.call(make_ctx(up, credential=token, identity=identity), op, path=ISSUE,
                          query=None, body=None)).data


async def test_a_repeated_read_is_a_304_with_the_same_payload(fake: FakeGitHub) -> None:
    up = cached_upstream(fake)
    first = await read(up, ALICE, "u_alice")
    again = await read(up, ALICE, "u_alice")
    assert again == first and again["title"] == "Launch date"
    assert statuses(fake) == [("GET", 200, True), ("GET", 304, False)]
    await up.aclose()


async def test_cached_bodies_never_cross_credentials(fake: FakeGitHub) -> None:
    up = cached_upstream(fake)
    assert (await read(up, ALICE, "u_alice"))["title"] == "Launch date"
    with pytest.raises(Exception) as refused:  # bob cannot see the private repository
        await read(up, BOB, "u_bob")
    assert getattr(refused.value, "code", None) in ("issue_not_found", "repo_not_found")
    # bob's request went out unconditional (a 404, budget spent), never answered from alice's copy
    assert statuses(fake)[1] == ("GET", 404, True)
    assert storage_of(up).entries == 1  # alice's read; bob's 404 is not stored
    for stored in storage_of(up)._entries.values():  # no credential is kept as cache data
        assert "authorization" not in stored.request.headers
        assert ALICE not in repr(stored)
    await up.aclose()


async def test_same_identity_shares_and_other_identity_does_not(fake: FakeGitHub) -> None:
    fake.grant("bob", f"{OWNER}/{REPO}")
    up = cached_upstream(fake)
    await read(up, ALICE, "u_alice")
    await read(up, BOB, "u_bob")
    await read(up, BOB, "u_bob")
    assert [s for _, s, _ in statuses(fake)] == [200, 200, 304]
    await up.aclose()


async def test_writes_are_never_served_from_the_cache(fake: FakeGitHub) -> None:
    up = cached_upstream(fake)
    ctx = make_ctx(up, credential=ALICE, identity="u_alice")
    await read(up, ALICE, "u_alice")
    patched = await up.call(ctx, UPDATE_ISSUE, path=ISSUE, query=None, body={"title": "Launch moved"})
    again = await up.call(ctx, UPDATE_ISSUE, path=ISSUE, query=None, body={"title": "Launch moved"})
    assert patched.data["title"] == again.data["title"] == "Launch moved"
    assert [m for m, _, _ in statuses(fake)] == ["GET", "PATCH", "PATCH"]  # every write reached GitHub
    assert all(s.request.method == "GET" for s in storage_of(up)._entries.values())
    # the write invalidated the stored read of the same URL; the next read is a full 200
    assert (await read(up, ALICE, "u_alice"))["title"] == "Launch moved"
    assert statuses(fake)[-1] == ("GET", 200, True)
    await up.aclose()


async def test_a_change_elsewhere_is_seen_despite_max_age(fake: FakeGitHub) -> None:
    """GitHub allows max-age=60; a write to another URL (the labels) must still show at once."""
    up = cached_upstream(fake)
    ctx = make_ctx(up, credential=ALICE, identity="u_alice")
    assert (await read(up, ALICE, "u_alice"))["labels"] == []
    await up.call(ctx, ADD_LABELS, path=ISSUE, query=None, body={"labels": ["bug"]})
    assert [lb["name"] for lb in (await read(up, ALICE, "u_alice"))["labels"]] == ["bug"]
    assert statuses(fake)[-1] == ("GET", 200, True)  # revalidated, changed, so a full answer
    await up.aclose()


async def test_the_memory_cache_is_bounded(fake: FakeGitHub) -> None:
    for i in range(2, 8):
        fake.add_issue(OWNER, REPO, f"issue {i}", "x" * 200 * i)
    up = cached_upstream(fake, Limits(max_entries=3, max_bytes=10_000, max_entry_bytes=1500))
    ctx = make_ctx(up, credential=ALICE, identity="u_alice")
    for number in range(1, 8):
        data = (await up.call(ctx, GET_ISSUE, path={**ISSUE, "issue_number": number},
                              query=None, body=None)).data
        assert data["number"] == number  # a body too large to keep is still served whole
        storage = storage_of(up)
        assert storage.entries <= 3 and storage.size <= 10_000
    kept = {s.request.url.rsplit("/", 1)[1] for s in storage_of(up)._entries.values()}
    assert kept <= {"5", "6", "7"} and "7" not in kept  # issue 7's body (1,400 B + JSON) is too big
    await up.aclose()


async def test_the_tool_result_is_the_same_from_a_304(fake: FakeGitHub) -> None:
    up = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                        transport=fake.asgi_transport(), cache=HttpCache("memory"))
    server = build_server(SERVER, Settings(token=ALICE), upstream=up)
    args = {"owner": OWNER, "repo": REPO, "issue_number": 1, "detail": "full"}
    async with Client(server, mode="legacy", cache=None) as client:
        first = (await client.call_tool("github_get_issue", args)).structured_content
        second = (await client.call_tool("github_get_issue", args)).structured_content
    assert first is not None and second is not None
    assert {k: v for k, v in first.items() if k != "request_id"} == \
        {k: v for k, v in second.items() if k != "request_id"}
    # the token's scopes (read at start, past the cache), then issue + comments, twice
    assert (fake.timeline[0].operation_id, fake.timeline[0].status) == ("rate-limit/get", 200)
    assert [s for _, s, _ in statuses(fake)][1:] == [200, 200, 304, 304]
    await up.aclose()


def test_setting() -> None:
    assert parse_setting("off") is None
    assert parse_setting("memory") == HttpCache("memory")
    assert parse_setting("redis://127.0.0.1:6379/0") == HttpCache("redis://127.0.0.1:6379/0")
    with pytest.raises(ValueError, match="memory"):
        parse_setting("disk")
    assert Settings.from_env({}).http_cache == "memory"
    with pytest.raises(ValueError, match="GHMCP_HTTP_CACHE"):
        Settings.from_env({"GHMCP_HTTP_CACHE": "yes"})
    shared = Settings.from_env({"GHMCP_HTTP_CACHE": "redis://127.0.0.1:6379/0"})
    with pytest.raises(ValueError, match="GHMCP_SERVER_SECRET"):  # replicas' identities would differ
        shared.check()
    Settings.from_env({"GHMCP_HTTP_CACHE": "redis://127.0.0.1:6379/0",
                       "GHMCP_SERVER_SECRET": "s" * 32}).check()


async def test_every_read_is_revalidated_and_github_sees_only_validators() -> None:
    """Even a response GitHub calls fresh for 60 s, without Vary, is revalidated before reuse; the
    cache's own `no-cache` directive never leaves the process."""
    sent: list[httpx.Headers] = []  # as sent (the cache restores the request's own headers after)

    def github(request: httpx.Request) -> httpx.Response:
        sent.append(httpx.Headers(request.headers))
        headers = {"etag": 'W/"v1"', "cache-control": "private, max-age=60, s-maxage=60"}
        if request.headers.get("if-none-match") == 'W/"v1"':
            return httpx.Response(304, headers={**headers, "content-length": "0"})
        return httpx.Response(200, json={"number": 1, "title": "t"}, headers=headers)

    up = ForgeUpstream(transport=httpx.MockTransport(github), cache=HttpCache("memory"))
    ctx = make_ctx(up, identity="u_x")
    first = await up.call(ctx, GET_ISSUE, path=ISSUE, query=None, body=None)
    second = await up.call(ctx, GET_ISSUE, path=ISSUE, query=None, body=None)
    assert first.data == second.data == {"number": 1, "title": "t"}
    assert len(sent) == 2
    assert "if-none-match" not in sent[0] and sent[1]["if-none-match"] == 'W/"v1"'
    assert all("cache-control" not in headers for headers in sent)
    assert sent[1]["authorization"] == sent[0]["authorization"]
    await up.aclose()


async def test_requests_without_a_caller_identity_bypass_the_cache() -> None:
    calls: list[httpx.Request] = []

    def github(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json={"n": len(calls)}, headers={"etag": '"x"'})

    from ghmcp_runtime.calls.http_cache_store import caching_transport

    async with httpx.AsyncClient(transport=caching_transport(httpx.MockTransport(github), "memory")) as client:
        for _ in range(2):
            response = await client.get("https://api.github.com/x", headers={"if-none-match": '"x"'})
            assert response.status_code == 200 and "caching" not in response.extensions
    assert len(calls) == 2
