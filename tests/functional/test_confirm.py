"""Declared `confirm:` (issue 21, item 1): destructive calls ask the user through the protocol —
`input_required` (MRTR) on 2026-07-28, elicitation/create on 2025-11-25 — when the client declares
elicitation; a client that does not keeps the explicit-parameter path unchanged. Driven with the
official client in both eras, in memory and over a real stdio subprocess."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitRequestParams, ElicitResult

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, in_memory_server, stdio_params

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
FORCE = {**REPO_ARGS, "name": "wontfix", "delete_mode": "force"}
ERAS = ["auto", "legacy"]  # auto: 2026-07-28 in memory


class User:
    """An elicitation callback that answers as told and remembers what it was asked."""

    def __init__(self, action: str = "accept", confirm: bool = True) -> None:
        self.action, self.confirm = action, confirm
        self.asked: list[ElicitRequestParams] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params)
        content = {"confirm": self.confirm} if self.action == "accept" else None
        return ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


def label_exists(fake: FakeGitHub, name: str) -> bool:
    return any(lb.name == name for lb in fake.labels(OWNER, REPO))


@pytest.mark.parametrize("mode", ERAS)
async def test_a_client_without_elicitation_keeps_the_explicit_path(
        fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    async with Client(in_memory_server(fake), mode=mode, cache=None) as client:
        result = await client.call_tool("github_delete_label", FORCE)
    assert not result.is_error and not label_exists(fake, "wontfix")


@pytest.mark.parametrize("mode", ERAS)
async def test_a_confirmed_force_delete_goes_ahead(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    user = User()
    async with Client(in_memory_server(fake), mode=mode, cache=None, elicitation_callback=user) as client:
        result = await client.call_tool("github_delete_label", FORCE)
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert not result.is_error and not label_exists(fake, "wontfix")
    assert len(user.asked) == 1 and "no undo" in user.asked[0].message
    assert user.asked[0].requested_schema["required"] == ["confirm"]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize(("action", "confirm"), [("decline", False), ("cancel", False), ("accept", False)])
async def test_a_declined_question_changes_nothing(fake: FakeGitHub, seeded: dict[str, Any], mode: str,
                                                   action: str, confirm: bool) -> None:
    user = User(action, confirm)
    async with Client(in_memory_server(fake), mode=mode, cache=None, elicitation_callback=user) as client:
        result = await client.call_tool("github_delete_label", FORCE)
    assert result.is_error and result.structured_content["code"] == "confirmation_declined"
    assert label_exists(fake, "wontfix") and [r for r in fake.requests if r.method == "DELETE"] == []


@pytest.mark.parametrize("mode", ERAS)
async def test_safe_deletes_and_dry_runs_never_ask(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    user = User(action="decline")
    async with Client(in_memory_server(fake), mode=mode, cache=None, elicitation_callback=user) as client:
        safe = await client.call_tool("github_delete_label", {**REPO_ARGS, "name": "enhancement"})
        dry = await client.call_tool("github_update_issues", {
            **REPO_ARGS, "match": {"state": "all"}, "state": "closed", "dry_run": True})
    assert safe.structured_content["code"] == "label_in_use" and not dry.is_error
    assert user.asked == []


@pytest.mark.parametrize("mode", ERAS)
async def test_closing_more_than_five_issues_asks_once_with_their_numbers(
        fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    numbers = [fake.add_issue(OWNER, REPO, f"old {i}") for i in range(6)]
    user = User()
    async with Client(in_memory_server(fake), mode=mode, cache=None, elicitation_callback=user) as client:
        few = await client.call_tool("github_update_issues", {**REPO_ARGS, "issue_numbers": numbers[:5],
                                                              "state": "closed"})
        assert user.asked == [] and not few.is_error  # five or fewer: no question
        many = await client.call_tool("github_update_issues", {**REPO_ARGS, "issue_numbers": numbers,
                                                               "state": "open"})
        assert user.asked == [] and not many.is_error  # reopening is not the declared case
        for n in numbers:
            fake.get_issue(OWNER, REPO, n).state = "open"
        closed = await client.call_tool("github_update_issues", {**REPO_ARGS, "issue_numbers": numbers,
                                                                 "state": "closed"})
    assert not closed.is_error and len(user.asked) == 1
    assert user.asked[0].message.startswith("Close 6 issues (#") and f"#{numbers[-1]}" in user.asked[0].message
    assert all(fake.get_issue(OWNER, REPO, n).state == "closed" for n in numbers)


@pytest.mark.parametrize("mode", ERAS)
async def test_milestone_force_delete_asks_too(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    user = User(action="decline")
    async with Client(in_memory_server(fake, spec=MILESTONES), mode=mode, cache=None,
                      elicitation_callback=user) as client:
        result = await client.call_tool("github_delete_milestone", {
            **REPO_ARGS, "milestone_number": seeded["milestone"], "delete_mode": "force"})
    assert result.structured_content["code"] == "confirmation_declined" and len(user.asked) == 1
    assert len(fake.milestones(OWNER, REPO)) == 1


@pytest.mark.parametrize("mode", ERAS)
async def test_over_stdio_both_eras(fake: FakeGitHub, seeded: dict[str, Any], mode: str) -> None:
    user = User()
    with fake.serve() as base_url:
        async with Client(stdio_params(base_url), mode=mode, cache=None, elicitation_callback=user) as client:
            declined_first = await client.call_tool("github_delete_label", {**FORCE, "name": "triage"})
            user.action = "decline"
            refused = await client.call_tool("github_delete_label", FORCE)
    assert not declined_first.is_error and not label_exists(fake, "triage")
    assert refused.structured_content["code"] == "confirmation_declined" and label_exists(fake, "wontfix")
    assert len(user.asked) == 2


async def test_the_mrtr_round_on_the_wire(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    """The 2026-07-28 interim result is `input_required` with one form question and a sealed
    requestState; an answer brought back with another call's state is not taken."""
    from mcp import MCPError
    from mcp.types import InputRequiredResult

    user = User()
    async with Client(in_memory_server(fake), cache=None, elicitation_callback=user) as client:
        first = await client.session.call_tool("github_delete_label", FORCE, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        dumped = first.model_dump(by_alias=True, mode="json", exclude_none=True)
        question = dumped["inputRequests"]["confirm"]
        assert question["method"] == "elicitation/create" and question["params"]["mode"] == "form"
        state = first.request_state
        assert state and state.startswith("v1.")  # sealed by the SDK's RequestStateBoundary
        other = await client.session.call_tool("github_delete_label", {**FORCE, "name": "triage"},
                                               allow_input_required=True)
        assert isinstance(other, InputRequiredResult)
        yes = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
        with pytest.raises(MCPError):  # another call's state: refused by the boundary
            await client.session.call_tool("github_delete_label", FORCE, input_responses=yes,
                                           request_state=other.request_state, allow_input_required=True)
        unstated = await client.session.call_tool("github_delete_label", FORCE, input_responses=yes,
                                                  allow_input_required=True)
        assert isinstance(unstated, InputRequiredResult)  # an answer without the state: asked again
        assert label_exists(fake, "wontfix")
        done = await client.session.call_tool("github_delete_label", FORCE, input_responses=yes,
                                              request_state=state, allow_input_required=True)
    assert not isinstance(done, InputRequiredResult) and not done.is_error
    assert not label_exists(fake, "wontfix") and user.asked == []
