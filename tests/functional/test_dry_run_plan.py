"""A dry run is the real run's plan (correctness-3 B02; issue 31 item 2).

Hypothesis draws issues (state and reason, labels, up to the 10-assignee cap, milestone, lock) and
argument combinations (state, state_reason, labels in either case, assignees, milestone by title,
number or null, lock, title, body). The same call runs as a dry run on one fake and for real on an
identical one; per item the dry run must answer what the real run then answers (outcome,
changed_fields, ignored_fields, error code), the dry run must write nothing, and the real run's
changed_fields must be exactly the fields the fake shows changed.

The batch tool plans through its dry_run parameter; the single tool, which has none, through a
probe tool of the test's own server that runs it with the batch's dry-run context.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import anyio
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.context import ToolContext
from github_issues_mcp import SERVER
from tests.functional.conftest import OWNER, REPO, in_memory_server, seed

EXAMPLES = int(os.environ.get("PLAN_EXAMPLES", "40"))
LABELS = ["bug", "triage", "wontfix", "enhancement"]
DEVS = [f"dev{i:02d}" for i in range(12)]
REASONS = ["off-topic", "too heated", "resolved", "spam"]
REPO_ARGS = {"owner": OWNER, "repo": REPO}
PROBE = "probe_update_issue_dry_run"


async def _dry(ctx: ToolContext, args: Any) -> dict[str, Any]:
    return await ctx.run_tool("github_update_issue", args, dry_run=True)


SINGLE = next(t for t in SERVER.tools if t.name == "github_update_issue")
PROBED = dataclasses.replace(SERVER, tools=(*SERVER.tools, dataclasses.replace(
    SINGLE, name=PROBE, handler=_dry, runs=("github_update_issue",))))

ISSUES = st.fixed_dictionaries({
    "state": st.sampled_from([("open", None), ("open", "reopened"), ("closed", "completed"),
                              ("closed", "not_planned"), ("closed", "duplicate")]),
    "labels": st.lists(st.sampled_from(LABELS), unique=True, max_size=3),
    "assignees": st.one_of(st.just(DEVS[:10]), st.just(DEVS[2:12]),
                           st.lists(st.sampled_from(DEVS), unique=True, max_size=10)),
    "milestone": st.sampled_from([None, "v1.0", "v2.0"]),
    "lock": st.sampled_from([(False, None), (True, None), (True, "spam"), (True, "resolved")]),
})


def _maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(None), values)  # None: the parameter is left out


MILESTONES = st.sampled_from(["v1.0", "v2.0", 1, 2, None])  # titles, numbers, null (clears)
BATCH_ARGS = st.fixed_dictionaries({
    "state": _maybe(st.sampled_from(["open", "closed"])),
    "state_reason": _maybe(st.sampled_from(["completed", "not_planned", "duplicate", "reopened"])),
    "add_labels": _maybe(st.lists(st.sampled_from(["bug", "BUG", "Triage", "wontfix"]), min_size=1,
                                  max_size=2, unique_by=str.casefold)),
    "remove_labels": _maybe(st.lists(st.sampled_from(["bug", "TRIAGE", "enhancement"]), min_size=1,
                                     max_size=2, unique_by=str.casefold)),
    "add_assignees": _maybe(st.lists(st.sampled_from([*DEVS, "DEV00", "Dev11"]), min_size=1, max_size=3,
                                     unique_by=str.casefold)),
    "remove_assignees": _maybe(st.lists(st.sampled_from(DEVS[:4]), min_size=1, max_size=2, unique=True)),
    "milestone": st.one_of(st.just("omit"), MILESTONES),
})
SINGLE_ARGS = BATCH_ARGS.flatmap(lambda batch: st.fixed_dictionaries({
    **{k: st.just(v) for k, v in batch.items()},
    "lock": st.sampled_from([None, (True, None), (True, "resolved"), (True, "spam"), (False, None)]),
    "title": _maybe(st.sampled_from(["t0", " t0 ", "Renamed"])),
    "body": _maybe(st.sampled_from(["", "b0", "new body"])),
}))


def _arguments(drawn: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in drawn.items() if v is not None and k not in ("milestone", "lock")}
    if drawn["milestone"] != "omit":
        out["milestone"] = drawn["milestone"]
    if drawn.get("lock") is not None:
        out["locked"], reason = drawn["lock"]
        if reason is not None:
            out["lock_reason"] = reason
    return out


def _world(issues: list[dict[str, Any]]) -> tuple[FakeGitHub, list[int]]:
    fake = FakeGitHub()
    seed(fake)
    for login in DEVS:
        fake.add_user(login, collaborator_on=[f"{OWNER}/{REPO}"])
    fake.add_milestone(OWNER, REPO, "v2.0")
    numbers = []
    for i, issue in enumerate(issues):
        (state, reason), (locked, lock_reason) = issue["state"], issue["lock"]
        numbers.append(fake.add_issue(OWNER, REPO, f"t{i}", f"b{i}", labels=issue["labels"],
                                      assignees=issue["assignees"], milestone=issue["milestone"], state=state,
                                      state_reason=reason, locked=locked, lock_reason=lock_reason,
                                      author="hubot"))
    return fake, numbers


def _snapshot(fake: FakeGitHub, number: int) -> dict[str, Any]:
    """The issue by changed_fields' names."""
    item = fake.get_issue(OWNER, REPO, number)
    return {"title": item.title, "body": item.body or None, "state": item.state,
            "state_reason": item.state_reason, "labels": sorted(fake.label_names(OWNER, REPO, number)),
            "assignees": sorted(a.casefold() for a in item.assignees), "milestone": item.milestone,
            "locked": item.locked, "lock_reason": item.lock_reason}


def _row(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["outcome"], row.get("changed_fields"), row.get("ignored_fields"),
            (row.get("error") or {}).get("code"))


async def _run(issues: list[dict[str, Any]], tool: str, args: dict[str, Any], *,
               dry: bool) -> tuple[list[tuple[Any, ...]], list[set[str]], bool]:
    """Per item: the answer, the fields the fake shows changed; and whether anything was written."""
    fake, numbers = _world(issues)
    before = [_snapshot(fake, n) for n in numbers]
    async with Client(in_memory_server(fake, spec=PROBED), cache=None) as client:
        mark = len(fake.requests)
        if tool == "github_update_issues":
            result = await client.call_tool(tool, {**REPO_ARGS, "issue_numbers": numbers, **args, "dry_run": dry})
            data = result.structured_content or {}
            assert not result.is_error, data  # a refusal of the whole call is not what is compared
            rows = [_row(r) for r in data["items"]]
        else:
            result = await client.call_tool(PROBE if dry else tool, {**REPO_ARGS, "issue_number": numbers[0], **args})
            data = result.structured_content or {}
            rows = [("error", None, None, data["code"]) if result.is_error else
                    ("changed" if data["changed_fields"] else "unchanged", data["changed_fields"],
                     data.get("ignored_fields"), None)]
        wrote = any(r.method != "GET" for r in fake.requests[mark:])
    changed = [{f for f in b if b[f] != _snapshot(fake, n)[f]} for n, b in zip(numbers, before, strict=True)]
    assert fake.violations == [], fake.violations
    return rows, changed, wrote


def _check(issues: list[dict[str, Any]], tool: str, args: dict[str, Any]) -> None:
    dry, dry_changed, dry_wrote = anyio.run(lambda: _run(issues, tool, args, dry=True))
    real, real_changed, _ = anyio.run(lambda: _run(issues, tool, args, dry=False))
    assert not dry_wrote and not any(dry_changed)
    assert dry == real, (args, dry, real)
    event(f"outcomes: {'/'.join(sorted({row[3] or row[0] for row in real}))}")
    for row, changed in zip(real, real_changed, strict=True):
        assert set(row[1] or ()) == changed, (args, row, changed)  # what the fake shows changed


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(issues=st.lists(ISSUES, min_size=3, max_size=3), drawn=BATCH_ARGS)
def test_b02_batch_dry_run_plans_what_the_real_run_does_per_item(issues: list[dict[str, Any]],
                                                                 drawn: dict[str, Any]) -> None:
    args = _arguments(drawn)
    if not set(args) - {"state_reason"} and "state_reason" not in args:
        args["state"] = "closed"  # the batch needs one field to change
    _check(issues, "github_update_issues", args)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(issue=ISSUES, drawn=SINGLE_ARGS)
def test_b02_single_dry_run_plans_what_the_real_run_does(issue: dict[str, Any], drawn: dict[str, Any]) -> None:
    args = _arguments(drawn)
    if not args:
        args["locked"] = True
    _check([issue], "github_update_issue", args)
