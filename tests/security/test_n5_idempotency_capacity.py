"""Security review n5: the per-caller key quota fixed round 2's eviction, but the memory store
also refused every new key once 10,000 were held in all, and a rate-limited token's keyed create
failed fast while its key stayed pending 10 minutes: ten such tokens filled the store without
writing anything, and then every other caller's keyed write answered rate_limited for ~9 minutes.

Now (memory and Redis alike) a call that changed nothing at GitHub (rate-limited, refused, or
failed before a write was sent) frees its key, so only real writes hold capacity; and each
caller's first keys are reserved: only keys past them count in the capacity callers share, so no
set of callers can deny another caller's first keyed write."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, IdempotencyStore, MemoryStore
from ghmcp_runtime.stores.redis_store import RedisStore
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
FILLERS = [f"ghp_securitytestsfiller{i:02d}000000000000000000" for i in range(4)]


def login(token: str) -> str:
    return f"filler{token[23:25]}"


SECRET = b"n5-one-server-secret"  # every server instance here names a token's caller alike


@pytest.fixture(params=["memory", "redis"])
async def small_store(request: pytest.FixtureRequest) -> AsyncIterator[IdempotencyStore]:
    """A store whose shared capacity is 6 keys past each caller's first 2 (the defaults are
    10,000 and 10: the same rules, smaller numbers)."""
    limits = {"keys_per_caller": 8, "reserved_per_caller": 2}
    if request.param == "memory":
        yield MemoryStore(max_entries=6, **limits)
        return
    store = RedisStore(request.getfixturevalue("redis_url"), shared_keys=6, **limits)
    yield store
    await store.aclose()


def create(key: str | None, title: str = "x") -> dict[str, Any]:
    return {"owner": OWNER, "repo": REPO, "title": title, **({"idempotency_key": key} if key else {})}


async def test_rate_limited_keyed_writes_hold_no_capacity(
    fake: FakeGitHub, seeded: dict[str, Any], small_store: IdempotencyStore
) -> None:
    """n5 as the review ran it: rate-limited tokens flood keyed creates; afterwards the victim's
    keyed create still writes, and the store holds only the victim's key."""
    runner = IdempotencyRunner(small_store)
    limited = 0
    for token in FILLERS:
        fake.add_token(token, login(token), scopes=("repo",), collaborator_on=f"{OWNER}/{REPO}")
        fake.set_rate_limit(token, remaining=0)
        async with Opened(in_memory_server(fake, token=token, idempotency=runner, server_secret=SECRET)) as s:
            for i in range(9):  # past the caller's own quota and the shared keys, were keys held
                data = await s.call("github_create_issue", create(f"fill-{token[23:25]}-{i:03d}"))
                limited += data["code"] == "rate_limited" and "idempotency" not in data["message"]
    assert limited == len(FILLERS) * 9  # GitHub refused each; the key quota never did
    async with Opened(in_memory_server(fake, idempotency=runner, server_secret=SECRET)) as victim:
        done = await victim.ok("github_create_issue", create("victim-after-0001", "victim after"))
        again = await victim.ok("github_create_issue", create("victim-after-0001", "victim after"))
    assert again["issue"]["issue_number"] == done["issue"]["issue_number"]
    assert [i.title for i in fake.issues(OWNER, REPO)].count("victim after") == 1
    # a retried key of a refused call runs afresh once the limit lifts (nothing to replay)
    fake.set_rate_limit(FILLERS[0], remaining=5000)
    async with Opened(in_memory_server(fake, token=FILLERS[0], idempotency=runner, server_secret=SECRET)) as s:
        await s.ok("github_create_issue", create(f"fill-{FILLERS[0][23:25]}-000"))


async def test_no_set_of_callers_can_deny_another_callers_first_keyed_write(
    fake: FakeGitHub, seeded: dict[str, Any], small_store: IdempotencyStore
) -> None:
    """Real writes fill every shared key; a caller new to the store still gets its first keys."""
    runner = IdempotencyRunner(small_store)
    held = 0
    for token in FILLERS[:2]:
        fake.add_token(token, login(token), scopes=("repo",), collaborator_on=f"{OWNER}/{REPO}")
        async with Opened(in_memory_server(fake, token=token, idempotency=runner, server_secret=SECRET)) as s:
            for i in range(6):
                data = await s.call("github_create_issue", create(f"real-{token[23:25]}-{i:03d}"))
                held += "code" not in data
    assert held == 2 + 4 + 2 + 2  # one caller: reserved, shared; the other: reserved, the last shared
    async with Opened(in_memory_server(fake, token=FILLERS[1], idempotency=runner, server_secret=SECRET)) as filler:
        refused = await filler.error("github_create_issue", create("real-one-more-0001"), "rate_limited")
    assert refused["details"]["reason"] == "the idempotency keys callers share are all taken (6)"
    async with Opened(in_memory_server(fake, token=TOKEN, idempotency=runner, server_secret=SECRET)) as victim:
        for key in ("victim-first-0001", "victim-second-0002"):
            await victim.ok("github_create_issue", create(key, "victim"))
        # past its reserved keys, a caller waits for the shared ones like everyone (a batch too)
        third = await victim.error("github_update_issues", {
            "owner": OWNER, "repo": REPO, "issue_numbers": [seeded["first"]],
            "add_labels": ["wontfix"], "idempotency_key": "victim-third-0003"}, "rate_limited")
    assert third["details"]["field"] == "idempotency_key"
    assert [i.title for i in fake.issues(OWNER, REPO)].count("victim") == 2
    assert "wontfix" not in fake.label_names(OWNER, REPO, seeded["first"])
