"""Triage questions answered by one github_search_issues call (issue 21, item 2): rows carry the
triage fields (assignees, milestone), and the filters for what an issue lacks (assignee,
milestone, labels, a given label), its comment count, mentions and commenters give the same
issues whether the server lists the repository or searches it."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.test_issue_tools import call

pytestmark = pytest.mark.anyio
ODD = "needs,info"  # a name neither the listing's labels= nor a quoted search label matches exactly


@pytest.fixture
def triage(fake: FakeGitHub, seeded: dict[str, Any]) -> dict[str, int]:
    fake.add_label(OWNER, REPO, ODD)
    milestone = seeded["milestone"]
    a = fake.add_issue(OWNER, REPO, "zeta one", body="ping @octocat", labels=["bug"],
                       assignees=["hubot"], milestone=milestone, author="hubot")
    fake.add_comment(OWNER, REPO, a, "seen", author="hubot")
    fake.add_comment(OWNER, REPO, a, "again", author="hubot")
    b = fake.add_issue(OWNER, REPO, "zeta two", body="nothing", author="hubot")
    c = fake.add_issue(OWNER, REPO, "zeta three", labels=["triage"], milestone=milestone,
                       author="hubot")
    fake.add_comment(OWNER, REPO, c, "on it", author="octocat")
    d = fake.add_issue(OWNER, REPO, "zeta four", labels=[ODD, "enhancement"], assignees=["octocat"],
                       author="hubot")
    return {"a": a, "b": b, "c": c, "d": d}


CASES = [
    ({"missing": ["assignee"]}, "bc"),
    ({"missing": ["milestone"]}, "bd"),
    ({"missing": ["labels"]}, "b"),
    ({"missing": ["assignee", "milestone"]}, "b"),
    ({"lacks_labels": ["bug"]}, "bcd"),
    ({"lacks_labels": [ODD, "triage"]}, "ab"),
    ({"labels": [ODD]}, "d"),
    ({"min_comments": 1}, "ac"),
    ({"max_comments": 0}, "bd"),
    ({"min_comments": 1, "max_comments": 1}, "c"),
    ({"mentions_login": "octocat"}, "a"),
    ({"commenter_login": "octocat"}, "c"),
    ({"missing": ["assignee"], "lacks_labels": ["triage"]}, "b"),
    # issue 34: the milestone by number or title (a title is looked up), none or any
    ({"milestone": 1}, "ac"),
    ({"milestone": "v1.0"}, "ac"),
    ({"milestone": "V1.0"}, "ac"),  # one milestone folds to it: taken
    ({"milestone": "none"}, "bd"),
    ({"milestone": "any"}, "ac"),
    ({"milestone": "v1.0", "labels": ["triage"]}, "c"),
]


@pytest.mark.parametrize("how", ["listing", "search"])
@pytest.mark.parametrize(("filters", "expected"), CASES)
async def test_each_triage_filter_answers_in_one_call(
        fake: FakeGitHub, triage: dict[str, int], how: str, filters: dict[str, Any], expected: str) -> None:
    args = {"owner": OWNER, "repo": REPO, **filters, **({"query": "zeta"} if how == "search" else {})}
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_search_issues", args)
    assert not is_error, data
    got = sorted(i["issue_number"] for i in data["issues"] if i["title"].startswith("zeta"))
    assert got == sorted(triage[k] for k in expected)
    assert "estimated_total" not in data or data["estimated_total"] == len(data["issues"])


async def test_filters_reach_github_as_its_own_qualifiers(fake: FakeGitHub, triage: dict[str, int]) -> None:
    args = {"owner": OWNER, "repo": REPO, "query": "zeta", "missing": ["assignee", "labels"],
            "lacks_labels": ["bug", ODD], "min_comments": 1, "mentions_login": "octocat",
            "commenter_login": "hubot"}
    async with Client(in_memory_server(fake), cache=None) as client:
        await call(client, "github_search_issues", args)
        await call(client, "github_search_issues", {"owner": OWNER, "repo": REPO,
                                                    "missing": ["assignee", "milestone"]})
    q = fake.calls("search/issues-and-pull-requests")[-1].query["q"]
    for term in ('-label:"bug"', "no:assignee", "no:label", "comments:1..*", "mentions:octocat",
                 "commenter:hubot", f"repo:{OWNER}/{REPO}"):
        assert term in q.split(" "), (term, q)
    assert ODD not in q  # filtered on the rows instead: search cannot exclude it exactly
    listed = fake.calls("issues/list-for-repo")[-1].query
    assert (listed["assignee"], listed["milestone"]) == ("none", "none")


async def test_commenter_alone_searches_the_repository(fake: FakeGitHub, triage: dict[str, int]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, data = await call(client, "github_search_issues",
                                    {"owner": OWNER, "repo": REPO, "commenter_login": "octocat"})
    assert not is_error and [i["issue_number"] for i in data["issues"]] == [triage["c"]]
    assert fake.calls("search/issues-and-pull-requests")


async def test_summary_rows_carry_the_triage_fields(fake: FakeGitHub, triage: dict[str, int]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        _, data = await call(client, "github_search_issues", {"owner": OWNER, "repo": REPO})
    rows = {i["issue_number"]: i for i in data["issues"]}
    assert rows[triage["a"]]["assignees"] == ["hubot"]
    assert rows[triage["a"]]["milestone"] == {"number": 1, "title": "v1.0"}
    assert rows[triage["b"]]["assignees"] == [] and rows[triage["b"]]["milestone"] is None
    assert "body" not in rows[triage["a"]] and "state_reason" not in rows[triage["a"]]


async def test_in_title_body_finds_what_github_finds(fake: FakeGitHub, triage: dict[str, int]) -> None:
    """The LLM trial's `safari in:title,body` answered nothing from the fake (in: lists were not
    understood); a qualifier the fake cannot answer is now refused, never answered empty."""
    fake.add_issue(OWNER, REPO, "Login redirects loop on Safari", body="After SSO, Safari loops.")
    async with Client(in_memory_server(fake), cache=None) as client:
        _, found = await call(client, "github_search_issues",
                              {"owner": OWNER, "repo": REPO, "query": "safari in:title,body"})
        is_error, refused = await call(client, "github_search_issues",
                                       {"owner": OWNER, "repo": REPO, "query": "safari is:queued"})
    assert [i["title"] for i in found["issues"]] == ["Login redirects loop on Safari"]
    assert is_error and refused["code"] == "invalid_field" and refused["details"]["field"] == "query"


async def test_a_milestone_filter_reaches_github_as_its_own_filter(fake: FakeGitHub, triage: dict[str, int]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        await call(client, "github_search_issues", {"owner": OWNER, "repo": REPO, "milestone": "v1.0"})
        listed = fake.calls("issues/list-for-repo")[-1].query
        await call(client, "github_search_issues", {"owner": OWNER, "repo": REPO, "milestone": "any"})
        anything = fake.calls("issues/list-for-repo")[-1].query
        await call(client, "github_search_issues", {"owner": OWNER, "repo": REPO, "query": "zeta",
                                                    "milestone": "none"})
    assert listed["milestone"] == "1" and anything["milestone"] == "*"
    assert "no:milestone" in fake.calls("search/issues-and-pull-requests")[-1].query["q"].split(" ")
    assert [c.query.get("state") for c in fake.calls("issues/list-milestones")] == ["all"]  # closed ones too


async def test_an_unknown_milestone_title_lists_some_and_a_contradiction_is_refused(
        fake: FakeGitHub, triage: dict[str, int]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, unknown = await call(client, "github_search_issues",
                                       {"owner": OWNER, "repo": REPO, "milestone": "v9"})
        assert is_error and unknown["code"] == "milestone_not_found"
        assert unknown["details"]["field"] == "milestone" and unknown["details"]["choices"] == ["v1.0"]
        is_error, both = await call(client, "github_search_issues", {"owner": OWNER, "repo": REPO,
                                                                    "milestone": 1, "missing": ["milestone"]})
        assert is_error and both["code"] == "invalid_field" and both["details"]["field"] == "milestone"
        is_error, alone = await call(client, "github_search_issues", {"query": "zeta", "milestone": 1})
        assert is_error and alone["code"] == "invalid_field"  # a milestone belongs to owner/repo


async def test_a_batch_matches_by_milestone(fake: FakeGitHub, triage: dict[str, int]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        is_error, done = await call(client, "github_update_issues", {
            "owner": OWNER, "repo": REPO, "match": {"milestone": "v1.0", "query": "zeta"}, "add_labels": ["wontfix"]})
    assert not is_error, done
    assert sorted(r["issue_number"] for r in done["items"]) == sorted([triage["a"], triage["c"]])
    assert all("wontfix" in fake.label_names(OWNER, REPO, triage[k]) for k in "ac")
    assert "wontfix" not in fake.label_names(OWNER, REPO, triage["b"])


def test_the_query_says_how_github_matches_text() -> None:
    """Agents listed every issue instead of trusting a text query (issue 34): the parameter says
    what GitHub's search does with words (docs.github.com, "Searching issues and pull requests":
    not case sensitive; title, body and comments unless in: narrows; whole words, plurals
    stemmed, no partial words), and the fake matches the same way (tests/fake/test_search.py)."""
    from github_issues_mcp import SERVER

    query = next(t for t in SERVER.tools if t.name == "github_search_issues").input_schema["properties"]["query"]
    for words in ("whole words", "any case", "plurals", "not parts of words", "title, body and comments",
                  "in:title", "in:body", "in:comments"):
        assert words in query["description"], words
