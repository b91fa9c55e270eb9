"""What a tool handler (generated or hook) gets: upstream calls, state handles, projection.

INTERFACE CONTRACT (hooks and generated code rely on exactly these names):

    ctx.tool            ToolSpec of the running tool
    ctx.request_id      str, minted per call, also in every result/envelope
    ctx.identity        str, short hash of the caller's credential ("anonymous" when none)
    ctx.credential      str | None, the caller's forge token (read by the upstream layer only)
    ctx.arguments       the validated arguments as received (for repairs)
    await ctx.call(op, path=..., query=..., body=...) -> UpstreamResponse   (raises ToolError)
    ctx.mint_cursor(state, bound_to=...) -> str
    ctx.open_cursor(token, bound_to=..., field=..., restart_arguments=...) -> dict  (raises ToolError)
    await ctx.idempotent(key, scope=..., fingerprint=..., run=..., recover=..., claimed=...,
                         repair=...) -> T
        recover(history: idempotency.History) -> T | None   (after an unknown outcome)
    ctx.project(shape_name, raw, detail, computed=..., include=..., omit=...) -> dict
    ctx.row(output_name, shape_name, raw) -> dict   (the row exactly as the tool's outputSchema has it)
    ctx.version(shape_name, raw) -> str   (the shape's declared content version)
    ctx.lockdown        Lockdown | None: set when lockdown is on for this call; rows that
                        ctx.project returns may be withheld until the runtime releases them
    ctx.note_rate_limit(remaining, limit)   (called by the upstream layer)
    ctx.repos           RepoAllowlist | None: the caller's repository allowlist (None: any);
                        ctx.call refuses requests outside it before sending them
    ctx.confine_query(q) -> str   (a search query confined to ctx.repos; raises ToolError)
    ctx.requests_sent   int, upstream requests this call has started through ctx.call
    ctx.outside_allowlist  int, rows the allowlist left out of this call's answers (a tool
                        returning rows reports it as `outside_allowlist`)
    ctx.changes         Changes: write requests that may have changed something (answered with
                        success, or their answer lost), this call's and the tools' it ran
    ctx.forge_clock     ForgeClock: the forge's clock offset, as its answers' Date headers show it
    ctx.writes          WriteLog: what the call's multi-step writes applied so far; once a write
                        was sent, the runtime adds it to whatever error the call ends with
    ctx.slots           anyio.CapacityLimiter: how many of this call's upstream requests may be in
                        flight at once (ctx.call holds one slot per request; never call ctx.call
                        while holding one)
    ctx.dry_run         bool: plan, never write (ctx.call refuses every write; a tool that can plan
                        answers what it would change)
    await ctx.run_tool(name, args, dry_run=..., paced=...) -> dict   another tool of the server, as
                        a call of it would run (validation, rules, envelope); raises ToolError
    await ctx.progress(done, total, message)   notifications/progress, when the client asked
    await ctx.cancelled()   returns once the client cancelled the call or went away
    await ctx.confirm(message, digest)   ask the user through the protocol (see confirm.py)
    ctx.forge           ForgeProfile: the forge's conventions (page parameters, largest page)
    ctx.host            Host | None: the server around the call (its caller, the tools it runs,
                        progress, confirmations, tool-list changes)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio

from ghmcp_runtime.calls.error_rules import refine
from ghmcp_runtime.cleaning.untrusted import Cleaned, clean_ahead
from ghmcp_runtime.core.concurrent import MAX_CONCURRENT
from ghmcp_runtime.core.declared import OnError
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError, UpstreamError, WriteLog
from ghmcp_runtime.core.forge_clock import ForgeClock
from ghmcp_runtime.core.forges import GITHUB
from ghmcp_runtime.core.model import Detail, Operation, ToolSpec
from ghmcp_runtime.core.operation import (
    UpstreamResponse as UpstreamResponse,  # handlers import it from here
)

if TYPE_CHECKING:
    from ghmcp_runtime.core.forge_profile import ForgeProfile
    from ghmcp_runtime.guards.allowlist import RepoAllowlist
    from ghmcp_runtime.guards.caller import Caller
    from ghmcp_runtime.guards.lockdown import Lockdown
    from ghmcp_runtime.stores.idempotency import History

T = TypeVar("T")
READ_METHODS = frozenset({"GET", "HEAD"})


class Upstream(Protocol):
    async def call(
        self,
        ctx: ToolContext,
        op: Operation,
        *,
        path: Mapping[str, str | int],
        query: Mapping[str, Any] | None,
        body: Any,
    ) -> UpstreamResponse: ...


class CursorCodec(Protocol):
    def mint(self, *, tool: str, identity: str, bound_to: Mapping[str, Any], state: Mapping[str, Any]) -> str: ...

    def open(
        self,
        token: str,
        *,
        tool: str,
        identity: str,
        bound_to: Mapping[str, Any],
        field: str,
        restart_arguments: Mapping[str, Any],
    ) -> dict[str, Any]: ...


class Idempotency(Protocol):
    async def run(
        self,
        *,
        key: str | None,
        scope: Sequence[Any],
        fingerprint: str,
        run: Callable[[], Awaitable[Any]],
        recover: Callable[[History], Awaitable[Any | None]] | None,
        shared: Sequence[Any] | None = None,
        claimed: Callable[[], str | None] | None = None,
        offset: Callable[[], float | None] | None = None,
        repair: Mapping[str, Any] | None = None,
        source: str = "the forge",
        changed: Callable[[], bool] | None = None,
    ) -> Any: ...


class Host(Protocol):
    """What a call may ask of the server around it (app.py implements it for each call)."""

    @property
    def write_interval_s(self) -> float:
        """Paced calls start write requests at least this far apart."""

    @property
    def max_wait_s(self) -> float:
        """The longest rate-limit wait a batch sits out before it stops."""

    async def run_tool(self, ctx: ToolContext, name: str, args: Mapping[str, Any], *, dry_run: bool,
                       paced: bool) -> dict[str, Any]: ...

    def offers(self, name: str) -> bool:
        """Is the tool `name` on the caller's surface?"""

    async def progress(self, done: float, total: float | None, message: str | None) -> None: ...

    async def confirm(self, message: str, digest: str) -> None: ...

    async def cancelled(self) -> None:
        """Returns once the client cancelled this call or went away (never, if it does not)."""

    @property
    def caller(self) -> Caller:
        """Who is calling (their surface, their request's headers)."""

    async def tools_changed(self) -> bool:
        """Tell the caller's client its tool list changed; False when no channel can carry it."""


class Projector(Protocol):
    def project(
        self, shape: str, raw: Mapping[str, Any], detail: Detail, computed: Mapping[str, Any],
        include: Collection[str] = (), cleaned: Cleaned | None = None, omit: Collection[str] = (),
    ) -> dict[str, Any]: ...

    def fields(self, shape: str) -> list[str]: ...

    def version(self, shape: str, raw: Mapping[str, Any]) -> str: ...


@dataclass(slots=True)
class Changes:
    """Write requests that may have changed something at the forge: a refusal (4xx), or a
    request that never reached it, changed nothing and does not count."""

    count: int = 0


@dataclass(slots=True)
class ToolContext:
    tool: ToolSpec
    request_id: str
    identity: str
    arguments: Mapping[str, Any]
    upstream: Upstream
    cursors: CursorCodec
    idempotency: Idempotency
    projector: Projector
    rate_limit: dict[str, int] = field(default_factory=dict)
    # the caller's forge token for this call (never logged, never in results); None = none given
    credential: str | None = field(default=None, repr=False)
    lockdown: Lockdown | None = None
    repos: RepoAllowlist | None = None
    requests_sent: int = 0
    outside_allowlist: int = 0  # rows `repos` left out of this call's answers
    changes: Changes = field(default_factory=Changes)  # shared with the tools a composite runs
    writes: WriteLog = field(default_factory=WriteLog)
    _own_clock: ForgeClock = field(default_factory=ForgeClock, repr=False)
    slots: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(MAX_CONCURRENT))
    error_rules: Sequence[OnError] = ()  # the server's own on_error (ghmcp_runtime.calls.error_rules)
    host: Host | None = None
    dry_run: bool = False
    pace: Callable[[], Awaitable[None]] | None = None  # awaited before each write request
    forge: ForgeProfile = GITHUB  # paging conventions (ghmcp_runtime.core.forges)
    # long untrusted text of this call's upstream answers, cleaned ahead (untrusted.py)
    cleaned: Cleaned = field(default_factory=dict)

    @property
    def forge_clock(self) -> ForgeClock:
        """The upstream's measure of the forge's clock (one of the call's own if it keeps none)."""
        clock = getattr(self.upstream, "forge_clock", None)
        return clock if isinstance(clock, ForgeClock) else self._own_clock

    @property
    def follow_redirects(self) -> bool:
        """Forges redirect renamed repositories and transferred issues (GitHub: to locations by
        numeric id), possibly out of the allowlist: with an allowlist they are not followed."""
        return self.repos is None

    def confine_query(self, q: str) -> str:
        return q if self.repos is None else self.repos.confine(q)

    async def call(
        self,
        op: Operation,
        *,
        path: Mapping[str, str | int],
        query: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> UpstreamResponse:
        if self.repos is None:
            return await self._send(op, path=path, query=query, body=body)
        self.repos.check_request(op.path, path, query, self.forge)
        try:
            resp = await self._send(op, path=path, query=query, body=body)
        except UpstreamError as err:
            if err.status in (301, 302, 307, 308):
                raise self.repos.refusal(
                    "repo", f"{self.forge.display_name} redirected the request (a renamed "
                    "repository or a transferred issue); redirects are not followed under an "
                    "allowlist") from None
            raise
        screened, dropped = self.repos.screen(resp, self.forge)
        self.outside_allowlist += dropped
        return screened

    async def _send(self, op: Operation, *, path: Mapping[str, str | int], query: Mapping[str, Any] | None,
                    body: Any) -> UpstreamResponse:
        writes = op.method not in READ_METHODS
        if writes and self.dry_run:  # a tool that cannot plan meets this instead of writing
            raise ToolError("internal_error", "This tool cannot answer a dry run; nothing was written.")
        async with self.slots:
            if writes and self.pace is not None:
                await self.pace()
            self.requests_sent += 1
            try:
                response = await self.upstream.call(self, op, path=path, query=query, body=body)
            except UpstreamError as err:
                self.changes.count += writes and isinstance(err, OutcomeUnknown)
                if not self.error_rules:
                    raise
                raise refine(self.error_rules, err, op.method, self.arguments) from None
            except BaseException as exc:  # cancelled in flight: the write may have landed
                self.changes.count += writes and not isinstance(exc, ToolError)
                raise
            self.changes.count += writes
        await clean_ahead(response.data, self.cleaned)
        return response

    async def run_tool(self, name: str, args: Mapping[str, Any], *, dry_run: bool = False,
                       paced: bool = False) -> dict[str, Any]:
        """A call of this server's tool `name` on the caller's behalf; its failure is raised as the
        ToolError a direct call would answer with."""
        if self.host is None:
            raise RuntimeError("this call has no host to run tools")
        return await self.host.run_tool(self, name, args, dry_run=dry_run or self.dry_run, paced=paced)

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        if self.host is not None:
            await self.host.progress(done, total, message)

    async def cancelled(self) -> None:
        """Returns once the client cancelled this call or went away (a batch stops between
        items then); never without a host."""
        if self.host is None:
            await anyio.sleep_forever()
        else:
            await self.host.cancelled()

    async def confirm(self, message: str, digest: str) -> None:
        """Ask the user (see ghmcp_runtime.engine.confirm); returns when confirmed or when the client
        cannot be asked, raises when declined or while the answer is awaited."""
        if self.host is not None:
            await self.host.confirm(message, digest)

    def mint_cursor(self, state: Mapping[str, Any], *, bound_to: Mapping[str, Any]) -> str:
        return self.cursors.mint(
            tool=self.tool.name, identity=self.identity, bound_to=bound_to, state=state
        )

    def open_cursor(
        self,
        token: str,
        *,
        bound_to: Mapping[str, Any],
        field: str,
        restart_arguments: Mapping[str, Any],
    ) -> dict[str, Any]:
        return self.cursors.open(
            token,
            tool=self.tool.name,
            identity=self.identity,
            bound_to=bound_to,
            field=field,
            restart_arguments=restart_arguments,
        )

    async def idempotent(
        self,
        key: str | None,
        *,
        scope: Sequence[Any],
        fingerprint: str,
        run: Callable[[], Awaitable[T]],
        recover: Callable[[History], Awaitable[T | None]] | None = None,
        claimed: Callable[[], str | None] | None = None,
        repair: Mapping[str, Any] | None = None,
    ) -> T:
        """`run()` at most once per key (see idempotency.py). When an earlier attempt with the
        key ended with an unknown outcome, `recover(history)` runs first and its non-None answer
        is taken as that attempt's result. `claimed()` names the item a finished write answered
        with: no other call's recovery adopts it (keyed or not); `repair` says where to look
        when the key is reused with other arguments while its first outcome is unknown."""
        before = self.changes.count
        result: T = await self.idempotency.run(
            key=key, scope=(self.identity, *scope), fingerprint=fingerprint, run=run, recover=recover,
            shared=scope if claimed is not None else None, claimed=claimed,
            offset=lambda: self.forge_clock.offset, repair=repair, source=self.forge.display_name,
            changed=lambda: self.changes.count > before,
        )
        return result

    def project(
        self,
        shape: str,
        raw: Mapping[str, Any],
        detail: Detail,
        computed: Mapping[str, Any] | None = None,
        include: Collection[str] = (),
        omit: Sequence[str] = (),
    ) -> dict[str, Any]:
        """`raw` as a `shape` row of density `detail`, plus the full-density fields in `include`,
        without those in `omit`; lockdown may hold it until the runtime releases it."""
        # omitted before lockdown holds the row: an omitted field is never withheld
        return self._held(shape, raw, self.projector.project(shape, raw, detail, computed or {}, include,
                                                             self.cleaned, omit))

    def row(self, output: str, shape: str, raw: Mapping[str, Any]) -> dict[str, Any]:
        """`raw` as the tool's success output `output` publishes it: the fields its outputSchema
        lists (a fixed density, with any declared `include`/`omit`), for hooks."""
        published = self.tool.success_fields[output]["properties"]
        unpublished = [name for name in self.projector.fields(shape) if name not in published]
        full = self.projector.project(shape, raw, "full", {}, (), self.cleaned, unpublished)
        return self._held(shape, raw, {name: full[name] for name in published})

    def _held(self, shape: str, raw: Mapping[str, Any], row: dict[str, Any]) -> dict[str, Any]:
        if self.lockdown is not None:
            self.lockdown.hold(shape, raw, row)
        return row

    async def release_held(self) -> None:
        """Decide lockdown for the rows this call projected (the runtime calls it after the
        handler): trusted authors' text comes back, the rest stays withheld."""
        if self.lockdown is not None:
            await self.lockdown.release(self)

    def version(self, shape: str, raw: Mapping[str, Any]) -> str:
        """The shape's declared content version of a raw GitHub object."""
        return self.projector.version(shape, raw)

    def note_rate_limit(self, remaining: int, limit: int) -> None:
        self.rate_limit = {"remaining": remaining, "limit": limit}
