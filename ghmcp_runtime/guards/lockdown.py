"""Lockdown: withhold text written by accounts without push access to a public repository.

Rows of a shape with a lockdown rule are projected with their `withhold` fields already null
(the presence rule: a row keeps every field) and `withheld: trust_unknown` set; after the handler returns, `Lockdown.release` decides each
author and puts the text back only for trusted ones. A hook that copies a row keeps it withheld:
the failure mode is closed. An author is trusted when the repository is private, the author is
the repository's owner (author_association OWNER) or the caller, or GitHub reports push access
(permission admin or write; maintain reads as write). author_association NONE, CONTRIBUTOR,
FIRST_TIMER, FIRST_TIME_CONTRIBUTOR and MANNEQUIN are untrusted without asking; MEMBER and
COLLABORATOR are asked (they may have read or triage access only). A check that fails withholds
(`trust_unknown`); answers are cached per credential for CACHE_TTL_S.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.model import WITHHELD_FIELD, Operation, Shape
from ghmcp_runtime.core.operation import UpstreamResponse
from ghmcp_runtime.core.projection import walk

HEADER = "x-mcp-lockdown"
CACHE_TTL_S = 300.0
CACHE_ENTRIES = 10_000
UNTRUSTED, UNKNOWN = "untrusted_author", "trust_unknown"
PUSH_PERMISSIONS = frozenset({"admin", "write"})
ASKED_ASSOCIATIONS = frozenset({"MEMBER", "COLLABORATOR"})
_REPOSITORY = re.compile(r"/repos/([^/]+)/([^/?#]+)")

GET_REPO = Operation(operation_id="repos/get", method="GET", path="/repos/{owner}/{repo}",
                     not_found="repo_not_found", success_status=(200,))
GET_VIEWER = Operation(operation_id="users/get-authenticated", method="GET", path="/user",
                       not_found="not_found", success_status=(200,))
GET_PERMISSION = Operation(
    operation_id="repos/get-collaborator-permission-level", method="GET",
    path="/repos/{owner}/{repo}/collaborators/{username}/permission",
    not_found="not_found", success_status=(200,),
)


def requested(headers: Mapping[str, str]) -> bool:
    """Whether an HTTP request's headers (lower-case names) ask for lockdown
    (`X-MCP-Lockdown: true`); a request can only narrow, never lift the operator's lockdown."""
    value = headers.get(HEADER)
    return isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on")


class TrustCache:
    """Answers of GitHub (repository visibility, the caller's login, permissions), per
    credential identity, for CACHE_TTL_S; the oldest entries go beyond CACHE_ENTRIES."""

    def __init__(self, ttl_s: float = CACHE_TTL_S, entries: int = CACHE_ENTRIES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.entries = entries
        self.clock = clock
        self._data: OrderedDict[tuple[str, ...], tuple[float, Any]] = OrderedDict()

    def get(self, key: tuple[str, ...]) -> Any:
        hit = self._data.get(key)
        if hit is None or hit[0] < self.clock():
            self._data.pop(key, None)
            return None
        return hit[1]

    def put(self, key: tuple[str, ...], value: Any) -> None:
        self._data[key] = (self.clock() + self.ttl_s, value)
        self._data.move_to_end(key)
        while len(self._data) > self.entries:
            self._data.popitem(last=False)


@dataclass(slots=True)
class _Held:
    row: dict[str, Any]
    original: dict[str, Any]
    repository: tuple[str, str] | None
    author: str | None
    association: str | None


@dataclass(slots=True)
class Lockdown:
    """One call's held rows and the decisions that release them."""

    shapes: Mapping[str, Shape]
    cache: TrustCache
    held: list[_Held] = field(default_factory=list)

    def hold(self, shape: str, raw: Mapping[str, Any], row: dict[str, Any]) -> None:
        rule = self.shapes[shape].lockdown
        if rule is None or all(row.get(name) is None for name in rule.withhold):
            return  # nothing to withhold (no text, or not at this density)
        url = walk(raw, rule.repository)
        found = _REPOSITORY.search(url) if isinstance(url, str) else None
        author = walk(raw, rule.author)
        association = walk(raw, rule.association) if rule.association else None
        original = dict(row)
        for name in rule.withhold:
            if name in row:
                row[name] = None
        row[WITHHELD_FIELD] = UNKNOWN
        self.held.append(_Held(
            row, original, (found.group(1), found.group(2)) if found else None,
            author if isinstance(author, str) else None,
            association if isinstance(association, str) else None,
        ))

    async def release(self, ctx: Asker) -> None:
        if not self.held:
            return
        verdicts = await _Judge(ctx, self.cache).decide(
            {(h.repository, h.author, h.association) for h in self.held})
        for h in self.held:
            verdict = verdicts.get((h.repository, h.author, h.association), UNKNOWN)
            if verdict is None:
                h.row.clear()
                h.row.update(h.original)
            else:
                h.row[WITHHELD_FIELD] = verdict
        self.held.clear()


class Asker(Protocol):
    """What lockdown asks of the call it runs in (the call's `ToolContext`)."""

    @property
    def identity(self) -> str: ...

    async def call(self, op: Operation, *, path: Mapping[str, str | int]) -> UpstreamResponse: ...


Case = tuple[tuple[str, str] | None, str | None, str | None]  # repository, author, association


@dataclass(slots=True)
class _Judge:
    ctx: Asker
    cache: TrustCache

    async def cached(self, key: tuple[str, ...], fetch: Callable[[], Any]) -> Any:
        """The cached answer, else `fetch()`'s (cached when it succeeds); None when it fails."""
        full = (self.ctx.identity, *key)
        hit = self.cache.get(full)
        if hit is not None:
            return hit
        try:
            value = await fetch()  # ctx.call bounds the requests in flight
        except ToolError:
            return None
        if value is not None:
            self.cache.put(full, value)
        return value

    async def private(self, owner: str, repo: str) -> bool | None:
        async def fetch() -> Any:
            data = (await self.ctx.call(GET_REPO, path={"owner": owner, "repo": repo})).data
            return "private" if data.get("private") is True else "public"

        answer = await self.cached(("repo", owner.lower(), repo.lower()), fetch)
        return None if answer is None else answer == "private"

    async def viewer(self) -> str | None:
        async def fetch() -> Any:
            login = (await self.ctx.call(GET_VIEWER, path={})).data.get("login")
            return login.lower() if isinstance(login, str) else None

        result: str | None = await self.cached(("viewer",), fetch)
        return result

    async def can_push(self, owner: str, repo: str, login: str) -> bool | None:
        async def fetch() -> Any:
            data = (await self.ctx.call(GET_PERMISSION, path={
                "owner": owner, "repo": repo, "username": login})).data
            permission = data.get("permission") if isinstance(data, Mapping) else None
            return None if not isinstance(permission, str) else permission in PUSH_PERMISSIONS

        key = ("push", owner.lower(), repo.lower(), login.lower())
        answer = await self.cached(key, fetch)
        return answer if isinstance(answer, bool) else None

    async def decide(self, cases: set[Case]) -> dict[Case, str | None]:
        """None (trusted) or the reason to withhold, for every case."""
        verdicts: dict[Case, str | None] = {}
        repos = {c[0] for c in cases if c[0] is not None and c[2] != "OWNER"}
        visibility: dict[tuple[str, str], bool | None] = {}

        async def look(repo: tuple[str, str]) -> None:
            visibility[repo] = await self.private(*repo)

        async with anyio.create_task_group() as group:
            for repo in repos:
                group.start_soon(look, repo)
        open_cases = []
        for case in cases:
            where, author, association = case
            if association == "OWNER":
                verdicts[case] = None
            elif where is None or author is None or visibility.get(where) is None:
                verdicts[case] = UNKNOWN
            elif visibility[where]:
                verdicts[case] = None
            else:
                open_cases.append(case)
        viewer = await self.viewer() if open_cases else None

        async def ask(case: Case) -> None:
            where, author, _ = case
            assert where is not None and author is not None
            push = await self.can_push(where[0], where[1], author)
            verdicts[case] = UNKNOWN if push is None else (None if push else UNTRUSTED)

        async with anyio.create_task_group() as group:
            for case in open_cases:
                _, author, association = case
                if viewer is not None and author is not None and author.lower() == viewer:
                    verdicts[case] = None
                elif association is not None and association not in ASKED_ASSOCIATIONS:
                    verdicts[case] = UNTRUSTED
                else:
                    group.start_soon(ask, case)
        return verdicts
