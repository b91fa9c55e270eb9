"""A 403 means several things, told apart by GitHub's message (issue 22 item 3; the server-wide
`on_error` of both override files): "Must have push access" is `no_push_access` with a true
reason, not `insufficient_scope` asking for a scope the token already has; a missing scope stays
`insufficient_scope`. Regression of /work/shared/repro/correctness-2/n16_no_push_access_mapping.py."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
OUTSIDER = "ghp_outsidertoken0000000000000000000000002"
NO_SCOPE = "ghp_noscopetoken00000000000000000000000003"


def outsider(fake: FakeGitHub) -> None:
    """A token with the repo scope whose account cannot push to the repository."""
    fake.add_token(OUTSIDER, "outsider", scopes=("repo",), collaborator_on=())


async def test_n16_no_push_access_mapping(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    """The issue's author (repo scope, no push access) edits its own issue and adds a label: the
    title is applied, the label POST is refused with 403 'Must have push access'."""
    outsider(fake)
    number = fake.add_issue(OWNER, REPO, "my own issue", author="outsider")
    async with Opened(in_memory_server(fake, OUTSIDER)) as s:
        err = await s.error("github_update_issue", {**REPO_ARGS, "issue_number": number,
                                                    "title": "my own issue, edited", "add_labels": ["bug"]},
                            "no_push_access")
    assert "push access" in err["message"] and "scopes are not the problem" in err["message"]
    assert "required_scopes" not in err["details"]  # the 403's scope guess is dropped with its code
    assert err["details"]["applied_fields"] == ["title"]  # what was applied stays true
    assert fake.get_issue(OWNER, REPO, number).title == "my own issue, edited"
    assert fake.label_names(OWNER, REPO, number) == []


async def test_declared_writes_and_the_other_server_map_it_too(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    outsider(fake)
    async with Opened(in_memory_server(fake, OUTSIDER)) as s:
        await s.error("github_create_label", {**REPO_ARGS, "name": "outsiders", "color": "ff0000"},
                      "no_push_access")
        listed = await s.ok("github_list_labels", REPO_ARGS)  # reading needs no push access
        assert listed["labels"]
    async with Opened(in_memory_server(fake, OUTSIDER, spec=MILESTONES)) as s:
        await s.error("github_create_milestone", {**REPO_ARGS, "title": "v9"}, "no_push_access")


async def test_a_missing_scope_is_still_insufficient_scope(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    """GitHub's refusal, as met when the token's scopes are not read (read, the tool is not
    listed at all: tests/functional/test_token_scopes.py)."""
    fake.add_token(NO_SCOPE, "octocat", scopes=(), collaborator_on=f"{OWNER}/{REPO}")
    async with Opened(in_memory_server(fake, NO_SCOPE, token_scopes=False)) as s:
        err = await s.error("github_create_label", {**REPO_ARGS, "name": "x", "color": "ff0000"},
                            "insufficient_scope")
    assert err["details"]["required_scopes"]
