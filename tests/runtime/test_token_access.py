"""Token scopes (issue 37): how a forge's scopes grant one another, which tools a token's access
hides, and how each caller's access is read once and kept."""

from __future__ import annotations

import dataclasses

import anyio
import pytest
from app_spec import SPEC

from ghmcp_runtime.core.forges import FORGEJO, GITHUB
from ghmcp_runtime.core.token_scopes import SCOPES_META, ToolScopes
from ghmcp_runtime.guards.exposure import ExposureFlags, ExposurePolicy
from ghmcp_runtime.guards.token_access import TokenAccess, hidden
from ghmcp_runtime.serving.access_book import UNREAD_TTL_S, AccessBook

pytestmark = pytest.mark.anyio
GH = GITHUB.scopes
FJ = FORGEJO.scopes


def test_github_scopes_grant_what_its_documentation_says() -> None:
    assert GH.granted(["repo"]) >= {"public_repo", "repo:status", "security_events"}
    assert GH.granted(["admin:org"]) >= {"write:org", "read:org"}  # transitively
    assert "repo" not in GH.granted(["public_repo"])
    assert GH.accepted("public_repo") == {"public_repo", "repo"}
    assert GH.accepted("read:org") == {"read:org", "write:org", "admin:org"}
    assert GH.minimal(["public_repo", "repo", "read:org"]) == ("read:org", "repo")


def test_forgejo_write_grants_read_and_all_grants_everything() -> None:
    assert FJ.granted(["write:issue"]) == {"write:issue", "read:issue"}
    assert FJ.accepted("read:organization") == {"read:organization", "write:organization", "all"}
    assert "read:user" in FJ.granted(["all"])


@pytest.mark.parametrize(("token", "kind"), [
    ("ghp_" + "a" * 36, "classic"), ("gho_" + "a" * 36, "oauth"), ("ghu_" + "a" * 36, "app_user"),
    ("ghs_" + "a" * 36, "installation"), ("github_pat_" + "a" * 60, "fine_grained"),
    ("0123456789abcdef0123456789abcdef01234567", "classic"),  # made before 2021
    ("some.jwt.value", "unknown"),
])
def test_a_github_token_says_its_kind_by_its_prefix(token: str, kind: str) -> None:
    assert GH.kind(token) == kind


def test_a_forgejo_token_is_classic() -> None:
    assert FJ.kind("0123456789abcdef0123456789abcdef01234567") == "classic"


def _tool(name: str, read_only: bool, needs: ToolScopes | None) -> object:
    base = SPEC.tools[0]
    meta = {SCOPES_META: needs.meta()} if needs else {}
    return dataclasses.replace(base, name=name, meta=meta,
                               annotations=dataclasses.replace(base.annotations, read_only=read_only))


READ = ToolScopes()
WRITE = ToolScopes(required=("public_repo",), accepted=("public_repo", "repo"))
ORG = ToolScopes(required=("read:org",), accepted=("admin:org", "read:org", "write:org"))
ME = ToolScopes(user_context=True)
TOOLS = [_tool("read", True, READ), _tool("write", False, WRITE), _tool("org", True, ORG),
         _tool("me", True, ME), _tool("bare", True, None)]


@pytest.mark.parametrize(("access", "step_up", "gone"), [
    (TokenAccess("classic", frozenset()), False, {"write", "org"}),  # public reads stay
    (TokenAccess("classic", frozenset({"public_repo"})), False, {"org"}),
    (TokenAccess("classic", frozenset({"repo", "write:org"})), False, set()),
    (TokenAccess("classic", None), False, set()),  # scopes unread: the forge judges calls
    (TokenAccess("fine_grained"), False, set()),
    (TokenAccess("installation"), False, {"me"}),
    (TokenAccess("oauth", frozenset()), True, set()),  # can ask for more: challenged instead
])
def test_what_a_token_hides(access: TokenAccess, step_up: bool, gone: set[str]) -> None:
    assert hidden(TOOLS, access, GH, step_up=step_up) == gone  # type: ignore[arg-type]


def test_a_composite_goes_with_a_tool_the_token_cannot_use() -> None:
    tools = [*TOOLS[:2], dataclasses.replace(TOOLS[0], name="batch", runs=("write",))]
    policy = ExposurePolicy(tools, {}, ExposureFlags())  # type: ignore[arg-type]
    narrowed = policy.with_access(policy.base, frozenset({"write"}))
    assert narrowed.tools == {"read"}
    assert policy.with_access(policy.base, frozenset()) is policy.base


async def test_the_book_reads_a_token_once_however_many_ask() -> None:
    reads: list[str] = []

    async def read(token: str) -> TokenAccess:
        reads.append(token)
        await anyio.sleep(0.01)
        return TokenAccess("classic", frozenset({"repo"}))

    book = AccessBook(read)
    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(book.learn, "c_1", "ghp_x")
    assert reads == ["ghp_x"]
    assert book.known("c_1") == TokenAccess("classic", frozenset({"repo"}))
    book.forget("c_1")
    assert book.known("c_1") is None


async def test_the_book_forgets_after_its_ttl_and_an_unread_token_sooner() -> None:
    now = [0.0]
    answers = {"ghp_read": TokenAccess("classic", frozenset()), "ghp_down": TokenAccess("classic")}

    async def read(token: str) -> TokenAccess:
        return answers[token]

    book = AccessBook(read, ttl_s=600, max_entries=1, clock=lambda: now[0])
    await book.learn("a", "ghp_read")
    await book.learn("b", "ghp_down")
    assert book.known("a") is None  # bounded: the least recently used went
    now[0] = UNREAD_TTL_S + 1
    assert book.known("b") is None  # could not be read: asked again soon
    await book.learn("a", "ghp_read")
    now[0] += 599
    assert book.known("a") is not None
    now[0] += 2
    assert book.known("a") is None
