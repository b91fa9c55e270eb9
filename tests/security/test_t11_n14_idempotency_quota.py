"""Security review t11 and correctness review n14: the memory store evicted its oldest entries
when full, a live one included, so one caller's flood of keyed writes (or enough keys while a
slow write ran) pushed another caller's key out and its retry wrote again. Keys are now bounded
by refusing new ones (`rate_limited`): per caller, and past each caller's reserved first keys
for all callers together (round 3's n5: test_n5_idempotency_capacity); nothing is evicted before
it expires."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
OTHER = "ghp_securityteststsecondcaller0000000000002"


def comment(number: int, key: str) -> dict[str, Any]:
    return {"owner": OWNER, "repo": REPO, "issue_number": number, "body": f"note {key}",
            "idempotency_key": key}


async def test_n14_a_full_store_refuses_a_new_key_instead_of_evicting_a_live_one(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    runner = IdempotencyRunner(MemoryStore(max_entries=3, reserved_per_caller=0))
    fake.faults.add(Match(operation="issues/create-comment", path=f"/issues/{seeded['first']}/comments"),
                    "slow_commit", delay=1.0, times=1)
    async with Opened(in_memory_server(fake, idempotency=runner)) as s:
        async def slow() -> None:
            await s.ok("github_add_comment", comment(seeded["first"], "slow-key-0001"))

        async def others() -> None:
            await anyio.sleep(0.2)
            for key in ("other-key-0002", "other-key-0003"):
                await s.ok("github_add_comment", comment(seeded["first"] + 1, key))
            err = await s.error("github_add_comment", comment(seeded["first"] + 1, "other-key-0004"),
                                "rate_limited")
            assert err["details"]["field"] == "idempotency_key" and err["temporary"]
            # the duplicate of the running write waits for it, never writes again
            await s.ok("github_add_comment", comment(seeded["first"], "slow-key-0001"))

        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            group.start_soon(others)
    bodies = [c.body for c in fake.comments(OWNER, REPO, seeded["first"])]
    assert bodies.count("note slow-key-0001") == 1


async def test_t11_one_callers_flood_never_costs_another_caller_its_key(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    fake.add_token(OTHER, "mallory", scopes=("repo",), collaborator_on=f"{OWNER}/{REPO}")
    runner = IdempotencyRunner(MemoryStore(keys_per_caller=5))
    victim_args = {"owner": OWNER, "repo": REPO, "title": "victim issue", "idempotency_key": "victim-key-0001"}
    async with Opened(in_memory_server(fake, idempotency=runner)) as victim, \
            Opened(in_memory_server(fake, token=OTHER, idempotency=runner)) as attacker:
        first = await victim.ok("github_create_issue", victim_args)
        refused = 0
        for i in range(12):  # real writes: only a call that changed something keeps its key
            data = await attacker.call("github_create_issue", {
                "owner": OWNER, "repo": REPO, "title": "x", "idempotency_key": f"attacker-key-{i:04d}"})
            refused += data.get("code") == "rate_limited" and "idempotency" in data["message"]
        again = await victim.ok("github_create_issue", victim_args)
    assert refused == 12 - 5  # its own quota stops it; nothing of the victim's goes
    assert again["issue"]["issue_number"] == first["issue"]["issue_number"]
    assert sum(i.title == "victim issue" for i in fake.issues(OWNER, REPO)) == 1
