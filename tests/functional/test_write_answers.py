"""What the agent trial asked for, end to end through the official client: writes answer with the
resulting state, milestones by title, label repairs that finish the job, one presence rule."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened, Session

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
SECRET = "Secret milestone 3b7d"  # a title sent by the caller: never echoed
DENSITY_NOTE = "Optional fields: only with detail full."
# no shape rows: a batch item carries changed_fields or error, each described as such
BATCHES = {"github_update_issues", "github_update_milestones"}


def writes(fake: FakeGitHub) -> list[Any]:
    return [r for r in fake.requests if r.method != "GET"]


# -- 2: writes answer with state ----------------------------------------------------------------


async def test_update_answers_with_the_issue_and_names_its_changed_fields(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    v11 = fake.add_milestone(OWNER, REPO, "v1.1")
    number = seeded["first"]  # labels bug, triage; no assignee, no milestone
    async with Opened(in_memory_server(fake)) as s:
        data = await s.ok("github_update_issue", {
            **REPO_ARGS, "issue_number": number, "title": "Crash on an empty config", "state": "closed",
            "state_reason": "not_planned", "add_labels": ["wontfix"], "remove_labels": ["triage"],
            "assignee_logins": ["hubot"], "milestone": "v1.1", "locked": True})
        row = data["issue"]
        assert data["changed_fields"] == ["title", "state", "state_reason", "assignees", "milestone",
                                          "labels", "locked"]
        assert (row["title"], row["state"], row["state_reason"]) == (
            "Crash on an empty config", "closed", "not_planned")
        assert sorted(row["labels"]) == ["bug", "wontfix"] and row["assignees"] == ["hubot"]
        assert row["milestone"] == {"number": v11, "title": "v1.1"}
        read = await s.ok("github_get_issue", {**REPO_ARGS, "issue_number": number})
    assert {k: read["issue"][k] for k in row} == row and read["version"] == data["version"]
    assert set(data["changed_fields"]) <= set(read["issue"])  # fields of the issue row


async def test_create_comment_and_label_answer_with_their_rows(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Opened(in_memory_server(fake)) as s:
        made = await s.ok("github_create_issue", {**REPO_ARGS, "title": "No body", "labels": ["bug"]})
        row = made["issue"]
        assert (row["labels"], row["assignees"], row["milestone"], row["state_reason"]) == (["bug"], [], None, None)
        assert row["author"] == "octocat" and row["comment_count"] == 0
        posted = await s.ok("github_add_comment", {**REPO_ARGS, "issue_number": row["issue_number"],
                                                   "body": "First!"})
        comment = fake.comments(OWNER, REPO, row["issue_number"])[-1]
        posted_row = posted["comment"]
        assert (posted_row["comment_id"], posted_row["author"]) == (comment.id, "octocat")
        assert posted_row["url"].endswith(f"#issuecomment-{comment.id}") and "preview" not in posted_row
        published = s.tools["github_add_comment"]["outputSchema"]["oneOf"][0]["properties"]["comment"]
        assert set(posted_row) == set(published["required"]) == set(published["properties"]) - ADDED
        label = await s.ok("github_create_label", {**REPO_ARGS, "name": "needs-repro"})
    assert label["label"] == {"name": "needs-repro", "color": "ededed", "description": None}


# -- 3: milestones by title ---------------------------------------------------------------------


async def test_a_milestone_title_works_on_create_and_update_in_any_letter_case(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    v11 = fake.add_milestone(OWNER, REPO, "v1.1")
    async with Opened(in_memory_server(fake)) as s:
        made = await s.ok("github_create_issue", {**REPO_ARGS, "title": "t", "milestone": "v1.1"})
        number = made["issue"]["issue_number"]
        assert made["issue"]["milestone"] == {"number": v11, "title": "v1.1"}
        assert fake.calls("issues/create")[-1].body["milestone"] == v11  # GitHub gets the number
        moved = await s.ok("github_update_issue", {**REPO_ARGS, "issue_number": number, "milestone": "V1.0"})
        assert moved["changed_fields"] == ["milestone"]
        assert moved["issue"]["milestone"] == {"number": seeded["milestone"], "title": "v1.0"}
        same = await s.ok("github_update_issue", {**REPO_ARGS, "issue_number": number,
                                                  "milestone": seeded["milestone"]})
    assert same["changed_fields"] == []
    assert fake.calls("issues/list-milestones")[0].query == {"state": "open", "per_page": "100", "page": "1"}


async def test_an_unknown_title_lists_the_open_milestones_and_writes_nothing(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_milestone(OWNER, REPO, "v1.1")
    fake.add_milestone(OWNER, REPO, "v0.9", state="closed")
    async with Opened(in_memory_server(fake), secrets=(SECRET,)) as s:
        created = await s.error("github_create_issue", {**REPO_ARGS, "title": "t", "milestone": SECRET},
                                "milestone_not_found")
        updated = await s.error("github_update_issue", {**REPO_ARGS, "issue_number": seeded["first"],
                                                        "milestone": SECRET}, "milestone_not_found")
        closed = await s.error("github_create_issue", {**REPO_ARGS, "title": "t", "milestone": "v0.9"},
                               "milestone_not_found")
    for data in (created, updated, closed):
        assert data["details"]["field"] == "milestone"
        assert data["details"]["choices"] == ["v1.0", "v1.1"]  # open ones only, as listed
        assert "details.choices" in data["message"]
    assert writes(fake) == []


async def test_choices_are_bounded_and_a_number_needs_no_lookup(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    for i in range(130):
        fake.add_milestone(OWNER, REPO, f"sprint {i:03d}")
    async with Opened(in_memory_server(fake)) as s:
        data = await s.error("github_create_issue", {**REPO_ARGS, "title": "t", "milestone": "nope"},
                             "milestone_not_found")
        assert len(data["details"]["choices"]) == 20
        assert len(fake.calls("issues/list-milestones")) == 2  # 131 open milestones: two pages
        made = await s.ok("github_create_issue", {**REPO_ARGS, "title": "t", "milestone": "sprint 129"})
        assert made["issue"]["milestone"]["title"] == "sprint 129"
        before = len(fake.calls("issues/list-milestones"))
        await s.ok("github_create_issue", {**REPO_ARGS, "title": "t", "milestone": seeded["milestone"]})
    assert len(fake.calls("issues/list-milestones")) == before
    assert fake.calls("issues/create")[-1].body["milestone"] == seeded["milestone"]


async def test_an_unknown_milestone_number_says_to_pass_a_title(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Opened(in_memory_server(fake)) as s:
        for tool, args in (("github_create_issue", {"title": "t"}),
                           ("github_update_issue", {"issue_number": seeded["first"]})):
            data = await s.error(tool, {**REPO_ARGS, **args, "milestone": 999}, "milestone_not_found")
            assert data["details"]["field"] == "milestone" and "title" in data["message"]


# -- 4: label repairs that finish the job ---------------------------------------------------------


@pytest.mark.parametrize("tool", ["github_create_issue", "github_update_issue"])
async def test_a_missing_label_is_counted_and_the_repair_creates_it(
        fake: FakeGitHub, seeded: dict[str, Any], tool: str) -> None:
    args = {**REPO_ARGS, **({"title": "t", "labels": ["bug", "needs-repro", "p1"]} if tool == "github_create_issue"
                            else {"issue_number": seeded["first"], "add_labels": ["needs-repro", "p1"]})}
    async with Opened(in_memory_server(fake)) as s:
        data = await s.error(tool, args, "label_not_found")
        assert data["details"]["count"] == 2
        assert data["repair"]["alternative"].startswith("github_create_label")
        for name in ("needs-repro", "p1"):
            await s.ok("github_create_label", {**data["repair"]["arguments"], "name": name})
        done = await s.ok(tool, args)
    assert {"needs-repro", "p1"} <= set(done["issue"]["labels"])
    described = s.tools[tool]["description"]
    assert "label_not_found" in described and "github_create_label" in described


# -- 5: one presence rule -------------------------------------------------------------------------


def rows_in(value: Any, schema: dict[str, Any], top: bool = True) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(row, its schema) for every object below the payload's top level."""
    found: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if isinstance(value, dict) and "properties" in schema:
        if not top:
            found.append((value, schema))
        for key, sub in value.items():
            found += rows_in(sub, schema["properties"].get(key, {}), False)
    elif isinstance(value, list):
        for item in value:
            found += rows_in(item, schema.get("items", {}), False)
    return found


# Row fields the runtime adds only when they say something (issue 34): never required
ADDED = frozenset({"hidden_removed", "withheld", "preview_empty"})


def check_presence(s: Session, tool: str, data: dict[str, Any], detail: str | None) -> int:
    """Every row carries every field of its density: its schema's required ones, plus (with
    detail full) the ones the density note marks optional; the runtime's added fields only when
    they say something. Returns the rows checked."""
    schema = s.tools[tool]["outputSchema"]["oneOf"][0]
    checked = 0
    for row, row_schema in rows_in(data, schema):
        required, every = set(row_schema["required"]), set(row_schema["properties"]) - ADDED
        assert not required & ADDED, (tool, row_schema)
        if required != every:
            assert row_schema.get("description") == DENSITY_NOTE, (tool, row_schema)
        assert set(row) - ADDED == (every if detail == "full" else required), (tool, sorted(row))
        checked += 1
    return checked


async def test_every_row_of_every_issues_tool_has_every_field(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    bare = fake.add_issue(OWNER, REPO, "No body, no milestone", author="ghost")  # author's user is gone
    fake.add_label(OWNER, REPO, "undescribed")
    async with Opened(in_memory_server(fake)) as s:
        issue = {**REPO_ARGS, "issue_number": bare}
        calls: list[tuple[str, dict[str, Any], str | None]] = [
            ("github_search_issues", {**REPO_ARGS, "state": "all"}, "summary"),
            ("github_search_issues", {**REPO_ARGS, "state": "all", "detail": "full"}, "full"),
            ("github_search_issues", {"query": "body", "detail": "full"}, "full"),
            ("github_get_issue", issue, "full"),
            ("github_get_issue", {**issue, "detail": "summary"}, "summary"),
            ("github_get_issue", {**REPO_ARGS, "issue_number": seeded["first"]}, "full"),
            ("github_update_issue", {**issue, "assignee_logins": []}, None),
            ("github_create_issue", {**REPO_ARGS, "title": "plain"}, None),
            ("github_add_comment", {**issue, "body": "x"}, None),
            ("github_list_labels", REPO_ARGS, None),
            ("github_list_labels", {**REPO_ARGS, "name": "undescribed"}, None),
            ("github_update_label", {**REPO_ARGS, "name": "undescribed", "color": "000000"}, None),
            ("github_create_label", {**REPO_ARGS, "name": "fresh"}, None),
            ("github_delete_label", {**REPO_ARGS, "name": "fresh"}, None),
        ]
        checked = {}
        for tool, args, detail in calls:
            checked[tool] = checked.get(tool, 0) + check_presence(s, tool, await s.ok(tool, args), detail)
    assert all(n > 0 for n in checked.values()), checked
    assert set(checked) == set(s.tools) - BATCHES


async def test_every_row_of_every_milestones_tool_has_every_field(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Opened(in_memory_server(fake, spec=MILESTONES)) as s:
        made = await s.ok("github_create_milestone", {**REPO_ARGS, "title": "bare"})  # no description, no due date
        number = made["milestone"]["milestone_number"]
        assert (made["milestone"]["description"], made["milestone"]["due_on"]) == (None, None)
        one = {**REPO_ARGS, "milestone_number": number}
        calls = [("github_create_milestone", made),
                 ("github_list_milestones", await s.ok("github_list_milestones", REPO_ARGS)),
                 ("github_get_milestone", await s.ok("github_get_milestone", one)),
                 ("github_update_milestone", await s.ok("github_update_milestone", {**one, "state": "closed"})),
                 ("github_delete_milestone", await s.ok("github_delete_milestone", one))]
        checked = {tool: check_presence(s, tool, data, None) for tool, data in calls}
    assert all(n > 0 for n in checked.values()) and set(checked) == set(s.tools) - BATCHES
