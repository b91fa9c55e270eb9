from __future__ import annotations

from typing import Any

import anyio
import pytest

from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from tests.runtime.runtime_support import long_attempt_scenario, stale_attempt_scenario

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Writes:
    """A fake write that counts its calls and can fail in scripted ways."""

    def __init__(self, *outcomes: Any) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    async def __call__(self) -> Any:
        self.calls += 1
        outcome = self.outcomes.pop(0) if self.outcomes else {"number": self.calls}
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def runner(clock: Clock | None = None, **kw: Any) -> IdempotencyRunner:
    return IdempotencyRunner(MemoryStore(clock=clock or Clock(), **kw))


async def go(r: IdempotencyRunner, run: Any, key: str | None = "k1", fp: str = "fp1",
             recover: Any = None, scope: tuple[Any, ...] = ("u_1", "issues_create")) -> Any:
    return await r.run(key=key, scope=scope, fingerprint=fp, run=run, recover=recover)


def unknown() -> OutcomeUnknown:
    return OutcomeUnknown("upstream_unavailable", "lost", temporary=True, retry_after_ms=1000)


async def test_no_key_just_runs() -> None:
    r, w = runner(), Writes()
    assert await go(r, w, key=None) == {"number": 1}
    assert await go(r, w, key=None) == {"number": 2}


async def test_done_replays_identical_result() -> None:
    r, w = runner(), Writes()
    first = await go(r, w)
    first["mutated"] = True  # callers may decorate their copy
    assert await go(r, w) == {"number": 1} and w.calls == 1


async def test_keys_are_scoped() -> None:
    r, w = runner(), Writes()
    await go(r, w, scope=("u_1", "t"))
    await go(r, w, scope=("u_2", "t"))
    assert w.calls == 2


async def test_fingerprint_mismatch() -> None:
    r, w = runner(), Writes()
    await go(r, w)
    with pytest.raises(ToolError) as info:
        await go(r, w, fp="fp2")
    assert info.value.code == "invalid_field"
    assert info.value.details == {"field": "idempotency_key", "reason": "reused with different arguments"}
    assert w.calls == 1


async def test_definite_failure_releases_the_key() -> None:
    r, w = runner(), Writes(ToolError("invalid_field", "bad"))
    with pytest.raises(ToolError):
        await go(r, w)
    assert await go(r, w) == {"number": 2}


async def test_unknown_outcome_then_recover_finds_the_write() -> None:
    r, w = runner(), Writes(unknown())
    with pytest.raises(OutcomeUnknown):
        await go(r, w)

    async def recover(first_start: Any) -> Any:
        return {"number": 41}

    assert await go(r, w, recover=recover) == {"number": 41}
    assert w.calls == 1
    assert await go(r, w) == {"number": 41}  # now done


async def test_unknown_outcome_then_recover_finds_nothing_runs_again() -> None:
    r, w = runner(), Writes(unknown())
    with pytest.raises(OutcomeUnknown):
        await go(r, w)

    async def recover(first_start: Any) -> Any:
        return None

    assert await go(r, w, recover=recover) == {"number": 2}
    assert w.calls == 2


async def test_unexpected_exception_keeps_pending() -> None:
    r, w = runner(), Writes(RuntimeError("bug after the write"))
    with pytest.raises(RuntimeError):
        await go(r, w)
    recovered = []

    async def recover(first_start: Any) -> Any:
        recovered.append(True)
        return {"number": 9}

    assert await go(r, w, recover=recover) == {"number": 9} and recovered


async def test_concurrent_duplicates_run_once() -> None:
    r = runner()
    gate = anyio.Event()
    calls = 0

    async def slow() -> Any:
        nonlocal calls
        calls += 1
        await gate.wait()
        return {"number": 5}

    results: list[Any] = []

    async def one() -> None:
        results.append(await go(r, slow))

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(one)
        await anyio.sleep(0.01)
        gate.set()
    assert calls == 1 and results == [{"number": 5}] * 3


async def test_concurrent_duplicate_after_definite_failure_runs_itself() -> None:
    r = runner()
    gate = anyio.Event()
    outcomes: list[Any] = [ToolError("conflict", "no"), {"number": 6}]

    async def write() -> Any:
        await gate.wait()
        out = outcomes.pop(0)
        if isinstance(out, Exception):
            raise out
        return out

    results: list[Any] = []

    async def one() -> None:
        try:
            results.append(await go(r, write))
        except ToolError as e:
            results.append(e.code)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one)
        await anyio.sleep(0.01)
        tg.start_soon(one)
        await anyio.sleep(0.01)
        gate.set()
    assert results == ["conflict", {"number": 6}]


async def test_memory_store_ttl_and_bound() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock, max_entries=3, reserved_per_caller=0)
    r, w = IdempotencyRunner(store, ttl_s=600), Writes()
    await go(r, w)
    clock.now = 599
    await go(r, w)
    assert w.calls == 1
    clock.now = 600 + 1  # expired: runs again
    await go(r, w)
    assert w.calls == 2
    for i in range(2):
        await go(r, w, key=f"other{i}")
    assert len(store) == 3
    with pytest.raises(ToolError) as full:  # bounded by refusing, never by evicting a live key
        await go(r, w, key="one-too-many")
    assert full.value.code == "rate_limited" and full.value.temporary
    assert await go(r, w, key="other0") == {"number": 3}  # the first keys are intact
    clock.now = 1300  # all expired: room again
    await go(r, w, key="later")
    assert len(store) == 1


async def test_each_caller_has_a_quota_of_live_keys_and_nobody_else_pays() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock, keys_per_caller=2)
    r, w = IdempotencyRunner(store, ttl_s=600), Writes()
    for key in ("a", "b"):
        await go(r, w, key=key, scope=("c_mallory", "issues_create"))
    with pytest.raises(ToolError) as refused:
        await go(r, w, key="c", scope=("c_mallory", "issues_create"))
    assert refused.value.code == "rate_limited"
    assert refused.value.retry_after_ms == 600_000
    assert refused.value.details == {"field": "idempotency_key",
                                     "reason": "this caller holds the most idempotency keys allowed (2)"}
    await go(r, w, key="a", scope=("c_alice", "issues_create"))  # another caller: unaffected
    calls = w.calls
    assert await go(r, w, key="a", scope=("c_mallory", "issues_create")) == {"number": 1}
    assert w.calls == calls  # mallory's own keys still replay
    clock.now = 601
    await go(r, w, key="c", scope=("c_mallory", "issues_create"))  # expired keys free the quota



async def test_every_callers_first_keys_are_reserved_whoever_holds_the_shared_ones() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock, max_entries=2, reserved_per_caller=1, keys_per_caller=10)
    r, w = IdempotencyRunner(store, ttl_s=600), Writes()
    for key in ("a", "b", "c"):  # one reserved, two shared: the shared keys are all taken
        await go(r, w, key=key, scope=("c_mallory", "issues_create"))
    with pytest.raises(ToolError) as refused:
        await go(r, w, key="d", scope=("c_mallory", "issues_create"))
    assert refused.value.details == {
        "field": "idempotency_key",
        "reason": "the idempotency keys callers share are all taken (2)"}
    await go(r, w, key="a", scope=("c_alice", "issues_create"))  # her first key: reserved
    with pytest.raises(ToolError):  # her second would be a shared one
        await go(r, w, key="b", scope=("c_alice", "issues_create"))
    clock.now = 601
    await go(r, w, key="d", scope=("c_mallory", "issues_create"))  # expired keys free them


async def test_an_attempt_that_changed_nothing_frees_its_key() -> None:
    """A rate-limited or refused call holds no capacity: its key is released, whatever the
    error, and a success that changed nothing (nothing to replay) is not stored either."""
    store = MemoryStore(keys_per_caller=1, reserved_per_caller=1)
    r = IdempotencyRunner(store, ttl_s=600)
    limited = ToolError("rate_limited", "slow down", temporary=True, retry_after_ms=1000)

    async def refused() -> Any:
        raise limited

    async def unchanged() -> Any:
        return {"changed": []}

    for i, run in enumerate((refused, refused, unchanged, unchanged)):
        try:
            await r.run(key=f"k{i}", scope=("c_mallory", "t"), fingerprint="f", run=run, recover=None,
                        changed=lambda: False)
        except ToolError as err:
            assert err is limited
        assert len(store) == 0
    assert await r.run(key="k9", scope=("c_mallory", "t"), fingerprint="f", run=unchanged,
                       recover=None, changed=lambda: True) == {"changed": []}
    assert len(store) == 1


def store_key(key: str, *scope: Any) -> str:
    import hashlib

    from ghmcp_runtime.core.versioning import canonical_json

    return hashlib.sha256(canonical_json([*scope, key])).hexdigest()


async def test_a_running_attempt_is_never_raced_and_a_stuck_one_times_out_temporarily() -> None:
    store = MemoryStore(clock=Clock())
    assert (await store.claim(store_key("k"), "fp", 600, lease_s=60)).state == "new"
    write = Writes()
    with pytest.raises(ToolError) as info:
        await IdempotencyRunner(store, wait_s=0.2, poll_s=0.05).run(
            key="k", scope=(), fingerprint="fp", run=write, recover=None)
    assert info.value.code == "upstream_unavailable" and info.value.temporary
    assert write.calls == 0  # the other attempt still holds the lease


async def test_an_expired_lease_is_taken_over_and_recovers_first() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock)
    assert (await store.claim(store_key("k"), "fp", 600, lease_s=60)).state == "new"
    clock.now = 61.0  # that caller died without finishing
    write = Writes()

    async def recover(first_start: Any) -> Any:
        return {"number": 7}

    result = await IdempotencyRunner(store).run(key="k", scope=(), fingerprint="fp", run=write,
                                                recover=recover)
    assert result == {"number": 7} and write.calls == 0
    assert not await store.take_over(store_key("k"))  # done now: nothing to take over


async def test_a_lost_outcome_gives_the_lease_up_at_once() -> None:
    store = MemoryStore(clock=Clock())
    lost = OutcomeUnknown("upstream_unavailable", "lost", temporary=True)
    with pytest.raises(ToolError):
        await IdempotencyRunner(store).run(key="k", scope=(), fingerprint="fp", run=Writes(lost),
                                           recover=None)
    claim = await store.claim(store_key("k"), "fp", 600)
    assert claim.state == "pending" and not claim.running


async def test_an_attempt_longer_than_the_lease_keeps_it() -> None:
    """Regression: the lease was never renewed, so a duplicate arriving after it ran out took the
    key over and wrote a second time while the first attempt was still running."""
    store = MemoryStore()
    await long_attempt_scenario(store, store)


@pytest.mark.parametrize("stale_outcome", [
    {"by": "A"},  # would record A's result over B's
    ToolError("invalid_field", "definite failure"),  # would free B's key: a third caller writes
    OutcomeUnknown("upstream_unavailable", "lost", temporary=True, retry_after_ms=10),  # would drop B's lease
], ids=["complete", "release", "mark_unknown"])
async def test_a_stale_attempt_cannot_finish_or_free_a_newer_one(stale_outcome: Any) -> None:
    await stale_attempt_scenario(MemoryStore(), stale_outcome)


async def test_lease_steps_act_only_for_the_current_lease() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock)
    first = await store.claim("k", "fp", 600, lease_s=60)
    assert first.state == "new" and first.lease
    clock.now = 61.0
    second = await store.take_over("k", lease_s=60)
    assert second and second != first.lease
    assert not await store.renew("k", first.lease)
    await store.mark_unknown("k", first.lease)
    await store.release("k", first.lease)
    await store.complete("k", first.lease, {"stale": True})
    await store.release("k", "")
    claim = await store.claim("k", "fp", 600)
    assert claim.state == "pending" and claim.running  # still the newer attempt's
    assert await store.renew("k", second)
    await store.complete("k", second, {"number": 2})
    assert (await store.claim("k", "fp", 600)).result == {"number": 2}


async def test_renewal_keeps_a_pending_entry_past_its_ttl() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock)
    lease = (await store.claim("k", "fp", 10, lease_s=6)).lease
    assert lease
    for now in (4.0, 8.0, 12.0, 16.0):
        clock.now = now
        assert await store.renew("k", lease, 6)
    assert (await store.claim("k", "fp", 10)).state == "pending"  # 16 s > the 10 s TTL


async def test_recover_gets_the_first_attempts_start_across_take_overs() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock, wall_clock=lambda: 1_800_000_000.0 + clock.now)
    r = IdempotencyRunner(store)
    with pytest.raises(OutcomeUnknown):
        await go(r, Writes(unknown()))
    clock.now = 120.0
    starts: list[Any] = []

    async def recover(first_start: Any) -> Any:
        starts.append(first_start)
        return None

    with pytest.raises(OutcomeUnknown):
        await go(r, Writes(unknown()), recover=recover)
    clock.now = 300.0
    assert await go(r, Writes(), recover=recover) == {"number": 1}
    assert [h.started_at for h in starts] == [1_800_000_000.0] * 2
    # each lost attempt recorded when its write ran: the first, then the second
    assert [len(h.attempts) for h in starts] == [1, 2] and not starts[1].unrecorded
    assert all(a.start <= a.end for a in starts[1].attempts)


async def test_a_lost_answer_advises_the_same_key_only_when_there_is_one() -> None:
    from ghmcp_runtime.calls.upstream import MAYBE_APPLIED
    from ghmcp_runtime.stores.idempotency import RETRY_WITH_THE_SAME_KEY

    def lost() -> OutcomeUnknown:
        return OutcomeUnknown("upstream_unavailable", "lost", temporary=True, retry_after_ms=10,
                              details={"reason": MAYBE_APPLIED})

    with pytest.raises(OutcomeUnknown) as keyless:
        await go(runner(), Writes(lost()), key=None)
    assert "idempotency" not in str(keyless.value.details)
    with pytest.raises(OutcomeUnknown) as keyed:
        await go(runner(), Writes(lost()))
    assert keyed.value.details == {"reason": RETRY_WITH_THE_SAME_KEY}


async def test_n06_a_recovery_that_cannot_read_keeps_the_key_and_answers_outcome_unknown() -> None:
    # n06 (d): the error used to release the key, and the next retry posted a duplicate
    store = MemoryStore(clock=Clock())
    r, w = IdempotencyRunner(store), Writes(unknown())
    with pytest.raises(OutcomeUnknown):
        await go(r, w)

    async def refused(history: Any) -> Any:
        raise ToolError("insufficient_scope", "Resource not accessible by integration")

    for _ in range(2):
        with pytest.raises(ToolError) as info:
            await go(r, w, recover=refused)
        assert info.value.code == "outcome_unknown" and not info.value.temporary
        assert "insufficient_scope" in str(info.value.details)
        assert "the forge's records cannot tell" in info.value.message  # no forge named: none
    with pytest.raises(ToolError) as info:
        await r.run(key="k1", scope=("u_1", "issues_create"), fingerprint="fp1", run=w,
                    recover=refused, source="Forgejo")
    assert "Forgejo's records cannot tell" in info.value.message  # ToolContext names its forge
    assert w.calls == 1  # never a second write
    assert (await store.claim(store_key("k1", "u_1", "issues_create"), "fp1", 600)).state == "pending"


async def test_claimed_items_are_kept_with_results_keyed_or_not_and_handed_to_recovery() -> None:
    # n09, n06 (e): an item another call answered with is never adopted
    store = MemoryStore(clock=Clock())
    r = IdempotencyRunner(store)
    shared = ("issues_create", "octo", "repo")

    async def claimed_run(item: str) -> Any:
        return await r.run(key=None, scope=("u_2", *shared), fingerprint="fp", run=Writes(),
                           recover=None, shared=shared, claimed=lambda: item)

    await claimed_run("41")  # an unkeyed call answered with item 41
    await r.run(key="a", scope=("u_1", *shared), fingerprint="fp", run=Writes(), recover=None,
                shared=shared, claimed=lambda: "42")
    with pytest.raises(OutcomeUnknown):
        await r.run(key="b", scope=("u_1", *shared), fingerprint="fp", run=Writes(unknown()),
                    recover=None, shared=shared, claimed=lambda: None)
    seen: list[Any] = []

    async def recover(history: Any) -> Any:
        seen.append(history.claimed)
        return None

    await r.run(key="b", scope=("u_1", *shared), fingerprint="fp", run=Writes(), recover=recover,
                shared=shared, claimed=lambda: "43")
    assert seen == [frozenset({"41", "42"})]


async def test_a_store_that_cannot_say_what_is_claimed_leaves_the_outcome_unknown() -> None:
    class NoClaims(MemoryStore):
        async def claimed(self, scope: str) -> frozenset[str]:
            raise ConnectionError("store down")

    r, w = IdempotencyRunner(NoClaims(clock=Clock())), Writes(unknown())
    kw: dict[str, Any] = {"shared": ("t",), "claimed": lambda: None}
    with pytest.raises(OutcomeUnknown):
        await r.run(key="k", scope=("u",), fingerprint="fp", run=w, recover=None, **kw)

    async def recover(history: Any) -> Any:
        raise AssertionError("not without the claims")

    with pytest.raises(ToolError) as info:
        await r.run(key="k", scope=("u",), fingerprint="fp", run=w, recover=recover, **kw)
    assert info.value.code == "outcome_unknown" and w.calls == 1


async def test_n15_a_key_reused_while_its_outcome_is_unknown_says_the_first_may_have_written() -> None:
    r = runner()
    with pytest.raises(OutcomeUnknown):
        await go(r, Writes(unknown()))
    look = {"next_step": "find_issue", "tool": "github_search_issues", "arguments": {}}
    with pytest.raises(ToolError) as info:
        await r.run(key="k1", scope=("u_1", "issues_create"), fingerprint="other", run=Writes(),
                    recover=None, repair=look)
    assert info.value.code == "invalid_field" and "may have written" in info.value.message
    assert info.value.repair == look
    await go(r, Writes())  # the original arguments settle it
    with pytest.raises(ToolError) as done:
        await r.run(key="k1", scope=("u_1", "issues_create"), fingerprint="other", run=Writes(),
                    recover=None, repair=look)
    assert "may have written" not in done.value.message and done.value.repair is None


async def test_an_attempt_that_failed_before_any_write_frees_the_key() -> None:
    """Issue 31: a temporary failure before the write (a read refused, rate-limited) left the key
    pending, so the retry looked for a write that never happened: two wasted reads, and an
    `outcome_unknown` where the listing was ambiguous, though nothing had been sent."""
    r = runner()
    recovered: list[Any] = []

    async def recover(history: Any) -> Any:
        recovered.append(history)
        return {"number": 99}

    for failure in (ToolError("upstream_unavailable", "read failed", temporary=True),
                    ToolError("rate_limited", "slow down", temporary=True, retry_after_ms=10), unknown()):
        w = Writes(failure)
        with pytest.raises(ToolError):
            await r.run(key=f"k-{failure.code}-{id(w)}", scope=("u_1", "t"), fingerprint="fp", run=w,
                        recover=recover, changed=lambda: False)
        assert await r.run(key=f"k-{failure.code}-{id(w)}", scope=("u_1", "t"), fingerprint="fp", run=w,
                           recover=recover, changed=lambda: False) == {"number": 2}
    assert recovered == []  # nothing was looked for


async def test_an_attempt_that_sent_its_write_still_recovers_first() -> None:
    r, w = runner(), Writes(ToolError("upstream_unavailable", "5xx after the write", temporary=True))
    sent = [False]

    async def run() -> Any:
        sent[0] = True
        return await w()

    with pytest.raises(ToolError):
        await r.run(key="k", scope=("u_1", "t"), fingerprint="fp", run=run, recover=None, changed=lambda: sent[0])

    async def recover(history: Any) -> Any:
        return {"number": 41}

    assert await r.run(key="k", scope=("u_1", "t"), fingerprint="fp", run=run, recover=recover,
                       changed=lambda: sent[0]) == {"number": 41}
    assert w.calls == 1
