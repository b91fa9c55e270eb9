"""The repository allowlist: parsing, matching, search confinement, request checks, completions."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_support import CREATE_ISSUE, GET_ISSUE, Recorder, gh, make_ctx, upstream

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.forges import FORGEJO, GITHUB
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.guards.allowlist import RepoAllowlist

FORGEJO_SEARCH = "/repos/issues/search"  # issueSearchIssues

SEARCH = Operation(operation_id="search/issues-and-pull-requests", method="GET", path="/search/issues",
                   not_found="not_found", success_status=(200,))
ALLOW = RepoAllowlist.parse(["Octo-Org/roadmap", "tools/*", "tools/cli"])


def refusal(call: Any, *args: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        call(*args)
    return info.value


def test_parse_normalizes_case_and_drops_entries_an_owner_entry_covers() -> None:
    assert ALLOW.patterns() == ("octo-org/roadmap", "tools/*")
    assert ALLOW.allows("OCTO-ORG", "RoadMap") and ALLOW.allows("tools", "anything")
    assert not ALLOW.allows("octo-org", "other") and not ALLOW.allows("evil", "roadmap")
    assert ALLOW.allows_owner("tools") and not ALLOW.allows_owner("octo-org")
    assert ALLOW.names_owner("octo-org") and not ALLOW.names_owner("evil")


@pytest.mark.parametrize("entry", ["octo-org", "*/*", "*", "octo-org/..", "a b/c", "octo-org/x/y", ""])
def test_parse_refuses_anything_but_owner_repo_and_owner_star(entry: str) -> None:
    with pytest.raises(ValueError):
        RepoAllowlist.parse([entry])


def test_intersect_keeps_only_what_both_allow() -> None:
    asked = RepoAllowlist.parse(["octo-org/*", "tools/cli", "evil/x"])
    assert ALLOW.intersect(asked).patterns() == ("octo-org/roadmap", "tools/cli")
    assert asked.intersect(ALLOW) == ALLOW.intersect(asked)
    assert ALLOW.intersect(RepoAllowlist.parse(["evil/*"])).patterns() == ()


@pytest.mark.parametrize(("query", "confined"), [
    ("memory leak", "memory leak user:tools repo:octo-org/roadmap"),
    ("", "user:tools repo:octo-org/roadmap"),
    ("bug repo:octo-org/roadmap is:issue", "bug repo:octo-org/roadmap is:issue"),
    ("bug user:TOOLS", "bug user:TOOLS"),
    ("bug org:tools label:x", "bug org:tools label:x"),
    # a negated scope narrows nothing into the allowlist: the allowlist is still appended
    ("bug -repo:tools/old", "bug -repo:tools/old user:tools repo:octo-org/roadmap"),
    ("bug NOT repo:tools/old", "bug NOT repo:tools/old user:tools repo:octo-org/roadmap"),
    # quoted text is text: it names nothing
    ('"repo:evil/x" label:"a (b) OR c"', '"repo:evil/x" label:"a (b) OR c" user:tools repo:octo-org/roadmap'),
])
def test_confine_appends_the_allowlist_unless_the_query_already_names_allowed_scopes(
    query: str, confined: str
) -> None:
    assert ALLOW.confine(query) == confined


@pytest.mark.parametrize("query", [
    "bug repo:evil/x", "bug repo:octo-org/roadmap repo:evil/x", "bug user:evil", "bug org:octo-org",
    "bug owner:evil", "bug REPO:evil/x", 'bug repo:"evil/x"', "bug -repo:evil/x", "bug repo:octo-org",
    "bug repo:octo-org/roadmap,evil/x",
])
def test_confine_refuses_a_query_naming_anything_outside(query: str) -> None:
    err = refusal(ALLOW.confine, query)
    assert err.code == "repo_not_allowed"
    assert err.details == {"field": "query", "allowed_repositories": ["octo-org/roadmap", "tools/*"],
                           "reason": "the query names a repository or owner outside the repository allowlist"}
    assert "evil" not in err.message


@pytest.mark.parametrize("query", ["bug OR leak", "(bug leak)", "bug (leak)", "repo:octo-org/roadmap OR bug"])
def test_confine_refuses_boolean_grouping_that_could_escape_the_appended_scope(query: str) -> None:
    err = refusal(ALLOW.confine, query)
    assert err.code == "invalid_field" and err.details and err.details["field"] == "query"


def test_check_request_on_paths_and_on_search_queries() -> None:
    path = {"owner": "octo-org", "repo": "roadmap", "issue_number": 1}
    ALLOW.check_request(GET_ISSUE.path, path, None, GITHUB)
    err = refusal(ALLOW.check_request, GET_ISSUE.path, {**path, "repo": "other"}, None, GITHUB)
    assert err.code == "repo_not_allowed" and err.details and err.details["field"] == "repo"
    ALLOW.check_request(SEARCH.path, {}, {"q": "x repo:tools/a"}, GITHUB)
    ALLOW.check_request("/user", {}, None, GITHUB)
    assert refusal(ALLOW.check_request, SEARCH.path, {}, {"q": "x is:issue"}, GITHUB).code == "repo_not_allowed"


def test_screen_drops_search_rows_from_outside() -> None:
    rows = [{"repository_url": "https://api.github.com/repos/octo-org/roadmap", "n": 1},
            {"repository_url": "https://api.github.com/repos/evil/x", "n": 2},
            {"n": 3}]
    resp = UpstreamResponse(status=200, data={"total_count": 3, "items": rows}, headers={})
    screened, dropped = ALLOW.screen(resp, GITHUB)
    assert [r["n"] for r in screened.data["items"]] == [1] and dropped == 2
    plain = UpstreamResponse(status=200, data=[{"n": 1}], headers={})
    assert ALLOW.screen(plain, GITHUB) == (plain, 0)
    # Forgejo's searches are confined by their request (`owner`): no search-row rule there, only
    # the links every answer is screened by
    forgejo, dropped = ALLOW.screen(resp, FORGEJO)
    assert [r["n"] for r in forgejo.data["items"]] == [1, 2, 3] and dropped == 0


def test_screen_leaves_out_rows_of_other_repositories_anywhere_and_refuses_a_lone_object() -> None:
    inside, outside = (f"https://api.github.com/repos/{r}" for r in ("octo-org/roadmap", "evil/x"))
    data = {"url": f"{inside}/issues/1", "labels": [{"url": f"{inside}/labels/a"}],
            "nested": {"rows": [{"repository_url": outside, "n": 1}, {"repository_url": inside, "n": 2},
                                {"url": f"{outside}/issues/3"}, {"login": "someone", "url": "https://api.github.com/users/x"},
                                {"event": "cross-referenced", "source": {"issue": {"repository_url": outside}}}]}}
    screened, dropped = ALLOW.screen(UpstreamResponse(status=200, data=data, headers={}), GITHUB)
    assert dropped == 3 and screened.data["labels"] == data["labels"]  # a row naming one inside, too
    assert screened.data["nested"]["rows"] == [data["nested"]["rows"][1], data["nested"]["rows"][3]]
    assert len(data["nested"]["rows"]) == 5  # the answer as received is left as it was
    plain = UpstreamResponse(status=200, data={"url": f"{inside}/issues/1", "rows": [{"n": 1}]}, headers={})
    assert ALLOW.screen(plain, GITHUB) == (plain, 0)
    for lone in ({"url": f"{outside}/issues/9", "title": "TOP SECRET"},
                 {"url": f"{inside}/issues/1", "parent": {"repository_url": outside}}):
        err = refusal(ALLOW.screen, UpstreamResponse(status=200, data=lone, headers={}), GITHUB)
        assert err.code == "repo_not_allowed" and "TOP SECRET" not in err.message


def test_completions_never_name_anything_outside() -> None:
    assert ALLOW.completions("owner", ["octo-org", "evil", "tools"], None) == ["octo-org", "tools"]
    assert ALLOW.completions("repo", ["roadmap", "secret"], "octo-org") == ["roadmap"]
    assert ALLOW.completions("repo", ["roadmap", "secret"], "tools") == ["roadmap", "secret"]
    # without an owner a name cannot be placed, so only names the allowlist spells out
    assert ALLOW.completions("repo", ["roadmap", "secret"], None) == ["roadmap"]
    assert ALLOW.completions("labels", ["bug"], "octo-org") == ["bug"]
    assert ALLOW.allows_context({"owner": "octo-org"}) and not ALLOW.allows_context({"owner": "evil"})
    assert not ALLOW.allows_context({"owner": "octo-org", "repo": "secret"})


# -- through ToolContext.call: refused before anything is sent ---------------------------------


@pytest.mark.anyio
async def test_context_refuses_outside_requests_before_sending() -> None:
    rec = Recorder(gh(200, {"number": 1}))
    up = upstream(rec)
    ctx = make_ctx(up)
    ctx.repos = ALLOW
    with pytest.raises(ToolError) as info:
        await ctx.call(GET_ISSUE, path={"owner": "evil", "repo": "x", "issue_number": 1})
    assert info.value.code == "repo_not_allowed" and rec.requests == []
    resp = await ctx.call(GET_ISSUE, path={"owner": "octo-org", "repo": "roadmap", "issue_number": 1})
    assert resp.data == {"number": 1} and len(rec.requests) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("op", [GET_ISSUE, CREATE_ISSUE])
async def test_redirects_are_not_followed_under_an_allowlist(op: Operation) -> None:
    """GitHub answers a transferred issue (or a renamed repository) with a redirect to a numeric
    location that may be outside the allowlist: with one, it is refused, not followed."""
    rec = Recorder(gh(301, None, {"location": "https://api.github.com/repositories/42/issues/7"}),
                   gh(200, {"number": 7}))
    up = upstream(rec)
    ctx = make_ctx(up)
    ctx.repos = ALLOW
    with pytest.raises(ToolError) as info:
        await ctx.call(op, path={"owner": "octo-org", "repo": "roadmap", "issue_number": 7},
                       body={"title": "t"} if op is CREATE_ISSUE else None)
    assert info.value.code == "repo_not_allowed" and len(rec.requests) == 1
    assert info.value.details and "redirected" in info.value.details["reason"]


@pytest.mark.anyio
async def test_without_an_allowlist_redirects_are_still_followed() -> None:
    rec = Recorder(gh(301, None, {"location": "https://api.github.com/repositories/42/issues/7"}),
                   gh(200, {"number": 7}))
    up = upstream(rec)
    resp = await make_ctx(up).call(GET_ISSUE, path={"owner": "a", "repo": "b", "issue_number": 7})
    assert resp.data == {"number": 7} and len(rec.requests) == 2


def test_confine_query_is_the_identity_without_an_allowlist() -> None:
    ctx = make_ctx(None)
    assert ctx.confine_query("bug OR repo:anything/x") == "bug OR repo:anything/x"
    ctx.repos = ALLOW
    assert ctx.confine_query("bug") == "bug user:tools repo:octo-org/roadmap"


def test_an_organisation_needs_the_whole_owner() -> None:
    """Organisation labels reach every repository of the organisation: `org/*` only."""
    narrow, whole = RepoAllowlist.parse(["acme/web"]), RepoAllowlist.parse(["acme/*"])
    with pytest.raises(ToolError) as info:
        narrow.check_arguments({"org": "acme", "id": 1})
    assert info.value.code == "repo_not_allowed" and info.value.details["field"] == "org"
    whole.check_arguments({"org": "ACME", "id": 1})
    with pytest.raises(ToolError):
        narrow.check_request("/orgs/{org}/labels/{id}", {"org": "acme", "id": 1}, None, FORGEJO)
    whole.check_request("/orgs/{org}/labels/{id}", {"org": "acme", "id": 1}, None, FORGEJO)
    # Forgejo's issue search names its owner in the query
    with pytest.raises(ToolError):
        narrow.check_request(FORGEJO_SEARCH, {}, {"owner": "acme", "labels": "bug"}, FORGEJO)
    whole.check_request(FORGEJO_SEARCH, {}, {"owner": "acme", "labels": "bug"}, FORGEJO)


def test_a_search_is_confined_the_way_its_forge_searches() -> None:
    """GitHub's `q` by its qualifiers; Forgejo's issue search by its `owner`, which it must name:
    without one it searches every repository the token can read. Forgejo's `q` is a keyword."""
    whole = RepoAllowlist.parse(["acme/*"])
    err = refusal(whole.check_request, FORGEJO_SEARCH, {}, {"labels": "bug", "q": "crash"}, FORGEJO)
    assert err.code == "repo_not_allowed" and err.details["field"] == "owner"
    whole.check_request(FORGEJO_SEARCH, {}, {"owner": "acme", "q": "crash"}, FORGEJO)
    assert refusal(whole.check_request, SEARCH.path, {}, {"q": "crash"}, GITHUB).details["field"] == "query"
    whole.check_request(SEARCH.path, {}, {"q": "crash user:acme"}, GITHUB)
