"""Issue search: query parsing, matching, sorting, paging, the 1000-result cap, visibility."""

from __future__ import annotations

import httpx
import pytest
from fake_support import OWNER, REPO

from fakegithub import FakeClock, FakeGitHub
from fakegithub.search import QueryError, Term, parse

pytestmark = pytest.mark.anyio
REPO_Q = f"repo:{OWNER}/{REPO}"


@pytest.mark.parametrize(
    ("q", "terms"),
    [
        ("repo:o/r is:issue", [Term("repo", "o/r"), Term("is", "issue")]),
        ('label:"good first issue" label:bug', [Term("label", '"good first issue"'), Term("label", "bug")]),
        ('label:"a b","c" -label:d,e', [Term("label", '"a b","c"'), Term("label", "d,e", negated=True)]),
        ("updated:>=2024-01-01 -label:wontfix", [Term("updated", ">=2024-01-01"),
                                                  Term("label", "wontfix", negated=True)]),
        ('crash "empty config" -flaky', [Term(None, "crash"), Term(None, "empty config", phrase=True),
                                         Term(None, "flaky", negated=True)]),
        ("NOT flaky AND crash", [Term(None, "flaky", negated=True), Term(None, "crash")]),
        ("foo:bar in:title", [Term(None, "foo:bar"), Term("in", "title")]),
        ("created:2024-01-01..2024-02-01 comments:>3", [Term("created", "2024-01-01..2024-02-01"),
                                                        Term("comments", ">3")]),
        ("TYPE:PR Author:hubot", [Term("type", "PR"), Term("author", "hubot")]),
    ],
)
def test_parse(q: str, terms: list[Term]) -> None:
    assert parse(q).terms == terms


def test_parse_sort_and_errors() -> None:
    query = parse("is:open sort:created-asc")
    assert (query.sort, query.order) == ("created", "asc")
    with pytest.raises(QueryError):
        parse("created:>not-a-date")
    with pytest.raises(QueryError):
        parse("comments:>many")
    with pytest.raises(QueryError):
        parse("x" * 300)


@pytest.fixture
def corpus(fake: FakeGitHub, seeded: dict[str, int], clock: FakeClock) -> None:
    fake.add_issue(OWNER, REPO, "Login page broken", "The SSO callback loops",
                   labels=["bug", "good first issue"], author="hubot",
                   created_at="2024-01-10T08:00:00Z", updated_at="2024-02-01T00:00:00Z")  # 5
    fake.add_issue(OWNER, REPO, "Docs: explain config", "mention @octocat about the config file",
                   labels=["good first issue"], author="jane", milestone="v1.0",
                   created_at="2023-12-01T00:00:00Z", updated_at="2023-12-02T00:00:00Z")  # 6
    fake.add_repo("other", "place")
    fake.add_issue("other", "place", "Crash elsewhere", "config crash", labels=["bug"])


@pytest.mark.parametrize(
    ("q", "expected", "elsewhere"),
    [
        (f"{REPO_Q}", [1, 2, 3, 4, 5, 6], 0),
        (f"{REPO_Q} is:issue", [1, 2, 3, 5, 6], 0),
        (f"{REPO_Q} is:pr", [4], 0),
        (f"{REPO_Q} type:pr is:open", [4], 0),
        (f"{REPO_Q} is:issue is:closed", [3], 0),
        (f"{REPO_Q} state:open is:issue", [1, 2, 5, 6], 0),
        (f'{REPO_Q} label:"good first issue"', [5, 6], 0),
        (f'{REPO_Q} label:"good first issue" label:bug', [5], 0),
        (f"{REPO_Q} label:triage,enhancement", [1, 2], 0),
        (f"{REPO_Q} -label:bug", [2, 6], 0),
        (f"{REPO_Q} no:label", [], 0),
        (f"{REPO_Q} no:assignee is:issue", [2, 3, 5, 6], 0),
        (f"{REPO_Q} -assignee:*", [2, 3, 4, 5, 6], 0),
        (f"{REPO_Q} assignee:*", [1], 0),
        (f"{REPO_Q} assignee:@me", [], 0),
        (f"{REPO_Q} commenter:@me", [], 0),
        (f"{REPO_Q} involves:@me", [6], 0),
        (f'{REPO_Q} label:"good first issue","triage"', [1, 5, 6], 0),
        (f'{REPO_Q} -label:"good first issue","triage"', [2, 3, 4], 0),
        (f"{REPO_Q} no:milestone is:issue", [2, 3, 5], 0),
        (f'{REPO_Q} milestone:"v1.0"', [1, 6], 0),
        (f"{REPO_Q} author:jane", [1, 6], 0),
        (f"{REPO_Q} -author:hubot", [1, 6], 0),
        (f"{REPO_Q} assignee:hubot", [1], 0),
        (f"{REPO_Q} commenter:hubot", [1], 0),
        (f"{REPO_Q} mentions:octocat", [6], 0),
        (f"{REPO_Q} involves:jane", [1, 6], 0),
        (f"{REPO_Q} CONFIG", [1, 6], 0),
        (f'{REPO_Q} "empty config"', [1], 0),
        (f'{REPO_Q} "config empty"', [], 0),
        # words, never parts of words; a plural finds its singular and back; punctuation splits
        (f"{REPO_Q} confi", [], 0),
        (f"{REPO_Q} configs", [1, 6], 0),
        (f"{REPO_Q} loop in:body", [5], 0),
        (f'{REPO_Q} "sso callback"', [5], 0),
        (f"{REPO_Q} sso-callback", [5], 0),
        (f"{REPO_Q} sso-login", [], 0),
        (f"{REPO_Q} config in:title", [1, 6], 0),
        (f"{REPO_Q} config in:body", [6], 0),
        (f"{REPO_Q} loops in:title,body", [5], 0),
        (f"{REPO_Q} SSO in:title", [], 0),
        (f"{REPO_Q} too", [1], 0),  # a comment ("me too"): comments are searched by default
        (f"{REPO_Q} too in:title,body", [], 0),
        (f"{REPO_Q} too in:comments", [1], 0),
        (f"{REPO_Q} is:closed reason:completed", [3], 0),
        (f'{REPO_Q} reason:"not planned"', [], 0),
        (f"{REPO_Q} draft:false", [4], 0),
        (f"{REPO_Q} archived:false is:pr", [4], 0),
        (f"{REPO_Q} archived:true", [], 0),
        (f"{REPO_Q} comments:1..*", [1], 0),
        (f"{REPO_Q} comments:*..0 is:issue", [2, 3, 5, 6], 0),
        (f"{REPO_Q} config -crash", [6], 0),
        (f"{REPO_Q} created:<2024-01-15", [5, 6], 0),
        (f"{REPO_Q} created:2024-01-10", [5], 0),
        (f"{REPO_Q} created:2023-12-01..2024-01-10", [5, 6], 0),
        (f"{REPO_Q} updated:>=2024-02-01 is:issue", [1, 2, 3, 5], 0),
        (f"{REPO_Q} updated:>2024-02-01", [1, 2, 3, 4], 0),
        (f"{REPO_Q} updated:<=2024-02-01T00:00:00Z", [5, 6], 0),
        (f"{REPO_Q} updated:*..2023-12-31", [6], 0),
        (f"{REPO_Q} comments:>=1", [1], 0),
        (f"{REPO_Q} comments:0", [2, 3, 4, 5, 6], 0),
        ("crash", [1, 4], 1),  # no repo: every visible repository
        ("crash elsewhere", [], 1),
        ("user:other", [], 1),
        ("org:other is:closed", [], 0),
    ],
)
async def test_search_table(corpus: None, gh: httpx.AsyncClient, q: str, expected: list[int],
                            elsewhere: int) -> None:
    response = await gh.get("/search/issues", params={"q": q, "per_page": 100})
    assert response.status_code == 200, response.text
    body = response.json()
    in_repo = sorted(i["number"] for i in body["items"] if f"/{OWNER}/{REPO}/" in i["url"])
    assert in_repo == expected
    assert len(body["items"]) - len(in_repo) == elsewhere
    assert body["total_count"] == len(body["items"]) and body["incomplete_results"] is False


async def test_search_item_shape_sort_and_paging(fake: FakeGitHub, corpus: None,
                                                 gh: httpx.AsyncClient) -> None:
    response = await gh.get("/search/issues", params={"q": REPO_Q, "sort": "created", "order": "asc",
                                                      "per_page": 2})
    body = response.json()
    assert body["search_type"] == "lexical" and body["total_count"] == 6
    assert [i["number"] for i in body["items"]] == [6, 5]
    item = body["items"][0]
    assert item["score"] == 1.0 and item["author_association"] == "NONE"
    assert item["repository_url"] == f"http://fake-github.test/repos/{OWNER}/{REPO}"
    assert response.headers["x-ratelimit-resource"] == "search"
    assert response.headers["x-ratelimit-limit"] == "30"
    assert 'rel="last"' in response.headers["link"] and "page=3" in response.headers["link"]
    default = await gh.get("/search/issues", params={"q": f"{REPO_Q} is:pr"})
    assert default.json()["items"][0]["pull_request"]["url"].endswith("/pulls/4")
    by_comments = await gh.get("/search/issues", params={"q": REPO_Q, "sort": "comments"})
    assert by_comments.json()["items"][0]["number"] == 1
    in_q = await gh.get("/search/issues", params={"q": f"{REPO_Q} sort:created-asc"})
    assert in_q.json()["items"][0]["number"] == 6


async def test_search_cap_visibility_and_bad_queries(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                     seeded: dict[str, int]) -> None:
    capped = await gh.get("/search/issues", params={"q": REPO_Q, "per_page": 100, "page": 11})
    assert capped.status_code == 422
    assert capped.json()["message"].startswith("Cannot access beyond the first 1000 results")
    ok = await gh.get("/search/issues", params={"q": REPO_Q, "per_page": 100, "page": 10})
    assert ok.status_code == 200 and ok.json()["items"] == []

    fake.add_repo(OWNER, "secret", private=True)
    hidden = await gh.get("/search/issues", params={"q": f"repo:{OWNER}/secret"})
    assert hidden.status_code == 422
    assert hidden.json()["errors"][0]["code"] == "invalid"
    assert "cannot be searched" in hidden.json()["errors"][0]["message"]
    bad = await gh.get("/search/issues", params={"q": f"{REPO_Q} created:>someday"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "q"
    assert fake.violations == []


@pytest.mark.parametrize("q", [
    "is:queued", "is:internal", "type:Bug", "state:merged", "no:project", "-no:label", "in:name",
    "in:title,readme", "reason:stale", "draft:maybe", "project:octo-org/1", "linked:pr",
    "language:go", "team:octo-org/core", "reactions:>5", "interactions:>1", "review:none",
    "reviewed-by:hubot", "status:success", "sort:reactions", "crash OR config",
    "(crash)", "comments:>lots",
])
async def test_search_refuses_what_it_does_not_implement(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                         q: str) -> None:
    """GitHub documents these; the fake cannot answer them, so it says so (422) instead of
    answering a valid query with nothing."""
    response = await gh.get("/search/issues", params={"q": f"{REPO_Q} {q}"})
    assert response.status_code == 422, (q, response.text)
    error = response.json()["errors"][0]
    assert (error["field"], error["code"]) == ("q", "invalid")
    assert fake.violations == []


async def test_search_filters_pull_requests_by_head_and_base(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                             seeded: dict[str, int]) -> None:
    fake.add_branch(OWNER, REPO, "release")
    to_release = fake.add_pull_request(OWNER, REPO, "Backport", head="backport", base="release")
    for q, want in ((f"head:pr-{seeded['pr']}", {seeded["pr"]}), ("base:release", {to_release}),
                    ("head:backport base:main", set()), ("is:issue head:backport", set())):
        response = await gh.get("/search/issues", params={"q": f"{REPO_Q} {q}"})
        assert response.status_code == 200, response.text
        assert {i["number"] for i in response.json()["items"]} == want, q


async def test_search_excludes_deleted_and_private(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                   seeded: dict[str, int]) -> None:
    fake.add_repo(OWNER, "secret", private=True)
    fake.add_issue(OWNER, "secret", "Crash in secret")
    fake.delete_issue(OWNER, REPO, seeded["first"])
    found = (await gh.get("/search/issues", params={"q": "crash"})).json()
    assert [i["title"] for i in found["items"]] == ["Fix crash"]  # PR #4; #1 is deleted
