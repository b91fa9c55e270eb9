"""ghmcp_runtime.recovery against scripted GitHub answers (httpx MockTransport)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from ghmcp_runtime.errors import OutcomeUnknown
from ghmcp_runtime.model import Operation
from ghmcp_runtime.recovery import (
    CLOCK_SKEW_S,
    Listing,
    RecoveryUnresolved,
    find_created,
    same_text,
)
from tests.runtime.runtime_support import Recorder, gh, make_ctx, upstream

pytestmark = pytest.mark.anyio

LIST = Operation(operation_id="issues/list-comments", method="GET",
                 path="/repos/{owner}/{repo}/issues/{issue_number}/comments",
                 not_found="issue_not_found", success_status=(200,))
PATH = {"owner": "o", "repo": "r", "issue_number": 1}
START = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
NEXT = {"link": '<https://api.github.com/x?page=2>; rel="next"'}


def row(n: int, body: str, *, login: str = "octocat", at: datetime = START, **extra: Any) -> dict[str, Any]:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"id": n, "body": body, "user": {"login": login}, "created_at": stamp, "updated_at": stamp,
            **extra}


def github(pages: list[httpx.Response], login: str = "octocat") -> Recorder:
    """GET /user answers `login`; list requests get `pages` in order."""
    queue = list(pages)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/user":
            return gh(200, {"login": login})
        return queue.pop(0)

    return Recorder(answer)


async def find(rec: Recorder, listing: Listing | None = None, **kw: Any) -> Any:
    ctx = make_ctx(upstream(rec))
    return await find_created(ctx, listing or Listing(LIST, PATH), match={"body": "Done."},
                              since=START, **kw)


def test_same_text_compares_as_github_keeps_text() -> None:
    assert same_text(None, "") and same_text("", None) and same_text("a\r\nb", "a\nb")
    assert same_text("  Done.\n", "Done.")
    assert not same_text("Done", "Done.") and not same_text("done.", "Done.")


async def test_the_one_exact_match_by_the_own_login_in_the_window() -> None:
    rec = github([gh(200, [
        row(1, "Done.", at=START - timedelta(seconds=CLOCK_SKEW_S + 1)),  # before the window
        row(2, "Done.", login="hubot"),  # someone else
        row(3, "Done. "),  # the write (GitHub trims nothing; we compare trimmed)
        row(4, "Done!"),
    ])])
    assert (await find(rec))["id"] == 3
    listed = rec.requests[1].url.params
    assert listed["since"] == "2026-12-01T11:59:30Z" and listed["per_page"] == "100"


async def test_pages_are_walked_to_the_end_and_pull_requests_never_match() -> None:
    rec = github([gh(200, [row(1, "other")], NEXT),
                  gh(200, [row(2, "Done.", pull_request={"url": "x"}), row(3, "Done.")])])
    assert (await find(rec))["id"] == 3
    assert [r.url.params.get("page") for r in rec.requests[1:]] == ["1", "2"]


async def test_newest_first_stops_at_the_first_older_row() -> None:
    listing = Listing(LIST, PATH, query={"sort": "created"}, newest_first=True, author_param="creator")
    rec = github([gh(200, [row(2, "Done."), row(1, "Done.", at=START - timedelta(hours=1))], NEXT)])
    assert (await find(rec, listing))["id"] == 2
    assert len(rec.requests) == 2  # GET /user and one page
    assert rec.requests[1].url.params["creator"] == "octocat"
    assert rec.requests[1].url.params["sort"] == "created"


async def test_nothing_found_is_none() -> None:
    assert await find(github([gh(200, [row(1, "other")])])) is None


async def test_several_matches_leave_the_outcome_unknown() -> None:
    rec = github([gh(200, [row(1, "Done."), row(2, "Done.")])])
    repair = {"next_step": "read_thread", "tool": "t", "arguments": {}}
    with pytest.raises(RecoveryUnresolved) as info:
        await find(rec, repair=repair)
    err = info.value
    assert isinstance(err, OutcomeUnknown) and err.code == "outcome_unknown" and not err.temporary
    assert err.details is not None and err.details["count"] == 2 and err.repair == repair


async def test_more_pages_than_the_bound_leave_the_outcome_unknown() -> None:
    rec = github([gh(200, [row(1, "other")], NEXT), gh(200, [row(2, "other")], NEXT)])
    with pytest.raises(RecoveryUnresolved) as info:
        await find(rec, max_pages=2)
    assert info.value.details is not None and "200" in info.value.details["reason"]


async def test_the_own_login_is_read_once_per_credential() -> None:
    rec = github([gh(200, []), gh(200, []), gh(200, [])])
    up = upstream(rec)
    for identity in ("u_a", "u_a", "u_b"):
        ctx = make_ctx(up, identity=identity)
        await find_created(ctx, Listing(LIST, PATH), match={"body": "x"}, since=START)
    assert [r.url.path for r in rec.requests].count("/user") == 2
