"""Tools the token can use (issue 37), against the fake GitHub, which tells a classic or OAuth-app
token's scopes in X-OAuth-Scopes and nothing of fine-grained, App or installation tokens: the
server reads them once at start (GET /rate_limit, which spends no budget) and lists only the
tools the token can use."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import INVALID_PARAMS

from fakegithub import FakeGitHub
from ghmcp_runtime.core.token_scopes import SCOPES_META, ToolScopes
from ghmcp_runtime.guards.exposure import ExposureFlags
from github_mcp import SERVER as GITHUB_MCP
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio

ALL = ExposureFlags(toolsets=("all",))
EVERY = sorted(t.name for t in GITHUB_MCP.tools)
READS = sorted(t.name for t in GITHUB_MCP.tools if t.annotations.read_only)
NONE = "ghp_noscopes000000000000000000000000000000"
PUBLIC = "ghp_publicrepo0000000000000000000000000000"
FINE = "github_pat_finegrained000000000000000000000000000000000000000000000000000000000000"
ACTIONS = "ghs_actionsinstallation0000000000000000000"
ARGS = {"owner": OWNER, "repo": REPO}


def scope_reads(fake: FakeGitHub) -> list[Any]:
    return fake.calls("rate-limit/get")


async def listed(fake: FakeGitHub, token: str, spec: Any = GITHUB_MCP, **kw: Any) -> list[str]:
    async with Opened(in_memory_server(fake, token, spec=spec, exposure=ALL, **kw)) as s:
        return sorted(s.tools)


async def test_a_token_without_scopes_sees_the_reads_only(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token(NONE, "octocat", scopes=())
    async with Opened(in_memory_server(fake, NONE, spec=GITHUB_MCP, exposure=ALL)) as s:
        assert sorted(s.tools) == READS  # public-repository reads need no scope
        labels = await s.ok("github_list_labels", ARGS)
        assert labels["labels"]
        with pytest.raises(MCPError) as refused:  # a hidden tool is an unknown one
            await s.client.call_tool("github_create_label", {**ARGS, "name": "x", "color": "ff0000"})
    assert refused.value.error.code == INVALID_PARAMS
    assert len(scope_reads(fake)) == 1  # read once, at start
    assert fake.calls("issues/create-label") == []


async def test_a_public_repo_token_sees_no_tool_it_cannot_use(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token(PUBLIC, "octocat", scopes=("public_repo",), collaborator_on=f"{OWNER}/{REPO}")
    model = GITHUB_MCP.forge.scopes
    async with Opened(in_memory_server(fake, PUBLIC, spec=GITHUB_MCP, exposure=ALL)) as s:
        seen = set(s.tools)
        for tool in GITHUB_MCP.tools:  # listed exactly when public_repo grants what it needs
            needs = ToolScopes.of(tool.meta)
            assert needs is not None, tool.name
            assert (tool.name in seen) == (not needs.missing(model, {"public_repo"})), tool.name
        created = await s.ok("github_create_label", {**ARGS, "name": "scoped", "color": "00ff00"})
    assert created["label"]["name"] == "scoped"  # what it lists, it can do (a public repository)


async def test_a_repo_token_sees_every_tool(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    assert await listed(fake, TOKEN) == EVERY


async def test_an_installation_token_sees_no_user_context_tool(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    """Actions' GITHUB_TOKEN (ghs_): no X-OAuth-Scopes (so no read at all), and no account of its
    own, so a tool acting on the token's account is hidden; every other tool stays."""
    fake.add_installation_token(ACTIONS, "github-actions", collaborator_on=f"{OWNER}/{REPO}")
    shown = await listed(fake, ACTIONS)
    user_context = [t.name for t in GITHUB_MCP.tools if (ToolScopes.of(t.meta) or ToolScopes()).user_context]
    assert shown == sorted(set(EVERY) - set(user_context))
    assert scope_reads(fake) == []  # its kind says the forge lists nothing: not asked
    # a user-context tool (who am I) is there for a classic token and gone for this one
    me = dataclasses.replace(GITHUB_MCP.tools[0], name="github_get_me",
                             meta={SCOPES_META: ToolScopes(user_context=True).meta()})
    spec = dataclasses.replace(GITHUB_MCP, tools=(*GITHUB_MCP.tools, me))
    assert "github_get_me" not in await listed(fake, ACTIONS, spec=spec)
    assert "github_get_me" in await listed(fake, TOKEN, spec=spec)


async def test_a_fine_grained_token_keeps_every_tool_and_gets_the_refusal(fake: FakeGitHub,
                                                                        seeded: dict[str, Any]) -> None:
    fake.add_fine_grained_token(FINE, "octocat", {"issues": "read", "metadata": "read"},
                                collaborator_on=f"{OWNER}/{REPO}")
    async with Opened(in_memory_server(fake, FINE, spec=GITHUB_MCP, exposure=ALL)) as s:
        assert sorted(s.tools) == EVERY  # GitHub does not tell its permissions
        refused = await s.error("github_create_label", {**ARGS, "name": "x", "color": "ff0000"},
                                "insufficient_scope")
    assert "issues=write or pull_requests=write" in refused["details"]["reason"]
    assert "required_scopes" not in refused["details"]  # no OAuth scope would help it
    assert scope_reads(fake) == []


async def test_scopes_that_cannot_be_read_keep_every_tool(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("rate-limit/get", "status", status=502)
    fake.add_token(NONE, "octocat", scopes=())
    assert await listed(fake, NONE) == EVERY  # the forge judges every call, as without the read
    assert len(scope_reads(fake)) == 1


async def test_the_read_can_be_turned_off(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token(NONE, "octocat", scopes=())
    assert await listed(fake, NONE, token_scopes=False) == EVERY
    assert scope_reads(fake) == []


async def test_a_scope_lost_after_start_is_refused_by_github(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    """Read at start: a token whose scopes its owner narrows later keeps its listed tools, and
    GitHub's refusal names the scope (restart to list again)."""
    fake.add_token(PUBLIC, "octocat", scopes=("public_repo",), collaborator_on=f"{OWNER}/{REPO}")
    async with Opened(in_memory_server(fake, PUBLIC, spec=GITHUB_MCP, exposure=ALL)) as s:
        fake.set_token_scopes(PUBLIC, ())
        refused = await s.error("github_create_label", {**ARGS, "name": "x", "color": "ff0000"},
                                "insufficient_scope")
    assert refused["details"]["required_scopes"] == ["repo"]


async def test_the_summary_and_instructions_say_which_tokens_keep_every_tool(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token(NONE, "octocat", scopes=())
    async with Opened(in_memory_server(fake, NONE, spec=GITHUB_MCP, exposure=ALL)) as s:
        instructions = s.client.instructions
        summary = await s.client.read_resource("github://server/summary")
    text = summary.contents[0].text  # type: ignore[union-attr]
    for said in (text, instructions or ""):
        assert "Fine-grained and GitHub App tokens" in said and "see every tool" in said
    # the narrowed surface's summary names no write tool it hides
    assert "github_create_label" not in text
