"""Find what a create with a lost answer wrote, by what was sent: no marker in user content.

After a create's answer is lost (timeout, reset, 5xx after GitHub committed), GitHub may or may
not hold the object. The next attempt with the same idempotency key looks for it before writing
again (the `recover` step of `ctx.idempotent`), by what is known of it (`idempotency.History`):

* time: created while one of the key's attempts could have written it. Each attempt recorded
  when its write was sent and when it gave up, on this server's clock; GitHub stamps
  `created_at` with its own clock, in whole seconds. The difference is measured from GitHub's
  `Date` headers (`forge_clock`), not assumed; the forge ends any request after
  `ForgeProfile.request_limit_s` (GitHub: 10 s), so a write lands at most that long after it
  was sent, even when the client gave up sooner;
* not claimed: no other call (keyed or not) already answered with the item;
* author: the token's own login (`own_login`: learned from what it created, else the forge
  profile's `viewer` read, GitHub's GET /user);
* content: exactly what was sent, compared as GitHub stores text (`same_text`); or, when no row
  matches exactly, the one row of the caller's in the window that was edited since it was
  created (a bot or a person retitled it before the retry).

API (today's hooks and the declarative `idempotent_create` recipe call exactly this):

    Listing(op, path, query={...}, newest_first=False, author_param=None, author_field="user",
            since_param="since")
        How to list candidates: a list operation whose rows carry `id`,
        `<author_field>.login`, `created_at`, `updated_at` and the matched fields, and that pages
        as the forge does and, unless since_param is None, takes a filter on rows updated at or
        after a time. newest_first: rows come newest-created first (issues: sort=created,
        direction=desc), so the walk stops at the first row created before the window;
        otherwise (comments: oldest first) every page of rows changed since the window began is
        read. author_param: the query parameter that filters by author on GitHub's side
        (issues: `creator`), sent with the own login.
    await find_created(ctx, listing, match={field: value sent, ...}, history=History(...),
                       repair=None, max_pages=MAX_PAGES) -> raw row | None
        The row this key's attempts wrote, or None when they provably wrote nothing (no row
        they could have written exists): write now. Raises RecoveryUnresolved (code
        `outcome_unknown`; the runner keeps the key pending) when it cannot decide: several
        rows qualify, the token's login cannot be read (`details.candidates` lists the rows
        that could be the write), or more than `max_pages` pages of 100 rows changed in the
        window; `repair` (where the caller can look) goes on that error.
    await own_login(ctx) -> str | None;  learn_login(ctx, login);  same_text(stored, sent) -> bool
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ghmcp_runtime.calls.context import ToolContext, Upstream
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.forge_clock import ForgeClock
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.stores.idempotency import UNRESOLVED, History, RecoveryUnresolved, unresolved

__all__ = ["CLOCK_SKEW_S", "FIND_CREATED_CODES", "MAX_PAGES", "UNRESOLVED",
           "Listing", "RecoveryUnresolved", "find_created", "learn_login", "own_login", "same_text"]

MAX_PAGES = 10
# GitHub's clock against this server's when no Date header was seen: assumed within this much
CLOCK_SKEW_S = 30.0
CREATED_AT_RESOLUTION_S = 1.0  # created_at is whole seconds
MAX_CANDIDATES = 10
_MAX_LOGINS = 1024

FIND_CREATED_CODES = frozenset({"outcome_unknown"})  # what find_created raises itself


@dataclass(frozen=True, slots=True)
class Listing:
    op: Operation
    path: Mapping[str, str | int]
    query: Mapping[str, Any] = field(default_factory=dict)
    newest_first: bool = False
    author_param: str | None = None
    author_field: str = "user"  # milestones: creator
    since_param: str | None = "since"  # None: the operation cannot filter by time
    created_field: str = "created_at"  # when a row was made (a review's: submitted_at)


# logins by GitHub (the upstream object) and credential identity; a token's login never changes
_logins: weakref.WeakKeyDictionary[Upstream, OrderedDict[str, str]] = weakref.WeakKeyDictionary()


def _login_cache(ctx: ToolContext) -> OrderedDict[str, str]:
    try:
        return _logins.setdefault(ctx.upstream, OrderedDict())
    except TypeError:  # an upstream that cannot be weakly referenced is simply not cached
        return OrderedDict()


def learn_login(ctx: ToolContext, login: Any) -> None:
    """The caller's login as GitHub showed it: the author of something this credential created.
    The only source for tokens GET /user refuses (GitHub App installation tokens: `<app>[bot]`)."""
    if isinstance(login, str) and login:
        cache = _login_cache(ctx)
        cache[ctx.identity] = login
        while len(cache) > _MAX_LOGINS:
            cache.popitem(last=False)


async def own_login(ctx: ToolContext) -> str | None:
    """The credential's login: learned, else the forge's `viewer` read (GitHub: GET /user). None
    when the forge will not say (GitHub: 403 for App installation tokens); a temporary failure is
    raised (the key stays pending)."""
    login = _login_cache(ctx).get(ctx.identity)
    if login is not None:
        return login
    try:
        resp = await ctx.call(ctx.forge.viewer, path={})
    except ToolError as err:
        if err.temporary:
            raise
        return None
    found = resp.data.get(ctx.forge.login_field) if isinstance(resp.data, Mapping) else None
    learn_login(ctx, found)
    return found if isinstance(found, str) and found else None


def same_text(stored: Any, sent: str | None) -> bool:
    """Equal as GitHub keeps text: null is "", CRLF is LF, surrounding whitespace is trimmed."""

    def norm(value: Any) -> str:
        return str(value or "").replace("\r\n", "\n").strip()

    return norm(stored) == norm(sent)


def _github_time(value: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class _Window:
    """Where a row's created_at (GitHub's clock, epoch s) must lie to be an attempt's write."""

    low: float
    high: float

    def holds(self, created: float) -> bool:
        return self.low <= created <= self.high


def windows(history: History, clock: ForgeClock, now: float, limit_s: float) -> list[_Window]:
    """The attempts' windows on the forge's clock. A recorded attempt: from its send to the
    forge's request limit `limit_s` (or its end, if later), widened by the offset's error and
    created_at's truncation; an unrecorded one (it died): from the first start to now, with the
    assumed skew."""
    out: list[_Window] = []
    for attempt in history.attempts:
        offset = attempt.offset if attempt.offset is not None else clock.offset
        error = clock.error_s if offset is not None else CLOCK_SKEW_S
        end = max(attempt.end, attempt.start + limit_s)
        out.append(_Window(attempt.start + (offset or 0.0) - error - CREATED_AT_RESOLUTION_S,
                           end + (offset or 0.0) + error))
    if history.unrecorded:
        offset = clock.offset or 0.0
        out.append(_Window(history.started_at + offset - CLOCK_SKEW_S, now + offset + CLOCK_SKEW_S))
    return out


def _by(row: Mapping[str, Any], login: str, author_field: str, login_field: str) -> bool:
    user = row.get(author_field)
    return isinstance(user, Mapping) and str(user.get(login_field, "")).casefold() == login.casefold()


def _edited(row: Mapping[str, Any]) -> bool:
    created, updated = _github_time(row.get("created_at")), _github_time(row.get("updated_at"))
    return created is not None and updated is not None and updated > created


def _candidate(row: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies a row to the agent: server-minted values only (never its text)."""
    keys = ("id", "number", "html_url", "created_at")
    return {("url" if k == "html_url" else k): row[k] for k in keys if row.get(k) is not None}


async def find_created(
    ctx: ToolContext,
    listing: Listing,
    *,
    match: Mapping[str, str | None],
    history: History,
    repair: Mapping[str, Any] | None = None,
    max_pages: int = MAX_PAGES,
) -> dict[str, Any] | None:
    login = await own_login(ctx)
    spans = windows(history, ctx.forge_clock, time.time(), ctx.forge.request_limit_s)
    since = min(w.low for w in spans)
    size = ctx.forge.max_page_size
    query: dict[str, Any] = dict(listing.query)
    if listing.since_param is not None:
        query[listing.since_param] = datetime.fromtimestamp(since, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if listing.author_param is not None and login is not None:
        query[listing.author_param] = login
    exact: list[dict[str, Any]] = []
    edited: list[dict[str, Any]] = []
    for page in range(1, max_pages + 1):
        resp = await ctx.call(listing.op, path=listing.path, query={**query, **ctx.forge.page_query(page, size)})
        older_reached = False
        for row in resp.data:
            created = _github_time(row.get(listing.created_field))
            if created is None or created < since:
                older_reached = older_reached or listing.newest_first
                continue
            # a pull request's row carries pull_request (Forgejo's issues carry it as null)
            if (row.get("pull_request") is not None or str(row.get("id")) in history.claimed
                    or not any(w.holds(created) for w in spans)
                    or (login is not None
                        and not _by(row, login, listing.author_field, ctx.forge.login_field))):
                continue
            if all(same_text(row.get(name), sent) for name, sent in match.items()):
                exact.append(row)
            elif _edited(row):
                edited.append(row)
        if older_reached or not ctx.forge.has_more(resp, page, size):
            break
    else:
        raise unresolved(f"more than {max_pages * size} items changed since that call began, "
                         "too many to check", repair, source=ctx.forge.display_name)
    return _decide(ctx.forge, login, exact, edited, repair)


def _decide(forge: ForgeProfile, login: str | None, exact: Sequence[dict[str, Any]],
            edited: Sequence[dict[str, Any]], repair: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if login is None:  # nothing ties a row to this token: any row that could be the write
        rows = [*exact, *edited]
        if not rows:
            return None  # no row the attempts could have written exists
        raise _with_candidates(
            f"{forge.display_name} does not say which account this token acts as "
            f"(GET {forge.viewer.path} was refused, as for GitHub App installation tokens), and "
            "items that could be that write exist", rows, repair, forge)
    rows = list(exact) or list(edited)  # an exact match, else the caller's row edited since
    if len(rows) > 1:
        how = "with exactly this content" if exact else "edited since they were created"
        raise _with_candidates(f"{len(rows)} items by this account {how} were created while it ran",
                               rows, repair, forge)
    return rows[0] if rows else None


def _with_candidates(why: str, rows: Sequence[Mapping[str, Any]],
                     repair: Mapping[str, Any] | None, forge: ForgeProfile) -> RecoveryUnresolved:
    return unresolved(why, repair, source=forge.display_name, count=len(rows),
                      candidates=[_candidate(r) for r in rows[:MAX_CANDIDATES]])
