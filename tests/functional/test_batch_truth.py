"""github_update_issues rows against what the fake holds (correctness-3 B01, B04; issue 31 item 3).

An item's row names everything the call changed on it, whatever it took: a rate-limit wait and a
retry (the retry finds part of the change done), a lost answer settled by a re-read, a refusal
after part of the item's writes. The fault matrix puts each fault on each request of an item, at
each position in the batch, and compares every row with the fake's before/after.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened
from tests.functional.test_update_truth import shown

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
CHANGE = {"state": "closed", "add_labels": ["triage"]}
JUDGED = ("state", "state_reason", "labels")
UNKNOWN = re.compile(r"Whether (.+?) changed is unknown")


def changed_on(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {f for f in JUDGED if before[f] != after[f]}


def reported(row: dict[str, Any]) -> tuple[set[str], set[str]]:
    """What a row says the call changed on its item, and the fields it says it cannot tell."""
    if row["outcome"] != "error":
        return set(row["changed_fields"]), set()
    error = row["error"]
    unknown = UNKNOWN.search(error["message"])
    return (set((error.get("details") or {}).get("applied_fields") or []),
            set(unknown.group(1).split(", ")) if unknown else set())


def three_issues(fake: FakeGitHub) -> list[int]:
    return [fake.add_issue(OWNER, REPO, f"b{i}", labels=["bug"], author="hubot") for i in range(3)]


@pytest.mark.parametrize("versions", [False, True])
async def test_b01_a_retried_item_row_names_what_every_attempt_applied(
        fake: FakeGitHub, seeded: dict[str, Any], versions: bool) -> None:
    # the PATCH closing #2 lands, then a secondary rate limit refuses its label add; the batch
    # waits and retries: the retry has only the label left, yet the row names the close too.
    # With expected_versions the retry goes on from the version its own close left (no conflict).
    numbers = three_issues(fake)
    fake.faults.secondary_rate_limit(f"POST /repos/{OWNER}/{REPO}/issues/{numbers[1]}/labels$", retry_after=1)
    before = {n: shown(fake, n) for n in numbers}
    args: dict[str, Any] = {**REPO_ARGS, "issue_numbers": numbers, **CHANGE}
    async with Opened(in_memory_server(fake)) as s:
        if versions:
            args["expected_versions"] = [(await s.ok("github_get_issue", {**REPO_ARGS, "issue_number": n}))["version"]
                                         for n in numbers]
        data = await s.ok("github_update_issues", args)
    rows = {r["issue_number"]: r for r in data["items"]}
    for n in numbers:
        assert rows[n]["outcome"] == "changed", rows[n]
        assert rows[n]["changed_fields"] == ["state", "state_reason", "labels"]
        assert changed_on(before[n], shown(fake, n)) == {"state", "state_reason", "labels"}
    posts = [r for r in fake.requests if r.method == "POST" and r.path.endswith(f"/issues/{numbers[1]}/labels")]
    assert len(posts) == 2  # refused once, then sent again


async def test_b01_an_item_stopped_after_its_first_attempt_still_names_what_it_applied(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # the wait is longer than the batch may wait: the row is the rate-limit error, and it names
    # the close its first attempt applied
    numbers = three_issues(fake)
    fake.faults.secondary_rate_limit(f"POST /repos/{OWNER}/{REPO}/issues/{numbers[1]}/labels$", retry_after=1,
                                     times=None)
    async with Opened(in_memory_server(fake, batch_max_wait_s=5)) as s:
        data = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": numbers, **CHANGE})
    row = data["items"][1]
    assert data["stopped"]["reason"] == "rate_limited" and row["outcome"] == "error"
    assert row["error"]["details"]["applied_fields"] == ["state", "state_reason"]
    assert shown(fake, numbers[1])["state"] == "closed" and "triage" not in shown(fake, numbers[1])["labels"]


# -- issue 31 item 3: the fault matrix --------------------------------------------------------------

REQUESTS = {"PATCH": "issues/update", "POST labels": "issues/add-labels"}
FAULTS: dict[str, dict[str, Any]] = {
    "rate limit": {"kind": "status", "status": 403, "headers": {"retry-after": "1"},
                   "body": {"message": "You have exceeded a secondary rate limit.",
                            "documentation_url": "https://docs.github.com/rest"}},
    "502, not applied": {"kind": "status", "status": 502},
    "502, applied": {"kind": "status", "status": 502, "after_commit": True},
    "timeout, not applied": {"kind": "timeout", "delay": 1.0},
    "lost answer (timeout)": {"kind": "timeout", "delay": 1.0, "after_commit": True},
    "reset, not applied": {"kind": "reset"},
    "lost answer (reset)": {"kind": "reset", "after_commit": True},
}


@pytest.mark.parametrize("position", [0, 1, 2])
@pytest.mark.parametrize("request_name", list(REQUESTS))
@pytest.mark.parametrize("fault", list(FAULTS))
async def test_rows_match_the_fake_under_every_fault_at_every_position(
        fake: FakeGitHub, seeded: dict[str, Any], fault: str, request_name: str, position: int) -> None:
    numbers = three_issues(fake)
    target = numbers[position]
    fake.faults.add(Match(operation=REQUESTS[request_name], path=f"/issues/{target}(/labels)?$"), **FAULTS[fault])
    before = {n: shown(fake, n) for n in numbers}
    async with Opened(in_memory_server(fake, timeout=0.5)) as s:
        data = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": numbers, **CHANGE})
    assert [r["issue_number"] for r in data["items"]] == numbers and "stopped" not in data
    for row in data["items"]:
        n = row["issue_number"]
        really = changed_on(before[n], shown(fake, n))
        claimed, unknown = reported(row)
        assert claimed <= really, (row, really)  # never claims what the fake does not show
        assert really <= claimed | unknown, (row, really)  # names everything it changed
        if n != target or fault == "rate limit":  # waited out and retried: the whole change
            assert row["outcome"] == "changed" and really == set(JUDGED), row


async def test_b04_a_repeated_issue_with_paired_versions_is_refused_before_any_write(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    a, b = three_issues(fake)[:2]
    async with Opened(in_memory_server(fake)) as s:
        versions = {n: (await s.ok("github_get_issue", {**REPO_ARGS, "issue_number": n}))["version"] for n in (a, b)}
        mark = len(fake.requests)
        refused = await s.error("github_update_issues", {
            **REPO_ARGS, "issue_numbers": [a, b, a], "expected_versions": ["v1-stale", versions[b], versions[a]],
            "add_labels": ["triage"]}, "invalid_field")
        assert [r for r in fake.requests[mark:] if r.method != "GET"] == []
        # without versions a repeat is the same item: it is changed once
        merged = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": [b, b], "add_labels": ["triage"]})
    assert refused["details"] == {"field": "issue_numbers", "reason": "repeated items with expected_versions"}
    assert str(a) in refused["message"]
    assert [(r["issue_number"], r["outcome"]) for r in merged["items"]] == [(b, "changed")]
