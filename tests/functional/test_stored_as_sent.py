"""Writes that confirm themselves (issue 21, item 3): every write that sends text says when
GitHub keeps it otherwise than sent (`stored_as_sent: false` with `altered_fields`; absent when
kept exactly, issue 34), judged on GitHub's answer, so an agent never reads back to check; rows
stay cleaned of hidden markup, and their hidden_removed says GitHub still stores it. What these
fields mean is said once, in the summary every client reads as `instructions`."""

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
    assert "stored_as_sent" not in kept and "altered_fields" not in kept  # kept: nothing to say
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
    assert "stored_as_sent" not in exact and exact["changed_fields"] == ["body"]
    assert "hidden_removed" not in exact["issue"]  # the body's marker is not in the answer
    assert padded["stored_as_sent"] is False and padded["altered_fields"] == ["title"]
    assert again["altered_fields"] == ["title"]  # judged on what GitHub holds, however often asked
    assert "stored_as_sent" not in comment and "hidden_removed" not in comment["comment"]  # no body shown
    assert fake.comments(OWNER, REPO, number)[-1].body == "Same on 1.2\r\n<!-- hidden -->"
    assert label["stored_as_sent"] is False and label["altered_fields"] == ["name"]
    assert "stored_as_sent" not in renamed


async def test_milestone_writes_report_it(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Opened(in_memory_server(fake, spec=MILESTONES)) as s:
        created = await s.ok("github_create_milestone", {**REPO_ARGS, "title": "v2.0",
                                                         "description": "Ship it\r\n"})
        updated = await s.ok("github_update_milestone", {
            **REPO_ARGS, "milestone_number": created["milestone"]["milestone_number"], "description": ""})
    assert "stored_as_sent" not in created and "stored_as_sent" not in updated
    assert "due_day" not in created and "due_day" not in updated  # no due date sent


async def test_a_due_date_answer_names_the_pacific_day_github_keeps(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # midnight UTC on Dec 31 is still Dec 30 in California: GitHub keeps Dec 30, at its midnight there
    async with Opened(in_memory_server(fake, spec=MILESTONES)) as s:
        created = await s.ok("github_create_milestone", {**REPO_ARGS, "title": "v2.1",
                                                         "due_on": "2026-12-31T00:00:00Z"})
        number = created["milestone"]["milestone_number"]
        moved = await s.ok("github_update_milestone", {**REPO_ARGS, "milestone_number": number,
                                                       "due_on": "2027-07-04T12:00:00Z"})
        summary = (await s.client.read_resource("ghmilestones://server/summary")).contents[0]
    assert created["due_day"] == "2026-12-30" and created["milestone"]["due_on"] == "2026-12-30T08:00:00Z"
    assert moved["due_day"] == "2027-07-04" and moved["milestone"]["due_on"] == "2027-07-04T07:00:00Z"
    assert fake.milestones(OWNER, REPO)[-1].due_on is not None
    text = getattr(summary, "text", "")
    assert "US Pacific calendar day" in text and "due_day" in text


@pytest.mark.parametrize("package", ["github_issues_mcp", "github_milestones_mcp", "github_sub_issues_mcp",
                                     "forgejo_labels_mcp"])
def test_each_field_saying_something_happened_is_explained_once_in_the_summary(package: str) -> None:
    """hidden_removed, withheld, stored_as_sent: optional in every outputSchema that carries them,
    explained by one summary line each (the server's instructions), and nowhere else."""
    tools = json.loads((ROOT / "generated" / package / "tools.json").read_text(encoding="utf-8"))["tools"]
    summary = (ROOT / "generated" / package / "summary.md").read_text(encoding="utf-8")
    carried: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            for name in ("hidden_removed", "withheld", "stored_as_sent", "altered_fields"):
                if name in node.get("properties", {}):
                    carried.add(name)
                    assert name not in node.get("required", []), name
                    assert "description" not in node["properties"][name], name
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for tool in tools:
        visit(tool["outputSchema"])
    lines = summary.splitlines()
    for name in ("hidden_removed", "withheld", "stored_as_sent"):
        said = [line for line in lines if line.startswith(f"{name} (")]
        assert len(said) == (1 if name in carried else 0), (package, name)
    assert "hidden_removed" in carried
