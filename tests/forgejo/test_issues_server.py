"""forgejo-issues-mcp (the `issues` toolset of forgejo-mcp) end to end against the Forgejo fake,
through the official MCP client in both protocol eras: every tool's scenarios — search filters,
reads with comments, creates and updates by name (labels, milestone, assignees), the version
check, idempotent writes, what Forgejo drops for an account without write access, and the
failures an agent must be able to act on. Every request and answer of the fake is checked against
the pinned Forgejo description with the issues file's spec patches (the `fake` fixture fails on
any violation)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeforgejo import FakeForgejo
from forgejo_issues_mcp import SERVER
from tests.forgejo.forgejo_support import MEMBER_TOKEN, ORG, OWNER_TOKEN, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]
WHERE = {"owner": ORG, "repo": REPO}
FULL = f"{ORG}/{REPO}"
READER_TOKEN = "e5" * 20  # carol: reads acme/web (and may open issues), writes nothing else
SECRETS = (OWNER_TOKEN, MEMBER_TOKEN, READER_TOKEN)


@pytest.fixture
def world(fake: FakeForgejo, ids: dict[str, Any]) -> dict[str, Any]:
    """The shared seed (acme/web: bug, docs, legacy; issues 1-2, pull request 3) plus milestones,
    carol (read access) and a few issues with assignees, comments and mentions."""
    fake.add_user("carol")
    with fake.lock:
        fake.state.repo(ORG, REPO).collaborators["carol"] = "read"  # type: ignore[union-attr]
    fake.add_token(READER_TOKEN, "carol", ("write:issue", "read:repository", "read:user"))
    labels = {lb.name: lb for lb in fake.labels_of(repo=FULL)}
    v1 = fake.add_milestone(FULL, "v1.0")
    v2 = fake.add_milestone(FULL, "v2.0")
    old = fake.add_milestone(FULL, "v0.9", state="closed")
    dark = fake.add_issue(FULL, "Dark mode", author="carol", body="Please follow the OS theme.",
                          labels=[labels["docs"]], assignees=["bob"], milestone=v1)
    fake.add_comment(FULL, dark.number, "Ping @alice, the CSS is ready.", author="bob")
    shipped = fake.add_issue(FULL, "Ship 0.9", author="alice", milestone=old, state="closed")
    both = fake.add_issue(FULL, "Crash and docs", author="bob", labels=[labels["bug"], labels["docs"]])
    return {"labels": labels, "v1": v1, "v2": v2, "old": old, "dark": dark.number,
            "shipped": shipped.number, "both": both.number}


def opened(fake: FakeForgejo, mode: str = "auto", token: str = OWNER_TOKEN) -> Opened:
    return Opened(in_memory_server(fake, token, spec=SERVER), secrets=SECRETS, mode=mode)


def numbers(listed: dict[str, Any]) -> list[int]:
    return [row["issue_number"] for row in listed["issues"]]


def sent(fake: FakeForgejo, operation: str) -> list[Any]:
    return [r.body for r in fake.calls(operation)]


# -- search -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_search_filters_as_forgejo_does_and_never_lists_pull_requests(
        fake: FakeForgejo, world: dict[str, Any], mode: str) -> None:
    async with opened(fake, mode) as s:
        assert numbers(await s.ok("forgejo_search_issues", WHERE)) == [world["both"], world["dark"], 1]
        assert numbers(await s.ok("forgejo_search_issues", {**WHERE, "state": "all", "sort": "oldest"})) == [
            1, 2, world["dark"], world["shipped"], world["both"]]  # 3 is a pull request
        # every label must be on the issue (Forgejo's label filter is an AND)
        assert numbers(await s.ok("forgejo_search_issues", {**WHERE, "labels": ["bug", "docs"]})) == [world["both"]]
        assert numbers(await s.ok("forgejo_search_issues",
                                  {**WHERE, "state": "all", "milestones": ["v0.9", "v1.0"]})) == [
            world["shipped"], world["dark"]]
        assert numbers(await s.ok("forgejo_search_issues", {**WHERE, "assignee_login": "BOB"})) == [world["dark"]]
        assert numbers(await s.ok("forgejo_search_issues", {**WHERE, "creator_login": "carol"})) == [world["dark"]]
        assert numbers(await s.ok("forgejo_search_issues", {**WHERE, "mentions_login": "alice"})) == [world["dark"]]
        assert numbers(await s.ok("forgejo_search_issues", {**WHERE, "keyword": "css IS READY"})) == [world["dark"]]
        rows = (await s.ok("forgejo_search_issues", {**WHERE, "labels": ["docs"], "detail": "full"}))["issues"]
        dark = next(r for r in rows if r["issue_number"] == world["dark"])
        assert dark["milestone"] == {"id": world["v1"].id, "title": "v1.0"} and dark["assignees"] == ["bob"]
        assert dark["body"] == "Please follow the OS theme." and dark["comment_count"] == 1
    query = fake.calls("issueListIssues")[2].query
    assert query["labels"] == "bug,docs" and query["type"] == "issues" and query["state"] == "open"


async def test_names_forgejo_would_drop_from_a_filter_are_refused_not_ignored(
        fake: FakeForgejo, world: dict[str, Any]) -> None:
    """Forgejo drops a label or milestone name it does not know, and with none left lists
    everything: the tool refuses them before the listing is asked."""
    async with opened(fake) as s:
        missing = await s.error("forgejo_search_issues", {**WHERE, "labels": ["docs", "nope"]}, "label_not_found")
        assert missing["details"] == {"field": "labels", "reason": "no such label: labels[1]", "count": 1}
        await s.error("forgejo_search_issues", {**WHERE, "milestones": ["v9"]}, "milestone_not_found")
        login = await s.error("forgejo_search_issues", {**WHERE, "assignee_login": "nobody"}, "invalid_field")
        assert login["details"]["field"] == "assignee_login"
        comma = await s.error("forgejo_search_issues", {**WHERE, "labels": ["a,b"]}, "invalid_field")
        assert comma["details"]["field"] == "labels"
    assert fake.calls("issueListIssues") == []


async def test_search_pages_with_a_cursor(fake: FakeForgejo, world: dict[str, Any]) -> None:
    for i in range(50):
        fake.add_issue(FULL, f"bulk {i}")
    async with opened(fake) as s:
        first = await s.ok("forgejo_search_issues", {**WHERE, "sort": "oldest"})
        assert len(first["issues"]) == 50 and first["has_more"] is True
        rest = await s.ok("forgejo_search_issues", {**WHERE, "sort": "oldest", "cursor": first["next_cursor"]})
        assert rest["has_more"] is False and "next_cursor" not in rest
        assert len(set(numbers(first)) | set(numbers(rest))) == 53
        other = await s.error("forgejo_search_issues", {**WHERE, "cursor": first["next_cursor"]}, "invalid_field")
        assert other["details"]["field"] == "cursor"  # bound to the other arguments


async def test_a_login_filter_needs_the_user_scope(fake: FakeForgejo, world: dict[str, Any]) -> None:
    async with opened(fake, token=MEMBER_TOKEN) as s:  # write:issue, read:organization, read:repository
        await s.ok("forgejo_search_issues", WHERE)
        denied = await s.error("forgejo_search_issues", {**WHERE, "creator_login": "carol"}, "insufficient_scope")
        assert denied["details"]["required_scopes"] == ["read:user"]


# -- get ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_get_reads_the_issue_with_every_comment(fake: FakeForgejo, world: dict[str, Any], mode: str) -> None:
    fake.add_comment(FULL, world["dark"], "Second <!-- hidden --> thought.", author="carol")
    async with opened(fake, mode) as s:
        got = await s.ok("forgejo_get_issue", {**WHERE, "issue_number": world["dark"]})
        assert got["issue"]["title"] == "Dark mode" and got["issue"]["version"] == got["version"]
        assert [(c["author"], c["body"]) for c in got["comments"]] == [
            ("bob", "Ping @alice, the CSS is ready."), ("carol", "Second  thought.")]
        assert got["comments"][1]["hidden_removed"] == 1
        short = await s.ok("forgejo_get_issue", {**WHERE, "issue_number": world["dark"], "detail": "summary"})
        assert "body" not in short["issue"] and "body" not in short["comments"][0]
        pull = await s.error("forgejo_get_issue", {**WHERE, "issue_number": 3}, "issue_not_found")
        assert pull["message"] == "That number is a pull request; this server only handles issues."
        await s.error("forgejo_get_issue", {**WHERE, "issue_number": 999}, "issue_not_found")
        await s.error("forgejo_get_issue", {"owner": ORG, "repo": "nope", "issue_number": 1}, "repo_not_found")


# -- create ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_create_takes_labels_milestone_and_assignees_by_name(
        fake: FakeForgejo, world: dict[str, Any], mode: str) -> None:
    labels = world["labels"]
    async with opened(fake, mode) as s:
        made = await s.ok("forgejo_create_issue", {**WHERE, "title": "Crash on save", "body": "Steps: …",
                                                  "labels": ["bug", "DOCS"], "assignee_logins": ["Bob"],
                                                  "milestone": "v2.0"})
        issue = made["issue"]
        assert issue["labels"] == ["bug", "docs"] and issue["assignees"] == ["bob"]
        assert issue["milestone"] == {"id": world["v2"].id, "title": "v2.0"}
        assert "stored_as_sent" not in made and "ignored_fields" not in made
        assert sent(fake, "issueCreateIssue") == [{
            "title": "Crash on save", "body": "Steps: …", "labels": [labels["bug"].id, labels["docs"].id],
            "assignees": ["bob"], "milestone": world["v2"].id}]  # ids, and the login as Forgejo spells it
        got = await s.ok("forgejo_get_issue", {**WHERE, "issue_number": issue["issue_number"]})
        assert got["version"] == made["version"]
        by_id = await s.ok("forgejo_create_issue", {**WHERE, "title": "By id", "milestone": world["v1"].id})
        assert by_id["issue"]["milestone"]["id"] == world["v1"].id


async def test_create_refuses_what_forgejo_would_drop_or_fail_on_before_writing(
        fake: FakeForgejo, world: dict[str, Any]) -> None:
    async with opened(fake) as s:
        unknown = await s.error("forgejo_create_issue", {**WHERE, "title": "x", "labels": ["nope", "bug", "zzz"]},
                                "label_not_found")
        assert unknown["details"]["unknown"] == ["labels[0]", "labels[2]"]
        assert unknown["details"]["choices"] == ["bug", "docs", "legacy"]
        title = await s.error("forgejo_create_issue", {**WHERE, "title": "x", "milestone": "v0.9"},
                              "milestone_not_found")  # closed: only open milestones by title
        assert title["details"]["choices"] == ["v1.0", "v2.0"]
        await s.error("forgejo_create_issue", {**WHERE, "title": "x", "milestone": 999}, "milestone_not_found")
        login = await s.error("forgejo_create_issue", {**WHERE, "title": "x", "assignee_logins": ["carol"]},
                              "invalid_field")  # carol reads only: Forgejo cannot assign her
        assert login["details"]["field"] == "assignee_logins"
    assert fake.calls("issueCreateIssue") == []


async def test_an_idempotency_key_makes_a_create_happen_once_even_when_its_answer_is_lost(
        fake: FakeForgejo, world: dict[str, Any]) -> None:
    args = {**WHERE, "title": "Once", "body": "only once", "idempotency_key": "create-0001"}
    async with opened(fake) as s:
        first = await s.ok("forgejo_create_issue", args)
        again = await s.ok("forgejo_create_issue", args)
        assert again == {**first, "request_id": again["request_id"]}
        fake.faults.add("issueCreateIssue", "reset", after_commit=True)
        lost = await s.call("forgejo_create_issue", {**args, "title": "Twice?", "idempotency_key": "create-0002"})
        assert lost["code"] == "upstream_unavailable"
        found = await s.ok("forgejo_create_issue", {**args, "title": "Twice?", "idempotency_key": "create-0002"})
        assert found["issue"]["title"] == "Twice?"
    titles = [i["title"] for i in (r.body for r in fake.calls("issueCreateIssue"))]
    assert titles == ["Once", "Twice?"]  # the repeat found the lost one instead of writing again


async def test_an_account_without_write_access_is_told_what_forgejo_dropped(
        fake: FakeForgejo, world: dict[str, Any]) -> None:
    async with opened(fake, token=READER_TOKEN) as s:
        made = await s.ok("forgejo_create_issue", {**WHERE, "title": "From carol", "labels": ["bug"],
                                                  "milestone": "v1.0"})
        assert made["issue"]["labels"] == [] and made["issue"]["milestone"] is None
        assert made["ignored_fields"] == ["milestone", "labels"]


# -- update ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_update_adds_and_removes_labels_by_name_and_sets_or_clears_the_milestone(
        fake: FakeForgejo, world: dict[str, Any], mode: str) -> None:
    labels, number = world["labels"], world["both"]
    async with opened(fake, mode) as s:
        done = await s.ok("forgejo_update_issue", {**WHERE, "issue_number": number, "add_labels": ["legacy"],
                                                  "remove_labels": ["bug"], "milestone": "v1.0",
                                                  "title": "Crash and docs (triaged)"})
        assert done["changed_fields"] == ["title", "milestone", "labels"]
        assert done["issue"]["labels"] == ["docs", "legacy"] and done["issue"]["milestone"]["title"] == "v1.0"
        assert len(fake.calls("issueListLabels")) == 1  # one lookup for both lists
        assert [r.path.rsplit("/", 1)[-1] for r in fake.calls("issueRemoveLabel")] == [str(labels["bug"].id)]
        assert sent(fake, "issueAddLabel") == [{"labels": [labels["legacy"].id]}]
        cleared = await s.ok("forgejo_update_issue", {**WHERE, "issue_number": number, "milestone": None})
        assert cleared["changed_fields"] == ["milestone"] and cleared["issue"]["milestone"] is None
        assert sent(fake, "issueEditIssue")[-1] == {"milestone": 0}  # Forgejo clears with 0
        same = await s.ok("forgejo_update_issue", {**WHERE, "issue_number": number, "milestone": None,
                                                  "add_labels": ["docs"], "remove_labels": ["bug"]})
        assert same["changed_fields"] == [] and len(sent(fake, "issueEditIssue")) == 2  # nothing sent
    assert [lb.name for lb in fake.labels_of(repo=FULL) if lb.id in fake.issue_label_ids(FULL, number)] == [
        "docs", "legacy"]


async def test_update_state_assignees_and_the_version_check(fake: FakeForgejo, world: dict[str, Any]) -> None:
    number = world["dark"]
    async with opened(fake) as s:
        read = await s.ok("forgejo_get_issue", {**WHERE, "issue_number": number})
        closed = await s.ok("forgejo_update_issue", {**WHERE, "issue_number": number, "state": "closed",
                                                    "assignee_logins": ["ALICE", "bob"],
                                                    "expected_version": read["version"]})
        assert closed["changed_fields"] == ["state", "assignees"]
        assert closed["issue"]["state"] == "closed" and closed["issue"]["assignees"] == ["alice", "bob"]
        stale = await s.error("forgejo_update_issue", {**WHERE, "issue_number": number, "state": "open",
                                                      "expected_version": read["version"]}, "conflict")
        assert stale["repair"]["tool"] == "forgejo_get_issue"
        unassigned = await s.ok("forgejo_update_issue", {**WHERE, "issue_number": number, "assignee_logins": []})
        assert unassigned["issue"]["assignees"] == []
    assert fake.issue(FULL, number).state == "closed"


async def test_update_refuses_before_any_write_what_forgejo_would_fail_on(
        fake: FakeForgejo, world: dict[str, Any]) -> None:
    number = world["both"]
    async with opened(fake) as s:
        unknown = await s.error("forgejo_update_issue", {**WHERE, "issue_number": number, "state": "closed",
                                                        "add_labels": ["nope"], "remove_labels": ["docs", "gone"]},
                                "label_not_found")
        assert unknown["details"]["fields"] == ["add_labels", "remove_labels"]
        assert unknown["details"]["unknown"] == ["add_labels[0]", "remove_labels[1]"]
        await s.error("forgejo_update_issue", {**WHERE, "issue_number": number, "milestone": 999},
                      "milestone_not_found")  # Forgejo itself would answer 500
        await s.error("forgejo_update_issue", {**WHERE, "issue_number": number, "assignee_logins": ["nobody"]},
                      "invalid_field")  # ... and here too
        await s.error("forgejo_update_issue", {**WHERE, "issue_number": 3, "title": "x"}, "issue_not_found")
        await s.error("forgejo_update_issue", {**WHERE, "issue_number": number, "add_labels": ["bug"],
                                               "remove_labels": ["bug"]}, "invalid_field")
        await s.error("forgejo_update_issue", {**WHERE, "issue_number": number}, "invalid_field")
    assert [r for r in fake.requests if r.method != "GET"] == []


async def test_closing_an_issue_with_open_dependencies_says_so(fake: FakeForgejo, world: dict[str, Any]) -> None:
    fake.add_dependency(FULL, world["both"], depends_on=world["dark"])
    async with opened(fake) as s:
        blocked = await s.error("forgejo_update_issue", {**WHERE, "issue_number": world["both"],
                                                        "state": "closed"}, "issue_blocked")
        assert blocked["details"]["field"] == "state"
    assert fake.issue(FULL, world["both"]).state == "open"


async def test_the_author_without_write_access_edits_text_and_is_told_what_was_ignored(
        fake: FakeForgejo, world: dict[str, Any]) -> None:
    async with opened(fake, token=READER_TOKEN) as s:  # carol wrote "Dark mode"
        done = await s.ok("forgejo_update_issue", {**WHERE, "issue_number": world["dark"], "title": "Dark theme",
                                                  "milestone": "v2.0"})
        assert done["issue"]["title"] == "Dark theme" and done["changed_fields"] == ["title"]
        assert done["ignored_fields"] == ["milestone"]
        refused = await s.error("forgejo_update_issue", {**WHERE, "issue_number": world["both"], "title": "mine"},
                                "no_push_access")  # bob's issue: Forgejo's bare 403
        assert refused["details"]["reason"]


# -- comment -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_comment_once_per_key(fake: FakeForgejo, world: dict[str, Any], mode: str) -> None:
    args = {**WHERE, "issue_number": world["dark"], "body": "Fixed in 1.4.2.", "idempotency_key": "comment-0001"}
    async with opened(fake, mode) as s:
        first = await s.ok("forgejo_add_comment", args)
        assert first["comment"]["author"] == "alice" and "stored_as_sent" not in first
        again = await s.ok("forgejo_add_comment", args)
        assert again["comment"] == first["comment"]
        await s.error("forgejo_add_comment", {**args, "issue_number": 999, "idempotency_key": "comment-0002"},
                      "issue_not_found")
    assert [c.body for c in fake.issue(FULL, world["dark"]).comments].count("Fixed in 1.4.2.") == 1


async def test_a_locked_issue_refuses_comments_from_accounts_without_write_access(
        fake: FakeForgejo, world: dict[str, Any]) -> None:
    locked = fake.add_issue(FULL, "Heated", author="carol", locked=True)
    async with opened(fake, token=READER_TOKEN) as s:
        await s.error("forgejo_add_comment", {**WHERE, "issue_number": locked.number, "body": "+1"}, "issue_locked")
    async with opened(fake) as s:
        await s.ok("forgejo_add_comment", {**WHERE, "issue_number": locked.number, "body": "Locked for now."})
