"""ghmcp_runtime.engine.recovery against scripted GitHub answers (httpx MockTransport)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from ghmcp_runtime.core.errors import OutcomeUnknown
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.engine.recovery import (
    Listing,
    RecoveryUnresolved,
    find_created,
    learn_login,
    same_text,
)
from ghmcp_runtime.stores.idempotency import Attempt, History
from tests.runtime.runtime_support import Recorder, gh, make_ctx, upstream

pytestmark = pytest.mark.anyio

LIST = Operation(operation_id="issues/list-comments", method="GET",
                 path="/repos/{owner}/{repo}/issues/{issue_number}/comments",
                 not_found="issue_not_found", success_status=(200,))
PATH = {"owner": "o", "repo": "r", "issue_number": 1}
START = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
NEXT = {"link": '<https://api.github.com/x?page=2>; rel="next"'}
# one attempt: sent at START (this server's clock, GitHub's the same), gave up a second later
HISTORY = History(START.timestamp(), (Attempt(START.timestamp(), START.timestamp() + 1, 0.0),),
                  unrecorded=False)


def row(n: int, body: str, *, login: str = "octocat", at: datetime = START,
        edited: datetime | None = None, **extra: Any) -> dict[str, Any]:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    later = (edited or at).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"id": n, "body": body, "user": {"login": login}, "created_at": stamp, "updated_at": later,
            "html_url": f"https://github.com/o/r/issues/1#issuecomment-{n}", **extra}


def github(pages: list[httpx.Response], login: str | None = "octocat") -> Recorder:
    """GET /user answers `login` (None: 403, as for App installation tokens); list requests get
    `pages` in order."""
    queue = list(pages)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/user":
            if login is None:
                return gh(403, {"message": "Resource not accessible by integration"})
            return gh(200, {"login": login})
        return queue.pop(0)

    return Recorder(answer)


async def find(rec: Recorder, listing: Listing | None = None, history: History = HISTORY,
               **kw: Any) -> Any:
    ctx = make_ctx(upstream(rec))
    return await find_created(ctx, listing or Listing(LIST, PATH), match={"body": "Done."},
                              history=history, **kw)


def test_same_text_compares_as_github_keeps_text() -> None:
    assert same_text(None, "") and same_text("", None) and same_text("a\r\nb", "a\nb")
    assert same_text("  Done.\n", "Done.")
    assert not same_text("Done", "Done.") and not same_text("done.", "Done.")


async def test_the_one_exact_match_by_the_own_login_in_the_window() -> None:
    rec = github([gh(200, [
        row(1, "Done.", at=START - timedelta(seconds=3)),  # before the attempt was sent
        row(2, "Done.", login="hubot"),  # someone else
        row(3, "Done. "),  # the write (GitHub trims nothing; we compare trimmed)
        row(4, "Done!"),  # other words, never edited: not the write
        row(5, "Done.", at=START + timedelta(seconds=13)),  # after GitHub's 10 s request limit
    ])])
    assert (await find(rec))["id"] == 3
    listed = rec.requests[1].url.params
    # the window opens at the send, less the offset's error and created_at's truncation
    assert listed["since"] == "2026-12-01T11:59:58Z" and listed["per_page"] == "100"


async def test_pages_are_walked_to_the_end_and_pull_requests_never_match() -> None:
    rec = github([gh(200, [row(1, "other")], NEXT),
                  gh(200, [row(2, "Done.", pull_request={"url": "x"}), row(3, "Done.")])])
    assert (await find(rec))["id"] == 3
    assert [r.url.params.get("page") for r in rec.requests[1:]] == ["1", "2"]


async def test_an_issue_whose_pull_request_is_null_is_an_issue() -> None:
    """Forgejo sends `pull_request: null` on every issue: the row is still the write."""
    rec = github([gh(200, [row(2, "Done.", pull_request=None)])])
    assert (await find(rec))["id"] == 2


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
    assert err.details["candidates"] == [
        {"id": n, "url": f"https://github.com/o/r/issues/1#issuecomment-{n}",
         "created_at": "2026-12-01T12:00:00Z"} for n in (1, 2)]


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
        await find_created(ctx, Listing(LIST, PATH), match={"body": "x"}, history=HISTORY)
    assert [r.url.path for r in rec.requests].count("/user") == 2


async def test_n06_an_edited_row_of_the_callers_made_while_the_attempt_ran_is_the_write() -> None:
    # n06 (a): an issue-form bot retitled it before the retry; the one row of the caller's created
    # in the attempt's window and edited since is it. Two such rows: unknown, both named.
    edited = row(3, "Done, and more.", edited=START + timedelta(seconds=30))
    assert (await find(github([gh(200, [row(2, "Done!"), edited])])))["id"] == 3
    twice = [edited, {**edited, "id": 4}]
    with pytest.raises(RecoveryUnresolved) as info:
        await find(github([gh(200, twice)]))
    assert info.value.details is not None and info.value.details["count"] == 2


async def test_n09_an_item_another_call_answered_with_is_never_the_write() -> None:
    history = History(HISTORY.started_at, HISTORY.attempts, unrecorded=False, claimed=frozenset({"3"}))
    assert await find(github([gh(200, [row(3, "Done.")])]), history=history) is None


async def test_n06_the_window_is_on_githubs_clock_measured_from_its_date_header() -> None:
    # n06 (c): GitHub's clock is 45 s behind this server's. The attempt recorded no offset (it saw
    # no answer); the retry measures it from GET /user's Date and finds the write.
    sent = time.time() - 5  # the lost attempt, on this server's clock

    def behind(now: float) -> dict[str, str]:
        return {"date": format_datetime(datetime.fromtimestamp(now - 45, UTC), usegmt=True)}

    written = datetime.fromtimestamp(sent - 45, UTC)  # GitHub's clock when it created the row
    rec = Recorder(lambda r: gh(200, {"login": "octocat"}, behind(time.time())) if r.url.path == "/user"
                   else gh(200, [row(7, "Done.", at=written)], behind(time.time())))
    history = History(sent, (Attempt(sent, sent + 1),), unrecorded=False)
    found = await find_created(make_ctx(upstream(rec)), Listing(LIST, PATH), match={"body": "Done."},
                               history=history)
    assert found is not None and found["id"] == 7
    since = datetime.fromisoformat(rec.requests[1].url.params["since"].replace("Z", "+00:00"))
    assert -4 <= (since - written).total_seconds() <= -1  # the send, less the error, on GitHub's clock


@pytest.mark.parametrize(("rows", "expected"), [([], None), ([row(9, "Done.", login="other")], "unknown")])
async def test_n06_when_github_will_not_say_who_the_token_is(rows: list[Any], expected: Any) -> None:
    # n06 (d): GET /user answers 403 (App installation tokens). No row the attempt could have
    # written: nothing was written. Any such row, whoever's: unknown, named, never a second post.
    rec = github([gh(200, rows)], login=None)
    if expected is None:
        assert await find(rec) is None
    else:
        with pytest.raises(RecoveryUnresolved) as info:
            await find(rec)
        assert info.value.details is not None
        assert [c["id"] for c in info.value.details["candidates"]] == [9]
    assert "creator" not in rec.requests[1].url.params


async def test_a_login_learned_from_a_write_answer_needs_no_get_user() -> None:
    rec = github([gh(200, [row(3, "Done.", login="triage-bot[bot]")])], login=None)
    ctx = make_ctx(upstream(rec))
    learn_login(ctx, "triage-bot[bot]")
    found = await find_created(ctx, Listing(LIST, PATH), match={"body": "Done."}, history=HISTORY)
    assert found is not None and found["id"] == 3
    assert [r.url.path for r in rec.requests] == ["/repos/o/r/issues/1/comments"]


async def test_an_attempt_that_died_unrecorded_is_searched_from_the_first_start_to_now() -> None:
    began = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2)
    history = History(began.timestamp(), (), unrecorded=True)
    rec = github([gh(200, [row(3, "Done.", at=began + timedelta(seconds=40))])])
    ctx = make_ctx(upstream(rec))
    found = await find_created(ctx, Listing(LIST, PATH), match={"body": "Done."}, history=history)
    assert found is not None and found["id"] == 3
