"""Lockdown: withhold text written by accounts without push access to a public repository.

Rows of a shape with a lockdown rule are projected with their `withhold` fields already null
(the presence rule: a row keeps every field) and `withheld: trust_unknown` set; after the handler
returns, `Lockdown.release` decides each author and puts the text back only for trusted ones. A
hook that copies a row keeps it withheld: the failure mode is closed. An author is trusted when
the repository is private, the author is the caller, or the forge reports push access. What to
ask and how to read the answers is the forge profile's (`ForgeProfile.trust`, `TrustChecks`):
on GitHub, permission admin or write (maintain reads as write) is push access, and the row's
author_association saves questions (OWNER is trusted; MEMBER and COLLABORATOR are asked, as they
may have read or triage access only; any other is untrusted without asking). A check that fails
withholds (`trust_unknown`); answers are cached per credential for CACHE_TTL_S.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.forge_profile import ForgeProfile, TrustChecks
from ghmcp_runtime.core.model import WITHHELD_FIELD, Operation, ServerSpec, Shape
from ghmcp_runtime.core.operation import UpstreamResponse
from ghmcp_runtime.core.projection import walk

HEADER = "x-mcp-lockdown"
CACHE_TTL_S = 300.0
CACHE_ENTRIES = 10_000
UNTRUSTED, UNKNOWN = "untrusted_author", "trust_unknown"


def unavailable(forge: ForgeProfile) -> str | None:
    """Why lockdown cannot be enabled on `forge` (None: it can)."""
    if forge.trust is not None:
        return None
    return (f"lockdown is not available on {forge.display_name}: its API offers no way to tell "
            "whether an author may push, so text could not be withheld or released safely")


def withholds_nothing(spec: ServerSpec) -> str | None:
    """Why lockdown would withhold nothing on `spec` (None: it can withhold something)."""
    refused = unavailable(spec.forge)
    if refused is not None:
        return refused
    if spec.declares_lockdown:
        return None
    return (f"{spec.name} declares no lockdown rule (no shape of its override file has `lockdown:`), "
            "so it would withhold nothing")


def requested(headers: Mapping[str, str]) -> bool:
    """Whether an HTTP request's headers (lower-case names) ask for lockdown
    (`X-MCP-Lockdown: true`); a request can only narrow, never lift the operator's lockdown."""
    value = headers.get(HEADER)
    return isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on")


class TrustCache:
    """Answers of the forge (repository visibility, the caller's login, permissions), per
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
    forge: ForgeProfile
    held: list[_Held] = field(default_factory=list)
    trust: TrustChecks = field(init=False)

    def __post_init__(self) -> None:
        if self.forge.trust is None:
            raise ValueError(unavailable(self.forge))
        self.trust = self.forge.trust

    def hold(self, shape: str, raw: Mapping[str, Any], row: dict[str, Any]) -> None:
        rule = self.shapes[shape].lockdown
        if rule is None or all(row.get(name) is None for name in rule.withhold):
            return  # nothing to withhold (no text, or not at this density)
        url = walk(raw, rule.repository)
        repository = self.forge.repository_of(url) if isinstance(url, str) else None
        author = walk(raw, rule.author)
        association = walk(raw, rule.association) if rule.association else None
        original = dict(row)
        for name in rule.withhold:
            if name in row:
                row[name] = None
        row[WITHHELD_FIELD] = UNKNOWN
        self.held.append(_Held(
            row, original, repository,
            author if isinstance(author, str) else None,
            association if isinstance(association, str) else None,
        ))

    async def release(self, ctx: Asker) -> None:
        if not self.held:
            return
        verdicts = await _Judge(ctx, self.cache, self.forge, self.trust).decide(
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
    forge: ForgeProfile
    trust: TrustChecks

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
            data = (await self.ctx.call(self.forge.repository, path={"owner": owner, "repo": repo})).data
            return "private" if data.get(self.trust.private_field) is True else "public"

        answer = await self.cached(("repo", owner.lower(), repo.lower()), fetch)
        return None if answer is None else answer == "private"

    async def viewer(self) -> str | None:
        async def fetch() -> Any:
            forge = self.forge
            login = (await self.ctx.call(forge.viewer, path={})).data.get(forge.login_field)
            return login.lower() if isinstance(login, str) else None

        result: str | None = await self.cached(("viewer",), fetch)
        return result

    async def can_push(self, owner: str, repo: str, login: str) -> bool | None:
        async def fetch() -> Any:
            trust = self.trust
            data = (await self.ctx.call(trust.permission, path={
                "owner": owner, "repo": repo, trust.account_param: login})).data
            permission = data.get(trust.permission_field) if isinstance(data, Mapping) else None
            return None if not isinstance(permission, str) else permission in trust.push_permissions

        key = ("push", owner.lower(), repo.lower(), login.lower())
        answer = await self.cached(key, fetch)
        return answer if isinstance(answer, bool) else None

    async def decide(self, cases: set[Case]) -> dict[Case, str | None]:
        """None (trusted) or the reason to withhold, for every case."""
        verdicts: dict[Case, str | None] = {}
        owners = self.trust.owner_associations
        repos = {c[0] for c in cases if c[0] is not None and c[2] not in owners}
        visibility: dict[tuple[str, str], bool | None] = {}

        async def look(repo: tuple[str, str]) -> None:
            visibility[repo] = await self.private(*repo)

        async with anyio.create_task_group() as group:
            for repo in repos:
                group.start_soon(look, repo)
        open_cases = []
        for case in cases:
            where, author, association = case
            if association is not None and association in owners:
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
                elif association is not None and association not in self.trust.asked_associations:
                    verdicts[case] = UNTRUSTED
                else:
                    group.start_soon(ask, case)
        return verdicts
