"""Forgejo tells a token's scopes to the token itself when it may read its own account
(read:user: GET /users/{username}/tokens lists each token's scopes and last eight characters):
the server lists only the tools those scopes allow; a token without read:user keeps every tool,
and Forgejo's refusal names the scope (issue 37)."""

from __future__ import annotations

import io

import pytest

from fakeforgejo import FakeForgejo
from forgejo_labels_mcp import SERVER
from forgejo_mcp import SERVER as FORGE
from ghmcp_runtime.serving.scope_listing import list_scopes
from tests.forgejo.forgejo_support import NO_ORG_TOKEN, ORG, OWNER_TOKEN, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
EVERY = sorted(t.name for t in SERVER.tools)
REPO_LABELS = sorted(t.name for t in SERVER.tools if "_repo_" in t.name)
ISSUES_ONLY = "e6" * 20  # alice: write:issue and read:user, no organization scope
READER = "f7" * 20  # alice: read:issue, read:organization and read:user


async def listed(fake: FakeForgejo, token: str) -> list[str]:
    async with Opened(in_memory_server(fake, token)) as s:
        return sorted(s.tools)


async def test_a_token_that_tells_its_scopes_sees_what_they_allow(fake: FakeForgejo, ids: dict[str, int]) -> None:
    fake.add_token(ISSUES_ONLY, "alice", ("write:issue", "read:user"))
    fake.add_token(READER, "alice", ("read:issue", "read:organization", "read:user"))
    assert await listed(fake, ISSUES_ONLY) == REPO_LABELS  # no organisation label tool
    assert await listed(fake, READER) == sorted(t.name for t in SERVER.tools if t.annotations.read_only)
    assert await listed(fake, OWNER_TOKEN) == EVERY  # write:issue, write:organization, …
    reads = [r.operation_id for r in fake.requests]
    assert reads == ["userGetCurrent", "userGetTokens"] * 3  # two requests per token, at start


async def test_a_token_that_cannot_read_its_account_keeps_every_tool(fake: FakeForgejo,
                                                                     ids: dict[str, int]) -> None:
    async with Opened(in_memory_server(fake, NO_ORG_TOKEN)) as s:
        assert sorted(s.tools) == EVERY
        refused = await s.error("forgejo_list_org_labels", {"org": ORG}, "insufficient_scope")
        assert refused["details"]["required_scopes"] == ["read:organization"]
        assert (await s.ok("forgejo_list_repo_labels", {"owner": ORG, "repo": REPO}))["labels"]
    assert [r.operation_id for r in fake.requests][:1] == ["userGetCurrent"]  # 403: no read:user
    assert fake.calls("userGetTokens") == []


async def test_only_the_token_itself_counts_among_the_accounts_tokens(fake: FakeForgejo,
                                                                      ids: dict[str, int]) -> None:
    """alice has several tokens; the row ending like this one gives its scopes."""
    fake.add_token(ISSUES_ONLY, "alice", ("write:issue", "read:user"))
    assert len([t for t in fake.state.tokens.values() if t.login == "alice"]) >= 3
    assert await listed(fake, ISSUES_ONLY) == REPO_LABELS


def test_list_scopes_prints_what_a_selection_needs() -> None:
    out = io.StringIO()
    assert list_scopes(SERVER, ["--output", "summary"], out) == 0
    assert out.getvalue() == "scopes: write:issue, write:organization\n"


async def test_forgejo_mcp_lists_the_issue_tools_each_token_allows(fake: FakeForgejo, ids: dict[str, int]) -> None:
    """The issues toolset in forgejo-mcp: reads need read:issue (search also read:user, which
    resolves a login), create and update also read:repository (the assignee list)."""
    writer = "a8" * 20
    fake.add_token(READER, "alice", ("read:issue", "read:organization", "read:user"))
    fake.add_token(ISSUES_ONLY, "alice", ("write:issue", "read:user"))
    fake.add_token(writer, "alice", ("write:issue", "read:repository", "read:user"))
    issues = {t.name for t in FORGE.tools if t.toolset == "issues"}

    async def shown(token: str) -> set[str]:
        async with Opened(in_memory_server(fake, token, spec=FORGE)) as s:
            return set(s.tools) & issues

    assert await shown(READER) == {"forgejo_get_issue", "forgejo_search_issues"}
    assert await shown(ISSUES_ONLY) == {"forgejo_get_issue", "forgejo_search_issues", "forgejo_add_comment"}
    assert await shown(writer) == issues == {"forgejo_get_issue", "forgejo_search_issues", "forgejo_add_comment",
                                             "forgejo_create_issue", "forgejo_update_issue"}


def test_list_scopes_of_forgejo_mcp_names_what_its_issue_tools_need() -> None:
    out = io.StringIO()
    assert list_scopes(FORGE, ["--toolsets", "issues", "--output", "summary"], out) == 0
    assert out.getvalue() == "scopes: read:repository, read:user, write:issue\n"
