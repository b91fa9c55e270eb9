"""A 200 that is not the resource, and an answer that would break its own schema (correctness-3 B03).

A read answered 200 with a body that is not an issue (a proxy's `[]`, `{"message": "ok"}`) is
`upstream_unavailable` before any write: nothing of it is taken for the issue. A body that is an
issue by its keys but carries a value of another type than the description pins would make the
tool's answer fail its own outputSchema: the call answers `internal_error` (logged with where it
failed) instead, and after writes it says they may have taken effect.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from fakegithub import FakeGitHub
from tests.fake.fake_support import take_violations
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
CHANGE = {"add_labels": ["triage"], "remove_labels": ["bug"]}


def writes(fake: FakeGitHub, since: int) -> list[Any]:
    return [r for r in fake.requests[since:] if r.method != "GET"]


def answer_issue_with(fake: FakeGitHub, number: int, body: Any) -> None:
    fake.faults.add(f"GET /repos/{OWNER}/{REPO}/issues/{number}$", "status", status=200, body=body, times=None)


@pytest.mark.parametrize("body", [[], {"message": "ok"}])
async def test_b03_a_read_that_is_not_the_issue_is_unavailable_before_any_write(
        fake: FakeGitHub, seeded: dict[str, Any], body: Any) -> None:
    numbers = [fake.add_issue(OWNER, REPO, f"u{i}", labels=["bug"]) for i in range(3)]
    answer_issue_with(fake, numbers[1], body)
    async with Opened(in_memory_server(fake)) as s:
        mark = len(fake.requests)
        single = await s.error("github_update_issue", {**REPO_ARGS, "issue_number": numbers[1], **CHANGE},
                               "upstream_unavailable")
        assert writes(fake, mark) == []
        batch = await s.ok("github_update_issues", {**REPO_ARGS, "issue_numbers": numbers, **CHANGE})
    assert single["temporary"] is True
    rows = {r["issue_number"]: r for r in batch["items"]}
    assert rows[numbers[1]]["outcome"] == "error" and rows[numbers[1]]["error"]["code"] == "upstream_unavailable"
    assert fake.label_names(OWNER, REPO, numbers[1]) == ["bug"]
    assert [fake.label_names(OWNER, REPO, n) for n in (numbers[0], numbers[2])] == [["triage"]] * 2
    take_violations(fake)  # the injected bodies break the spec on purpose


async def test_b03_an_answer_that_would_break_its_schema_is_internal_error_and_logged(
        fake: FakeGitHub, seeded: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    number = fake.add_issue(OWNER, REPO, "typed", labels=["bug"])
    async with fake.client(TOKEN) as gh:
        issue = (await gh.get(f"/repos/{OWNER}/{REPO}/issues/{number}")).json()
    answer_issue_with(fake, number, {**issue, "comments": None})  # every key there; one of another type
    caplog.set_level(logging.INFO, logger="ghmcp")
    async with Opened(in_memory_server(fake)) as s:
        read = await s.error("github_get_issue", {**REPO_ARGS, "issue_number": number}, "internal_error")
        mark = len(fake.requests)
        updated = await s.error("github_update_issue", {**REPO_ARGS, "issue_number": number, "add_labels": ["triage"]},
                                "internal_error")
    assert "write" not in read["message"]
    assert len(writes(fake, mark)) == 1 and "triage" in fake.label_names(OWNER, REPO, number)
    assert "1 write request(s), which may have taken effect" in updated["message"]
    logged = [r.fields for r in caplog.records if r.getMessage() == "output_invalid"]
    assert [f["tool"] for f in logged] == ["github_get_issue", "github_update_issue"]
    assert all("comment_count" in f["where"] for f in logged), logged
    take_violations(fake)
