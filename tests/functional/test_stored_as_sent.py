"""Writes that confirm themselves (issue 21, item 3): every write that sends text says whether
GitHub keeps it exactly as sent, judged on GitHub's answer, so an agent never reads back to
check; rows stay cleaned of hidden markup, and their hidden_removed says GitHub still stores it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, ROOT, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
FORM = "<!-- issue-form: bug-report -->\nSteps: run it."  # an issue-form template marker


async def test_create_issue_says_github_kept_the_text_even_when_the_row_hides_part_of_it(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Opened(in_memory_server(fake)) as s:
        kept = await s.ok("github_create_issue", {**REPO_ARGS, "title": "Crash <!-- form -->", "body": FORM})
        trimmed = await s.ok("github_create_issue", {**REPO_ARGS, "title": "  Crash on start\n", "body": FORM})
    assert kept["stored_as_sent"] is True and "altered_fields" not in kept
    # shown cleaned; hidden_removed counts the title's comment only: the answer carries no body
    assert kept["issue"]["title"] == "Crash " and kept["issue"]["hidden_removed"] == 1
    stored = fake.get_issue(OWNER, REPO, kept["issue"]["issue_number"])
    assert (stored.title, stored.body) == ("Crash <!-- form -->", FORM)  # GitHub holds it as sent
    assert trimmed["stored_as_sent"] is False and trimmed["altered_fields"] == ["title"]
    assert fake.get_issue(OWNER, REPO, trimmed["issue"]["issue_number"]).title == "Crash on start"


async def test_update_comment_and_label_writes_report_it_too(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = seeded["first"]
    async with Opened(in_memory_server(fake)) as s:
        exact = await s.ok("github_update_issue", {**REPO_ARGS, "issue_number": number, "body": FORM})
        padded = await s.ok("github_update_issue", {**REPO_ARGS, "issue_number": number, "title": "Crash \n"})
        again = await s.ok("github_update_issue", {**REPO_ARGS, "issue_number": number, "title": "Crash \n"})
        comment = await s.ok("github_add_comment", {**REPO_ARGS, "issue_number": number,
                                                    "body": "Same on 1.2\r\n<!-- hidden -->"})
        label = await s.ok("github_create_label", {**REPO_ARGS, "name": " needs-repro", "description": "x "})
        renamed = await s.ok("github_update_label", {**REPO_ARGS, "name": "wontfix", "new_name": "won't fix"})
    assert exact["stored_as_sent"] is True and exact["changed_fields"] == ["body"]
    assert exact["issue"]["hidden_removed"] == 0  # the body's marker is not in the answer
    assert padded["stored_as_sent"] is False and padded["altered_fields"] == ["title"]
    assert again["altered_fields"] == ["title"]  # judged on what GitHub holds, however often asked
    assert comment["stored_as_sent"] is True and comment["comment"]["hidden_removed"] == 0  # no body shown
    assert fake.comments(OWNER, REPO, number)[-1].body == "Same on 1.2\r\n<!-- hidden -->"
    assert label["stored_as_sent"] is False and label["altered_fields"] == ["name"]
    assert renamed["stored_as_sent"] is True


async def test_milestone_writes_report_it(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Opened(in_memory_server(fake, spec=MILESTONES)) as s:
        created = await s.ok("github_create_milestone", {**REPO_ARGS, "title": "v2.0",
                                                         "description": "Ship it\r\n"})
        updated = await s.ok("github_update_milestone", {
            **REPO_ARGS, "milestone_number": created["milestone"]["milestone_number"], "description": ""})
    assert created["stored_as_sent"] is True and updated["stored_as_sent"] is True


def test_every_output_schema_with_hidden_removed_explains_it_once() -> None:
    for package in ("github_issues_mcp", "github_milestones_mcp"):
        tools = json.loads((ROOT / "generated" / package / "tools.json").read_text(encoding="utf-8"))["tools"]
        for tool in tools:
            text = json.dumps(tool["outputSchema"])
            if "hidden_removed" in text:
                assert text.count("GitHub still stores them.") == 1, tool["name"]
