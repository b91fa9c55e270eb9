"""Two replicas behind one endpoint: separate `github-issues-mcp --transport http` processes on
loopback sharing GHMCP_SERVER_SECRET, one redis-server and one fake GitHub.

Replica A gets the store from `--idempotency-store`, replica B from `GHMCP_IDEMPOTENCY_STORE`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO
from tests.http.conftest import LOGIN_X, TOKEN_X, TOKEN_Y
from tests.http.http_support import http_server_process, mcp_client, server_env

pytestmark = pytest.mark.anyio

BASE = {"owner": OWNER, "repo": REPO}
UPSTREAM_TIMEOUT_S = "1.5"  # replica timeout towards GitHub; the lost-response fault stalls longer


@pytest.fixture
def replicas(fake_url: str, redis_url: str) -> Iterator[tuple[str, str]]:
    env = server_env(fake_url, GHMCP_TIMEOUT_S=UPSTREAM_TIMEOUT_S)
    with (
        http_server_process(env, "--idempotency-store", redis_url) as a,
        http_server_process({**env, "GHMCP_IDEMPOTENCY_STORE": redis_url}) as b,
    ):
        yield a, b


def numbers_titled(fake: FakeGitHub, title: str) -> list[int]:
    with fake.lock:
        repo = fake.state.find_repo(OWNER, REPO)
        assert repo is not None
        return [i.number for i in repo.issues.values() if i.title == title and not i.deleted]


def bodies_titled(fake: FakeGitHub, title: str) -> list[str | None]:
    """Bodies as stored: exactly what was sent, nothing appended."""
    with fake.lock:
        repo = fake.state.find_repo(OWNER, REPO)
        assert repo is not None
        return [i.body for i in repo.issues.values() if i.title == title and not i.deleted]


def creates(fake: FakeGitHub) -> int:
    with fake.lock:
        return sum(1 for r in fake.requests if r.method == "POST" and r.path.endswith("/issues"))


def without_request_id(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "request_id"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_same_key_on_two_replicas_creates_one_issue(
    replicas: tuple[str, str], fake: FakeGitHub, mode: str
) -> None:
    a, b = replicas
    title = f"Scale-out create ({mode})"
    args = {**BASE, "title": title, "body": "Seen on both replicas.", "labels": ["bug"],
            "idempotency_key": f"scale-{mode}-1"}
    async with mcp_client(a, TOKEN_X, mode) as on_a:
        first = await on_a.call_tool("github_create_issue", args)
    async with mcp_client(b, TOKEN_X, mode) as on_b:
        second = await on_b.call_tool("github_create_issue", args)
        different = await on_b.call_tool("github_create_issue", {**args, "title": "Other title"})
    assert not first.is_error and not second.is_error, (first, second)
    assert without_request_id(second.structured_content) == without_request_id(first.structured_content)
    assert second.structured_content["request_id"] != first.structured_content["request_id"]
    assert numbers_titled(fake, title) == [first.structured_content["issue_number"]]
    assert bodies_titled(fake, title) == ["Seen on both replicas."]
    assert creates(fake) == 1
    # the key's fingerprint travelled through Redis too: other arguments are refused on B
    assert different.is_error and different.structured_content["code"] == "invalid_field"
    assert different.structured_content["details"]["field"] == "idempotency_key"


async def test_same_key_from_another_user_on_the_other_replica_is_that_users_own_issue(
    replicas: tuple[str, str], fake: FakeGitHub
) -> None:
    a, b = replicas
    args = {**BASE, "title": "Per-user key", "idempotency_key": "shared-key"}
    async with mcp_client(a, TOKEN_X) as x:
        made_x = await x.call_tool("github_create_issue", args)
    async with mcp_client(b, TOKEN_Y) as y:
        made_y = await y.call_tool("github_create_issue", args)
    nx, ny = made_x.structured_content["issue_number"], made_y.structured_content["issue_number"]
    assert nx != ny and sorted(numbers_titled(fake, "Per-user key")) == sorted([nx, ny])


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_cursor_minted_by_a_is_accepted_by_b_for_the_same_user_only(
    replicas: tuple[str, str], seeded: dict[str, Any], mode: str
) -> None:
    a, b = replicas
    n = seeded["first"]
    async with mcp_client(a, TOKEN_X, mode) as on_a:
        page1 = await on_a.call_tool("github_get_issue", {**BASE, "issue_number": n})
    cursor = page1.structured_content["comments_next_cursor"]
    assert page1.structured_content["comments_has_more"] and cursor
    async with mcp_client(b, TOKEN_X, mode) as x_on_b, mcp_client(b, TOKEN_Y, mode) as y_on_b:
        page2 = await x_on_b.call_tool("github_get_issue",
                                       {**BASE, "issue_number": n, "comments_cursor": cursor})
        refused = await y_on_b.call_tool("github_get_issue",
                                         {**BASE, "issue_number": n, "comments_cursor": cursor})
    assert not page2.is_error, page2.structured_content
    ids1 = {c["comment_id"] for c in page1.structured_content["comments"]}
    ids2 = {c["comment_id"] for c in page2.structured_content["comments"]}
    assert len(ids1) == 30 and len(ids2) == 5 and not ids1 & ids2  # the next page (35 comments)
    assert refused.is_error
    assert refused.structured_content["code"] == "invalid_field"
    assert refused.structured_content["details"]["field"] == "comments_cursor"


async def test_lost_response_on_a_is_recovered_by_b_without_a_duplicate(
    replicas: tuple[str, str], fake: FakeGitHub
) -> None:
    a, b = replicas
    title = "Lost response across replicas"
    args = {**BASE, "title": title, "idempotency_key": "lost-response-0001"}
    fake.faults.add("issues/create", "timeout", after_commit=True, delay=4)
    async with mcp_client(a, TOKEN_X) as on_a:
        lost = await on_a.call_tool("github_create_issue", args)
    assert lost.is_error, lost.structured_content
    assert lost.structured_content["code"] == "upstream_unavailable", lost.structured_content
    assert lost.structured_content["temporary"] is True
    committed = numbers_titled(fake, title)
    assert len(committed) == 1  # GitHub did create it; A never saw the answer

    async with mcp_client(b, TOKEN_X) as on_b:
        retry = await on_b.call_tool("github_create_issue", args)
    assert not retry.is_error, retry.structured_content
    assert retry.structured_content["issue_number"] == committed[0]
    assert numbers_titled(fake, title) == committed  # no duplicate
    assert bodies_titled(fake, title) == [None]  # no body sent, none stored
    assert creates(fake) == 1

    async with mcp_client(a, TOKEN_X) as on_a:  # A now replays the recorded result
        replay = await on_a.call_tool("github_create_issue", args)
    assert replay.structured_content["issue_number"] == committed[0]
    with fake.lock:
        repo = fake.state.find_repo(OWNER, REPO)
        assert repo is not None and repo.issues[committed[0]].author == LOGIN_X


async def test_duplicate_arriving_while_the_first_write_is_in_flight_waits_for_it(
    replicas: tuple[str, str], fake: FakeGitHub
) -> None:
    """B receives the key while A's create is still running: B waits for A's result, no 2nd write."""
    import anyio

    a, b = replicas
    title = "In flight across replicas"
    args = {**BASE, "title": title, "body": "Written once.", "idempotency_key": "in-flight-0001"}
    fake.faults.add("issues/create", "slow_commit", delay=1.0)  # under the 1.5 s upstream timeout
    results: dict[str, Any] = {}

    async def call(name: str, url: str, after: float) -> None:
        await anyio.sleep(after)
        async with mcp_client(url, TOKEN_X) as client:
            results[name] = await client.call_tool("github_create_issue", args)

    async with anyio.create_task_group() as group:
        group.start_soon(call, "a", a, 0.0)
        group.start_soon(call, "b", b, 0.4)
    assert not results["a"].is_error and not results["b"].is_error, results
    assert without_request_id(results["a"].structured_content) == \
        without_request_id(results["b"].structured_content)
    assert len(numbers_titled(fake, title)) == 1 and creates(fake) == 1
    assert bodies_titled(fake, title) == ["Written once."]
