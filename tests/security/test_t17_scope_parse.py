"""Security review t17: the owner/repo scope check of github_search_issues read the query with a
tokenizer of its own, so terms glued to a phrase (`"plan"repo:…`) slipped past it, and `owner:`
was not checked. It now reads the composed query with the allowlist's tokenizer (the one the
fake GitHub parses queries with, standing in for GitHub's)."""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime import ToolError
from ghmcp_runtime.guards.exposure import ExposureFlags
from github_issues_mcp.hooks import _search_query
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
BASE = {"owner": OWNER, "repo": REPO}


@pytest.mark.parametrize("query", [
    '"plan"repo:octo-org/secret', "(plan)repo:octo-org/secret", "owner:octo-org plan",
    "plan OWNER:elsewhere", "plan repo:octo-org/secret", "NOT label:x repo:elsewhere/y",
    # round 3: a qualifier glued to a word or to another qualifier's value by punctuation
    "x,repo:octo-org/secret", "plan;org:elsewhere", "label:bug,repo:octo-org/secret",
])
async def test_a_scope_term_the_search_would_read_is_refused(
    fake: FakeGitHub, seeded: dict[str, Any], query: str
) -> None:
    async with Opened(in_memory_server(fake), secrets=("octo-org/secret", "elsewhere")) as s:
        err = await s.error("github_search_issues", {**BASE, "query": query}, "invalid_field")
    assert err["details"]["field"] == "query"
    assert fake.calls("search/issues-and-pull-requests") == []


@pytest.mark.parametrize("query", ["plan NOT repo:octo-org/secret", "plan -owner:other",
                                   '"repo:other/x" as words', f"plan repo:{OWNER}/{REPO}"])
async def test_exclusions_and_the_repository_itself_are_allowed(
    fake: FakeGitHub, seeded: dict[str, Any], query: str
) -> None:
    async with Opened(in_memory_server(fake)) as s:
        await s.ok("github_search_issues", {**BASE, "query": query})


def test_the_check_reads_the_composed_query_not_only_query() -> None:
    """Review t12: a value pasted into another term (here a date that skipped its format check,
    as in the installed wheels) is caught in the query as sent."""
    args: Any = {**BASE, "query": "plan", "updated_after": "2000-01-01 repo:octo-org/secret"}
    with pytest.raises(ToolError) as refused:
        _search_query(args, [], [])
    assert refused.value.code == "invalid_field"


@pytest.mark.parametrize("query", ["x,repo:octo-org/secret", "label:bug,user:elsewhere", "a.owner:elsewhere"])
async def test_a_glued_qualifier_outside_the_allowlist_is_refused_before_sending(
    fake: FakeGitHub, seeded: dict[str, Any], query: str
) -> None:
    """The same glued terms, across repositories under --repos: refused, nothing sent."""
    server = in_memory_server(fake, exposure=ExposureFlags(repos=(f"{OWNER}/{REPO}",)))
    async with Opened(server, secrets=("octo-org/secret", "elsewhere")) as s:
        await s.error("github_search_issues", {"query": query}, "repo_not_allowed")
    assert fake.calls("search/issues-and-pull-requests") == []
