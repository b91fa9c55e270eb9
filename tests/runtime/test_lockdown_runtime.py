"""Lockdown's runtime parts: rows held when projected, released by decision; the trust cache."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.forges import FORGEJO, GITHUB
from ghmcp_runtime.core.model import FieldRule, LockdownRule, Operation, Shape
from ghmcp_runtime.guards.lockdown import Lockdown, TrustCache

pytestmark = pytest.mark.anyio
COMMENT = Shape(name="comment", fields=(
    FieldRule(name="author", path=("user", "login"), detail="summary"),
    FieldRule(name="body", path=("body",), detail="full", untrusted=True),
), lockdown=LockdownRule(author=("user", "login"), repository=("url",), withhold=("body",),
                         association=("author_association",)))
GITHUB_TRUST = GITHUB.trust
assert GITHUB_TRUST is not None
URL = "https://ghe.example/api/v3/repos/octo-org/roadmap/issues/comments/1"


def raw(login: str, association: str = "COLLABORATOR", url: str = URL) -> dict[str, Any]:
    return {"user": {"login": login}, "body": f"by {login}", "author_association": association,
            "url": url}


class Context:
    """The slice of ToolContext lockdown uses; GitHub's answers come from a table."""

    identity = "u_test"

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def call(self, op: Operation, *, path: dict[str, Any], **_: Any) -> UpstreamResponse:
        key = path.get(GITHUB_TRUST.account_param, op.operation_id)
        self.asked.append(key)
        answer = self.answers[key]
        if isinstance(answer, ToolError):
            raise answer
        return UpstreamResponse(200, answer, {})


async def hold_and_release(ctx: Context, *rows: dict[str, Any], cache: TrustCache | None = None
                           ) -> list[dict[str, Any]]:
    lockdown = Lockdown({"comment": COMMENT}, cache or TrustCache(), GITHUB)
    projected = []
    for r in rows:
        row = {"author": r["user"]["login"], "body": r["body"]}
        lockdown.hold("comment", r, row)
        projected.append(row)
    await lockdown.release(ctx)  # type: ignore[arg-type]
    return projected


PUBLIC = {"repos/get": {"private": False}, "users/get-authenticated": {"login": "me"}}


async def test_rows_are_withheld_until_released_and_keep_their_field_order() -> None:
    ctx = Context({**PUBLIC, "pusher": {"permission": "write"}, "reader": {"permission": "read"}})
    rows = await hold_and_release(ctx, raw("pusher"), raw("reader"), raw("stranger", "NONE"),
                                  raw("me", "NONE"), raw("octo-org", "OWNER"))
    assert rows[0] == {"author": "pusher", "body": "by pusher"}
    assert list(rows[0]) == ["author", "body"]
    assert rows[1] == {"author": "reader", "body": None, "withheld": "untrusted_author"}  # kept, null
    assert rows[2] == {"author": "stranger", "body": None, "withheld": "untrusted_author"}
    assert rows[3]["body"] == "by me" and rows[4]["body"] == "by octo-org"
    assert sorted(ctx.asked) == ["pusher", "reader", "repos/get", "users/get-authenticated"]


async def test_a_copy_taken_before_release_stays_withheld() -> None:
    lockdown = Lockdown({"comment": COMMENT}, TrustCache(), GITHUB)
    row = {"author": "pusher", "body": "by pusher"}
    lockdown.hold("comment", raw("pusher"), row)
    copy = dict(row)
    await lockdown.release(Context({**PUBLIC, "pusher": {"permission": "admin"}}))  # type: ignore[arg-type]
    assert row["body"] == "by pusher" and copy == {"author": "pusher", "body": None, "withheld": "trust_unknown"}


async def test_failures_and_unreadable_rows_withhold() -> None:
    failing = ToolError("upstream_unavailable", "down", temporary=True)
    ctx = Context({**PUBLIC, "pusher": failing})
    rows = await hold_and_release(ctx, raw("pusher"), raw("other", url="not a url"))
    assert [r.get("withheld") for r in rows] == ["trust_unknown", "trust_unknown"]


async def test_answers_are_cached_per_identity_until_they_expire() -> None:
    now = [0.0]
    cache = TrustCache(ttl_s=10, clock=lambda: now[0])
    ctx = Context({**PUBLIC, "pusher": {"permission": "write"}})
    await hold_and_release(ctx, raw("pusher"), cache=cache)
    await hold_and_release(ctx, raw("pusher"), cache=cache)
    assert ctx.asked.count("pusher") == 1
    ctx.identity = "u_other"
    await hold_and_release(ctx, raw("pusher"), cache=cache)
    assert ctx.asked.count("pusher") == 2
    now[0] = 11
    await hold_and_release(ctx, raw("pusher"), cache=cache)
    assert ctx.asked.count("pusher") == 3


def test_the_cache_forgets_the_oldest_entries_beyond_its_size() -> None:
    cache = TrustCache(entries=2)
    for key in ("a", "b", "c"):
        cache.put((key,), True)
    assert (cache.get(("a",)), cache.get(("b",)), cache.get(("c",))) == (None, True, True)


async def test_rows_without_withheld_fields_are_not_held() -> None:
    lockdown = Lockdown({"comment": COMMENT}, TrustCache(), GITHUB)
    row = {"author": "stranger"}
    lockdown.hold("comment", raw("stranger", "NONE"), row)
    assert row == {"author": "stranger"} and lockdown.held == []


@pytest.mark.parametrize(("forge", "url"), [
    (GITHUB, "https://api.github.com/repos/octo-org/roadmap/issues/comments/1"),
    (GITHUB, "https://ghe.example/api/v3/repos/octo-org/roadmap"),
    (FORGEJO, "https://codeberg.org/api/v1/repos/octo-org/roadmap/issues/7"),
])
def test_the_repository_is_read_from_api_urls_as_the_forge_writes_them(forge: Any, url: str) -> None:
    assert forge.repository_of(url) == ("octo-org", "roadmap")
    assert forge.repository_of("https://codeberg.org/octo-org/roadmap/issues/7") is None  # a web URL


def test_lockdown_needs_a_forge_that_can_tell_who_may_push() -> None:
    with pytest.raises(ValueError, match="lockdown is not available on Forgejo"):
        Lockdown({"comment": COMMENT}, TrustCache(), replace(FORGEJO, trust=None))
