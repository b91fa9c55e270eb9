"""expected_version on an update without a PATCH (correctness-3 U1).

The version is checked on the read. An update that sends a PATCH sees another writer's change in
the PATCH's answer; one that only adds labels or assignees, or locks, has no answer showing the
whole issue, so it reads the issue again after its writes: another writer's edit in between is
`conflict` naming the field, and a quiet update answers the issue as it now is.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp import Client

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.test_issue_tools import call
from tests.functional.test_update_truth import OTHER, Hook, args, server_over, shown, version_now

pytestmark = pytest.mark.anyio
WITHOUT_A_PATCH = [{"add_labels": ["triage"]}, {"locked": True, "lock_reason": "resolved"},
                   {"add_assignees": ["hubot"]}, {"remove_labels": ["bug"], "add_labels": ["wontfix"]}]


def edit_before_the_first_write(fake: FakeGitHub, number: int) -> Any:
    """Another writer edits the body after our read, before our first write."""
    done: list[int] = []

    async def before(request: httpx.Request) -> None:
        if request.method != "GET" and not done:
            async with fake.client(OTHER) as other:
                done.append((await other.patch(f"/repos/{OWNER}/{REPO}/issues/{number}",
                                               json={"body": "edited by someone else"})).status_code)

    return before


@pytest.mark.parametrize("change", WITHOUT_A_PATCH)
async def test_u01_an_edit_between_the_check_and_writes_without_a_patch_is_a_conflict(
        fake: FakeGitHub, seeded: dict[str, Any], change: dict[str, Any]) -> None:
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    number = fake.add_issue(OWNER, REPO, "t", body="original", labels=["bug"])
    version = await version_now(fake, number)
    async with Client(server_over(Hook(fake, before=edit_before_the_first_write(fake, number))),
                      cache=None) as client:
        is_error, data = await call(client, "github_update_issue", args(number, expected_version=version, **change))
    assert is_error and data["code"] == "conflict", data
    assert data["details"]["concurrent_fields"] == ["body"]
    assert data["details"]["applied_fields"]  # the writes were sent; the answer says which
    assert data["repair"]["tool"] == "github_get_issue"
    assert shown(fake, number)["title"] == "t"


@pytest.mark.parametrize("change", WITHOUT_A_PATCH)
async def test_u01_a_quiet_update_without_a_patch_answers_the_issue_as_it_now_is(
        fake: FakeGitHub, seeded: dict[str, Any], change: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "t", body="original", labels=["bug"])
    version = await version_now(fake, number)
    async with Client(in_memory_server(fake), cache=None) as client:
        mark = len(fake.requests)
        is_error, data = await call(client, "github_update_issue", args(number, expected_version=version, **change))
        reads = [r for r in fake.requests[mark:] if r.method == "GET" and r.path.endswith(f"/issues/{number}")]
    assert not is_error, data
    assert len(reads) == 2  # the checked read, and the one after the writes
    assert data["version"] == await version_now(fake, number) != version
