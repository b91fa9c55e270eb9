"""github_update_issues and github_update_milestones: the declared batch recipe (issue 21, item 1)
end to end through the official client against the fake: per-item outcomes with the single-item
tool's envelope, dry run, idempotency, pacing, rate limits, cursors, progress, cancellation."""

from __future__ import annotations

import dataclasses
import json
from itertools import pairwise
from typing import Any

import anyio
import pytest
from mcp import Client

import github_issues_mcp.handlers as issues_handlers
from fakegithub import FakeGitHub
from ghmcp_runtime.engine.batch import batch
from github_issues_mcp import SERVER
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}


def writes(fake: FakeGitHub, since: int = 0) -> list[Any]:
    return [r for r in fake.requests[since:] if r.method != "GET"]


@pytest.fixture
def five(fake: FakeGitHub, seeded: dict[str, Any]) -> list[int]:
    """Five open issues labelled `bulk`."""
    fake.add_label(OWNER, REPO, "bulk")
    return [fake.add_issue(OWNER, REPO, f"bulk {i}", labels=["bulk"], author="hubot") for i in range(5)]


async def test_dry_run_reads_checks_and_writes_nothing(fake: FakeGitHub, five: list[int]) -> None:
    fake.add_label(OWNER, REPO, "triage-done")
    fake.get_issue(OWNER, REPO, five[1]).label_ids.clear()
    async with Opened(in_memory_server(fake)) as s:
        mark = len(fake.requests)
        data = await s.ok("github_update_issues", {
            **REPO_ARGS, "issue_numbers": [five[2], five[0], 9999, five[1]],
            "add_labels": ["triage-done"], "remove_labels": ["bulk"], "dry_run": True})
    assert writes(fake, mark) == []
    assert data["dry_run"] is True and data["has_more"] is False
    rows = {r["issue_number"]: r for r in data["items"]}
    assert [r["issue_number"] for r in data["items"]] == sorted(rows)  # ascending
    assert rows[five[0]] == {"issue_number": five[0], "outcome": "changed", "changed_fields": ["labels"]}
    assert rows[five[1]]["changed_fields"] == ["labels"]  # only the add: bulk is not on it
    assert rows[9999]["outcome"] == "error" and rows[9999]["error"]["code"] == "issue_not_found"
    assert data["summary"] == {"changed": 3, "unchanged": 0, "error": 1}


async def test_assignees_are_added_and_removed_per_item_and_a_dry_run_plans_it(
        fake: FakeGitHub, five: list[int]) -> None:
    fake.add_user("mona", collaborator_on=[f"{OWNER}/{REPO}"])
    fake.get_issue(OWNER, REPO, five[0]).assignees[:] = ["hubot"]
    fake.get_issue(OWNER, REPO, five[1]).assignees[:] = ["mona"]
    change = {**REPO_ARGS, "issue_numbers": five[:3], "add_assignees": ["mona"], "remove_assignees": ["hubot"]}
    async with Opened(in_memory_server(fake)) as s:
        mark = len(fake.requests)
        planned = await s.ok("github_update_issues", {**change, "dry_run": True})
        assert writes(fake, mark) == []
        done = await s.ok("github_update_issues", change)
        mark = len(fake.requests)
        refused = await s.ok("github_update_issues", {**change, "add_assignees": ["nobody-here"]})
        assert writes(fake, mark) == []
    expected = [(five[0], "changed", ["assignees"]), (five[1], "unchanged", []), (five[2], "changed", ["assignees"])]
    for data in (planned, done):
        assert [(r["issue_number"], r["outcome"], r.get("changed_fields", [])) for r in data["items"]] == expected
    assert [fake.get_issue(OWNER, REPO, n).assignees for n in five[:3]] == [["mona"]] * 3
    assert refused["summary"] == {"changed": 0, "unchanged": 0, "error": 3}
    assert {(r["error"]["code"], r["error"]["details"]["field"]) for r in refused["items"]} == {
        ("invalid_field", "add_assignees")}


async def test_one_failing_item_does_not_stop_the_others(fake: FakeGitHub, five: list[int]) -> None:
    fake.get_issue(OWNER, REPO, five[1]).locked = True
    fake.faults.add(f"PATCH /repos/{OWNER}/{REPO}/issues/{five[1]}$", "status", status=403,
                    body={"message": "Issue is locked", "documentation_url": "https://docs.github.com"})
    async with Opened(in_memory_server(fake)) as s:
        data = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": five[:3],
                                                   "state": "closed", "state_reason": "not_planned"})
    outcomes = [(r["issue_number"], r["outcome"]) for r in data["items"]]
    assert outcomes == [(five[0], "changed"), (five[1], "error"), (five[2], "changed")]
    failed = data["items"][1]["error"]
    single = await _single_envelope(fake, five[1])
    assert {k: failed[k] for k in ("code", "message", "temporary")} == {k: single[k] for k in ("code", "message", "temporary")}
    assert [fake.get_issue(OWNER, REPO, n).state for n in five[:3]] == ["closed", "open", "closed"]


async def _single_envelope(fake: FakeGitHub, number: int) -> dict[str, Any]:
    fake.faults.add(f"PATCH /repos/{OWNER}/{REPO}/issues/{number}$", "status", status=403,
                    body={"message": "Issue is locked", "documentation_url": "https://docs.github.com"})
    async with Opened(in_memory_server(fake)) as s:
        return await s.call("github_update_issue", {**REPO_ARGS, "issue_number": number, "state": "closed",
                                                    "state_reason": "not_planned"})


async def test_match_changes_every_issue_a_search_finds_and_a_repeat_changes_nothing(
        fake: FakeGitHub, five: list[int]) -> None:
    fake.get_issue(OWNER, REPO, five[3]).assignees.append("hubot")
    args = {**REPO_ARGS, "match": {"labels": ["bulk"], "missing": ["assignee"]}, "add_labels": ["triage"]}
    async with Opened(in_memory_server(fake)) as s:
        first = await s.ok("github_update_issues", args)
        mark = len(fake.requests)
        again = await s.ok("github_update_issues", args)
    assert [r["issue_number"] for r in first["items"]] == [n for n in five if n != five[3]]
    assert {r["outcome"] for r in first["items"]} == {"changed"}
    assert {r["outcome"] for r in again["items"]} == {"unchanged"} and writes(fake, mark) == []
    assert "triage" not in fake.label_names(OWNER, REPO, five[3])


async def test_a_filter_the_search_refuses_names_the_match_field(fake: FakeGitHub, five: list[int]) -> None:
    async with Opened(in_memory_server(fake)) as s:
        data = await s.error("github_update_issues", {**REPO_ARGS, "match": {"query": "x is:queued"},
                                                      "add_labels": ["triage"]}, "invalid_field")
    assert data["details"]["field"] == "match.query"


async def test_a_repeat_with_the_same_key_answers_the_first_run_and_writes_nothing(
        fake: FakeGitHub, five: list[int]) -> None:
    args = {**REPO_ARGS, "issue_numbers": five[:2], "add_labels": ["triage"], "idempotency_key": "batch-0001"}
    async with Opened(in_memory_server(fake)) as s:
        first = await s.ok("github_update_issues", args)
        fake.get_issue(OWNER, REPO, five[0]).label_ids.clear()  # someone undoes it meanwhile
        mark = len(fake.requests)
        again = await s.ok("github_update_issues", args)
        other = await s.error("github_update_issues", {**args, "add_labels": ["bug"]}, "invalid_field")
    assert {k: v for k, v in again.items() if k != "request_id"} == {
        k: v for k, v in first.items() if k != "request_id"}
    assert fake.requests[mark:] == [] and other["details"]["field"] == "idempotency_key"


async def test_a_short_rate_limit_is_waited_out_and_the_item_retried(fake: FakeGitHub, five: list[int]) -> None:
    fake.faults.secondary_rate_limit(f"POST /repos/{OWNER}/{REPO}/issues/{five[1]}/labels$", retry_after=1)
    async with Opened(in_memory_server(fake, batch_max_wait_s=5)) as s:
        data = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": five[:3], "add_labels": ["triage"]})
    assert [r["outcome"] for r in data["items"]] == ["changed"] * 3 and "stopped" not in data
    refused = [t for t in fake.timeline if t.status == 403]
    retried = [t for t in fake.timeline if t.path.endswith(f"/issues/{five[1]}/labels") and t.status == 200]
    assert len(refused) == 1 and retried and retried[0].started - refused[0].ended >= 1.0  # retry-after honoured


async def test_a_long_rate_limit_stops_the_batch_and_loses_no_progress(fake: FakeGitHub, five: list[int]) -> None:
    fake.faults.secondary_rate_limit(f"POST /repos/{OWNER}/{REPO}/issues/{five[2]}/labels$", retry_after=600)
    args = {**REPO_ARGS, "issue_numbers": five, "add_labels": ["triage"]}
    async with Opened(in_memory_server(fake, batch_max_wait_s=5)) as s:
        first = await s.ok("github_update_issues", args)
        rest = await s.ok("github_update_issues", {**args, "cursor": first["next_cursor"]})
    assert [(r["issue_number"], r["outcome"]) for r in first["items"]] == [
        (five[0], "changed"), (five[1], "changed"), (five[2], "error")]
    assert first["items"][2]["error"]["code"] == "rate_limited"
    assert first["stopped"] == {"reason": "rate_limited", "retry_after_ms": 600_000} and first["has_more"]
    assert [r["issue_number"] for r in rest["items"]] == five[2:]  # resumes at the refused item
    assert all("triage" in fake.label_names(OWNER, REPO, n) for n in five)


async def test_writes_are_paced_one_request_at_a_time(
    fake: FakeGitHub, five: list[int], pace_stamps: list[float]
) -> None:
    stamps = pace_stamps
    async with Opened(in_memory_server(fake, write_interval_s=0.05)) as s:
        mark = len(fake.timeline)
        await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": five[:3], "add_labels": ["triage"],
                                            "remove_labels": ["bulk"]})
    spans = list(fake.timeline)[mark:]
    assert all(a.ended <= b.started for a, b in pairwise(spans))  # never two at once
    writes = [t for t in spans if t.method != "GET"]
    # every write waited for its turn (the fake and the event loop share time.monotonic), and the
    # turns are the interval apart, less the event loop's clock resolution; measured where the
    # server sends, not where the fake receives (a busy machine delays arrival, never the pace)
    assert len(writes) == len(stamps) == 6
    assert all(stamp <= w.started for stamp, w in zip(stamps, writes, strict=True))
    assert all(b - a >= 0.05 - 0.002 for a, b in pairwise(stamps))


async def test_items_beyond_the_cap_come_back_with_a_cursor(fake: FakeGitHub, five: list[int]) -> None:
    small = dataclasses.replace(issues_handlers.GITHUB_UPDATE_ISSUES, max_items=2)
    tools = tuple(dataclasses.replace(t, handler=issues_handlers.with_rules(batch(small), ()))
                  if t.name == "github_update_issues" else t for t in SERVER.tools)
    spec = dataclasses.replace(SERVER, tools=tools)
    seen: list[int] = []
    args: dict[str, Any] = {**REPO_ARGS, "match": {"labels": ["bulk"]}, "state": "closed"}
    async with Opened(in_memory_server(fake, spec=spec)) as s:
        for _ in range(4):
            data = await s.ok("github_update_issues", args)
            seen += [r["issue_number"] for r in data["items"]]
            if not data["has_more"]:
                break
            args["cursor"] = data["next_cursor"]
        listed = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": five, "state": "open"})
        listed_next = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": five, "state": "open",
                                                          "cursor": listed["next_cursor"]})
    assert seen == five and not data["has_more"]  # closing took them out of the match: none skipped
    assert [r["issue_number"] for r in listed["items"]] == five[:2]
    assert [r["issue_number"] for r in listed_next["items"]] == five[2:4]


async def test_progress_is_notified_per_item(fake: FakeGitHub, five: list[int]) -> None:
    events: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        events.append((done, total, message))

    for mode in ("auto", "legacy"):
        events.clear()
        async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
            result = await client.call_tool("github_update_issues", {**REPO_ARGS, "issue_numbers": five[:3],
                                                                     "add_labels": ["triage"], "dry_run": True},
                                            progress_callback=progress)
        assert not result.is_error
        assert [(d, t) for d, t, _ in events] == [(1, 3), (2, 3), (3, 3)], mode
        assert events[0][2] == f"issue_number {five[0]}: changed"


async def test_cancellation_stops_before_the_next_item_and_a_repeat_says_what_was_done(
        fake: FakeGitHub, five: list[int]) -> None:
    fake.latency = 0.05
    args = {**REPO_ARGS, "issue_numbers": five, "add_labels": ["triage"], "idempotency_key": "cancel-0001"}
    server = in_memory_server(fake)
    async with Client(server, mode="legacy", cache=None) as client:
        cancelled = anyio.Event()

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if done == 2:
                cancelled.set()

        async with anyio.create_task_group() as tg:
            async def call() -> None:
                with anyio.CancelScope() as scope:
                    tg.start_soon(_cancel_on, cancelled, scope)
                    await client.call_tool("github_update_issues", args, progress_callback=progress)

            tg.start_soon(call)
        await anyio.sleep(1.0)  # the shielded item in flight finishes and the answer is stored
        after = [("triage" in fake.label_names(OWNER, REPO, n)) for n in five]
        repeat = await client.call_tool("github_update_issues", args)
    data = repeat.structured_content
    done = [r["issue_number"] for r in data["items"]]
    assert after[:2] == [True, True] and after[len(done):] == [False] * (5 - len(done))
    assert len(done) < 5 and data["stopped"] == {"reason": "cancelled", "retry_after_ms": None}
    assert json.loads(repeat.content[0].text)["has_more"] is True


async def _cancel_on(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def test_milestones_close_and_redate_in_one_call(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    v2 = fake.add_milestone(OWNER, REPO, "v2.0", due_on="2026-01-01T00:00:00Z")
    v3 = fake.add_milestone(OWNER, REPO, "v3.0")
    async with Opened(in_memory_server(fake, spec=MILESTONES)) as s:
        redated = await s.ok("github_update_milestones", {**REPO_ARGS, "match": {"state": "open"},
                                                          "due_on": "2026-06-30T00:00:00Z", "dry_run": True})
        closed = await s.ok("github_update_milestones", {**REPO_ARGS, "milestone_numbers": [v2, v3, 999],
                                                         "state": "closed"})
    assert [r["milestone_number"] for r in redated["items"]] == [seeded["milestone"], v2, v3]
    assert {r["outcome"] for r in redated["items"]} == {"changed"} and redated["dry_run"] is True
    assert [r["outcome"] for r in closed["items"]] == ["changed", "changed", "error"]
    assert closed["items"][2]["error"]["code"] == "milestone_not_found"
    assert [m.state for m in fake.milestones(OWNER, REPO)] == ["open", "closed", "closed"]
