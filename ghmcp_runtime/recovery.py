"""Find what a create with a lost answer wrote, by what was sent: no marker in user content.

After a create's answer is lost (timeout, reset, 5xx after GitHub committed), GitHub may or may
not hold the object. The next attempt with the same idempotency key looks for it before writing
again (the `recover` step of `ctx.idempotent`), by what is known of it:

* author: the token's own login (`own_login`: GET /user, cached per GitHub and credential);
* content: exactly what was sent, compared as GitHub stores text (`same_text`);
* time: created at or after the key's first attempt began, less CLOCK_SKEW_S (GitHub's clock
  against this server's or the shared store's).

API (today's hooks and the declarative `idempotent_create` recipe call exactly this):

    Listing(op, path, query={...}, newest_first=False, author_param=None, author_field="user",
            since_param="since")
        How to list candidates: a GitHub list operation whose rows carry `<author_field>.login`,
        `created_at` and the matched fields, and that pages as the forge does and, unless
        since_param is None, a filter on rows updated at or after a time. newest_first: rows come newest-created first (issues:
        sort=created, direction=desc), so the walk stops at the first row created before the
        window; otherwise (comments: oldest first, no order parameter) every page of rows
        changed since the window began is read. author_param: the query parameter that
        filters by author on GitHub's side (issues: `creator`), sent with the own login.
    await find_created(ctx, listing, match={field: value sent, ...}, since=first_start,
                       repair=None, max_pages=MAX_PAGES) -> raw row | None
        The one row by the own login, created in the window, whose every `match` field is the
        text sent (a missing or null field counts as ""); rows that are pull requests never
        match. None when no row matches: the earlier attempt wrote nothing, write now. Raises
        RecoveryUnresolved when several rows match or when more than `max_pages` pages of 100
        rows changed in the window; `repair` (where the caller can look) goes on that error.
    RecoveryUnresolved
        An OutcomeUnknown (code `outcome_unknown`, not temporary): the idempotency runner keeps
        the key pending, so the same key never writes blindly; the agent reads what is there.
    await own_login(ctx) -> str
    same_text(stored, sent) -> bool
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ghmcp_runtime.context import ToolContext, Upstream
from ghmcp_runtime.errors import OutcomeUnknown
from ghmcp_runtime.model import Operation

MAX_PAGES = 10
# GitHub stamps created_at with its own clock (whole seconds); the first attempt's start comes
# from this server's clock or the shared store's. Rows this much older still count as in the
# window, so a clock ahead of GitHub's by less than this never hides the write.
CLOCK_SKEW_S = 30.0
_MAX_LOGINS = 1024

GET_AUTHENTICATED_USER = Operation(
    operation_id="users/get-authenticated", method="GET", path="/user",
    not_found="invalid_credential", success_status=(200,),
)

FIND_CREATED_CODES = frozenset({"outcome_unknown"})  # what find_created raises itself
UNRESOLVED = (
    "An earlier call with this idempotency_key may already have written this, and GitHub's "
    "records cannot tell: {why}. Nothing new was written."
)


class RecoveryUnresolved(OutcomeUnknown):
    """The earlier attempt's outcome stays unknown after looking: never write blindly."""


@dataclass(frozen=True, slots=True)
class Listing:
    op: Operation
    path: Mapping[str, str | int]
    query: Mapping[str, Any] = field(default_factory=dict)
    newest_first: bool = False
    author_param: str | None = None
    author_field: str = "user"  # milestones: creator
    since_param: str | None = "since"  # None: the operation cannot filter by time


# logins by GitHub (the upstream object) and credential identity; a token's login never changes
_logins: weakref.WeakKeyDictionary[Upstream, OrderedDict[str, str]] = weakref.WeakKeyDictionary()


async def own_login(ctx: ToolContext) -> str:
    try:
        cache = _logins.setdefault(ctx.upstream, OrderedDict())
    except TypeError:  # an upstream that cannot be weakly referenced is simply not cached
        cache = OrderedDict()
    login = cache.get(ctx.identity)
    if login is None:
        resp = await ctx.call(GET_AUTHENTICATED_USER, path={})
        login = str(resp.data["login"])
        cache[ctx.identity] = login
        while len(cache) > _MAX_LOGINS:
            cache.popitem(last=False)
    return login


def same_text(stored: Any, sent: str | None) -> bool:
    """Equal as GitHub keeps text: null is "", CRLF is LF, surrounding whitespace is trimmed."""

    def norm(value: Any) -> str:
        return str(value or "").replace("\r\n", "\n").strip()

    return norm(stored) == norm(sent)


def _github_time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _by(row: Mapping[str, Any], login: str, author_field: str) -> bool:
    user = row.get(author_field)
    return isinstance(user, Mapping) and str(user.get("login", "")).casefold() == login.casefold()


async def find_created(
    ctx: ToolContext,
    listing: Listing,
    *,
    match: Mapping[str, str | None],
    since: datetime,
    repair: Mapping[str, Any] | None = None,
    max_pages: int = MAX_PAGES,
) -> dict[str, Any] | None:
    login = await own_login(ctx)
    window = since - timedelta(seconds=CLOCK_SKEW_S)
    size = ctx.forge.max_page_size
    query: dict[str, Any] = dict(listing.query)
    if listing.since_param is not None:
        query[listing.since_param] = window.strftime("%Y-%m-%dT%H:%M:%SZ")
    if listing.author_param is not None:
        query[listing.author_param] = login
    found: list[dict[str, Any]] = []
    for page in range(1, max_pages + 1):
        resp = await ctx.call(listing.op, path=listing.path, query={**query, **ctx.forge.page_query(page, size)})
        older_reached = False
        for row in resp.data:
            created = _github_time(row.get("created_at"))
            if created is None or created < window:
                older_reached = older_reached or listing.newest_first
                continue
            if "pull_request" in row or not _by(row, login, listing.author_field):
                continue
            if all(same_text(row.get(name), sent) for name, sent in match.items()):
                found.append(row)
        if older_reached or not ctx.forge.has_more(resp, page, size):
            break
    else:
        raise _unresolved(f"more than {max_pages * size} items changed since that call began, "
                          "too many to check", repair)
    if len(found) > 1:
        raise _unresolved(f"{len(found)} items by this account with exactly this content were "
                          "created since that call began", repair, count=len(found))
    return found[0] if found else None


def _unresolved(why: str, repair: Mapping[str, Any] | None, count: int | None = None) -> RecoveryUnresolved:
    details: dict[str, Any] = {"field": "idempotency_key", "reason": why}
    if count is not None:
        details["count"] = count
    return RecoveryUnresolved("outcome_unknown", UNRESOLVED.format(why=why), details=details,
                              repair=repair)
