"""The batch recipe (`declared.Batch`): one change applied to many items, item by item, each
through the server's own single-item tool.

Each item is a call of `each` with the batch's `arguments` plus the item, so it gets exactly that
tool's validation, rules, reads, version check, partial update, settle after a lost answer and
error envelope: the batch adds no write path of its own. Items come from a list parameter, or
from a listing tool walked to its end (`BatchSource`: the caller passes its filters in one object
parameter); they run in ascending order, at most `max_items` per call, and `next_cursor` resumes
after the last one handled (a listing is walked again, so items a change took out of it are
simply no longer there).

Each item answers `changed` (its changed_fields are not empty), `unchanged`, or `error` with the
single tool's envelope; a failure does not stop the others. A changed item's row also shows the
fields `shows` names as each's answer has them (the issue as the change left it: no read-back),
and, with `comment`, the id of the one comment the call posted on it (through the single-item
comment tool, its idempotency key derived from the call's key, or the call, and the item: a
repeat never posts it twice) or the error that comment met. `dry_run` runs every item's reads
and checks but no write (`ToolContext.dry_run`: a planning tool answers what it would change,
and ctx.call refuses any write it would still send).

Pacing, as GitHub's best practices ask for bursts of writes: one item at a time, each with one
request in flight (`host.run_tool`), and write requests started `write_interval_s` apart, per
token: every batch of one caller shares its pace (engine/pacing.py). A rate
limit (primary or secondary) is waited out when GitHub's wait is at most `max_wait_s`, and the
item retried (a refused request wrote nothing; a partly applied update finishes on the retry);
a longer wait stops the batch: the answer lists what was done, names the stop, and its
next_cursor starts at the item that was refused.

A credential GitHub refuses (missing, invalid, short of a scope) fails every item alike: on the
first item it is the batch's error, later it stops the batch (`credential`) where it met it.

Cancellation (`notifications/cancelled`, or the client going away: `host.cancelled`) takes
effect between items: the item in flight runs to its end, then the batch stops with
`stopped: {reason: cancelled}` and what was done; with an idempotency key that answer is stored,
so a repeat of the call with the key says what was done (a request the SDK itself cancelled is
never answered; over stateless HTTP a cancelled call still answers, if its client is there).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.core.declared import Batch, BatchComment, BatchSource
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.model import Handler
from ghmcp_runtime.core.projection import walk
from ghmcp_runtime.core.refs import Scope, render
from ghmcp_runtime.core.versioning import canonical_json
from ghmcp_runtime.engine.paging import cursor_binding, open_state, without
from ghmcp_runtime.engine.runner import CREDENTIAL_CODES, confirm_or_refuse, prepare, resolve_args

T = TypeVar("T")
OUTCOMES = ("changed", "unchanged", "error")
RATE_LIMITED = "rate_limited"
RETRIES = 3  # rate-limit waits per item before the batch stops
SOURCE_PAGES = 40  # pages of a listing walked for the items (its own row cap comes first)


def batch(spec: Batch) -> Handler:
    """The tool handler of a batch declaration."""

    async def handler(ctx: ToolContext, args: Any) -> dict[str, Any]:
        return await _Batch(ctx, spec, prepare(spec, args), dict(args)).run()

    return handler


@dataclass(slots=True)
class _Batch:
    ctx: ToolContext
    spec: Batch
    args: dict[str, Any]  # defaults and transforms applied; names resolved in run()
    given: dict[str, Any]  # as sent: what the cursor binds and the key's fingerprint covers
    rows: list[dict[str, Any]] = field(default_factory=list)
    stopped: dict[str, Any] | None = None
    resume: int | None = None  # index of the first item not handled, when the batch stopped

    @property
    def listed(self) -> bool:
        """Items come from the list parameter (else from the listing)."""
        return self.spec.items is not None and self.spec.items in self.args

    @property
    def dry(self) -> bool:
        return bool(self.spec.dry_run and self.args.get(self.spec.dry_run))

    async def run(self) -> dict[str, Any]:
        for paired in self.spec.zip:
            if self.listed and paired in self.args and len(self.args[paired]) != len(self.args[str(self.spec.items)]):
                raise ToolError("invalid_field", f"{paired} must hold one value per item of {self.spec.items}, "
                                "in the same order; nothing was changed.",
                                details={"field": paired, "reason": f"not one value per item of {self.spec.items}"})
            if self.listed and paired in self.args:
                _once_each(self.args[str(self.spec.items)], str(self.spec.items), paired)
        comment = self.spec.comment
        if comment is not None and self.args.get(comment.param) is not None and self.ctx.host is not None \
                and not self.ctx.host.offers(comment.tool):
            raise ToolError("invalid_field", f"{comment.param} is posted through {comment.tool}, which this "
                            "server's surface does not offer; nothing was changed.",
                            details={"field": comment.param, "reason": f"{comment.tool} is not on this surface"})
        if self.spec.resolve:  # once for every item (a milestone title, say)
            self.args = await resolve_args(self.ctx, self.spec.resolve, self.args)
        name = self.spec.key
        key = self.given.get(name) if name else None
        if name is None or key is None or self.dry:  # a dry run writes nothing, so it takes no key
            return await _between_items(self.work, self.ctx.cancelled)
        scope = (self.ctx.tool.name, *(str(self.given.get(p, "")) for p in self.spec.scope))
        fingerprint = hashlib.sha256(canonical_json(without(self.given, name))).hexdigest()

        async def keyed(stop: anyio.Event) -> dict[str, Any]:
            result: dict[str, Any] = await self.ctx.idempotent(
                str(key), scope=scope, fingerprint=fingerprint, run=lambda: self.work(stop))
            return result

        return await _between_items(keyed, self.ctx.cancelled)

    async def work(self, stop: anyio.Event) -> dict[str, Any]:
        state = open_state(self.ctx, self.given, self.spec.cursor)
        targets = await self.targets(state)
        items = targets.items
        if self.spec.confirm is not None and not self.dry:
            await confirm_or_refuse(self.ctx, self.spec.confirm, self.args,
                                    count=len(items), items=items)
        for index, item in enumerate(items):
            if stop.is_set():
                self.stop(index, {"reason": "cancelled", "retry_after_ms": None})
                break
            if not await self.one(item, index, stop):
                break
            await self.ctx.progress(index + 1, len(items), f"{self.spec.item} {item}: {self.rows[-1]['outcome']}")
        return self.answer(targets)

    # -- items --------------------------------------------------------------------------------

    async def targets(self, state: Mapping[str, Any]) -> _Targets:
        """This call's items (ascending), whether more exist, and whether the source was cut."""
        if self.listed:
            assert self.spec.items is not None
            listed = sorted(dict.fromkeys(self.args[self.spec.items]))
            start = int(state.get("offset", 0))
            chunk = listed[start:start + self.spec.max_items]
            return _Targets(chunk, start + len(chunk) < len(listed), False, start=start)
        assert self.spec.source is not None
        found, cut = await self.walk(self.spec.source)
        after = state.get("after")
        rest = sorted(i for i in found if after is None or i > after)
        return _Targets(rest[:self.spec.max_items], len(rest) > self.spec.max_items, cut, after=after)

    async def walk(self, source: BatchSource) -> tuple[set[Any], bool]:
        """Every item the listing finds, following its cursor; whether it stopped at its cap."""
        filters = dict(self.args.get(source.param) or {})
        fixed = render(dict(source.fixed), Scope(self.args, {}, {}))
        found: set[Any] = set()
        cursor: str | None = None
        for _ in range(SOURCE_PAGES):
            try:
                page = await self.ctx.run_tool(source.tool, {**filters, **fixed, **({"cursor": cursor} if cursor else {})})
            except ToolError as err:
                raise _as_param(err, source.param, fixed) from None
            found |= {row[source.item_field] for row in page.get(source.rows, [])}
            cursor = page.get("next_cursor") if page.get("has_more") else None
            if cursor is None:
                return found, bool(page.get("truncated"))
        return found, True

    async def one(self, item: Any, index: int, stop: anyio.Event) -> bool:
        """Handle one item; False when the batch must stop before it (a long rate limit)."""
        args = {**render(dict(self.spec.arguments), Scope(self.args, {}, {})), self.spec.item: item}
        for name, param in self.spec.zip.items():
            if name in self.args and self.listed:
                args[param] = self.args[name][self.position(item)]
        earlier: list[str] = []  # what the item's earlier attempts applied: its row names them too
        for attempt in range(RETRIES + 1):
            try:
                result = await self.ctx.run_tool(self.spec.each, args, dry_run=self.dry, paced=True)
            except ToolError as err:
                if err.code in CREDENTIAL_CODES:  # every item would meet it: stop here
                    if not self.rows and not earlier:
                        raise
                    if earlier:
                        self.rows.append(self.row(item, error=err, earlier=earlier))
                    self.stop(index, {"reason": "credential", "retry_after_ms": None})
                    return False
                wait = _rate_limit_wait(err, self.ctx.forge.secondary_limit_wait_s)
                if wait is None:
                    self.rows.append(self.row(item, error=err, earlier=earlier))
                    return True
                if wait > self.max_wait_ms or attempt == RETRIES:
                    self.rows.append(self.row(item, error=err, earlier=earlier))
                    self.stop(index, {"reason": RATE_LIMITED, "retry_after_ms": wait})
                    return False
                earlier = _union(earlier, (err.details or {}).get("applied_fields") or [])
                args.update(err.resume)  # e.g. the version its own writes left
                if await _wait(wait / 1000, stop):
                    if earlier:
                        self.rows.append(self.row(item, error=err, earlier=earlier))
                    self.stop(index, {"reason": "cancelled", "retry_after_ms": None})
                    return False
                continue
            row = self.row(item, result=result, earlier=earlier)
            self.rows.append(row)
            comment = self.spec.comment
            if comment is not None and row["outcome"] == "changed" and not self.dry \
                    and self.args.get(comment.param) is not None:
                return await self.comment_on(comment, item, index, row, stop)
            return True
        return True  # unreachable: the last attempt answers or stops

    async def comment_on(self, comment: BatchComment, item: Any, index: int, row: dict[str, Any],
                         stop: anyio.Event) -> bool:
        """Post the call's comment on an item it changed; the row gets its id, or the error it
        met. A rate limit is waited out as an item's is; a lost answer is repeated under the same
        key, which finds the comment instead of posting it again. False when the batch stops
        after this item (a long rate limit, a refused token, a cancelled call)."""
        args = {**render(dict(comment.arguments), Scope(self.args, {}, {})), self.spec.item: item,
                comment.body: self.args[comment.param]}
        if comment.key is not None:
            args[comment.key] = self.comment_key(item)
        for attempt in range(RETRIES + 1):
            try:
                answer = await self.ctx.run_tool(comment.tool, args, paced=True)
            except ToolError as err:
                limited = _rate_limit_wait(err, self.ctx.forge.secondary_limit_wait_s)
                wait = limited if limited is not None else (
                    err.retry_after_ms or 1000 if err.temporary and comment.key is not None else None)
                if wait is not None and wait <= self.max_wait_ms and attempt < RETRIES \
                        and not await _wait(wait / 1000, stop):
                    continue
                row["comment_error"] = self.envelope(err)
                if err.code in CREDENTIAL_CODES:
                    self.stop(index + 1, {"reason": "credential", "retry_after_ms": None})
                elif stop.is_set():
                    self.stop(index + 1, {"reason": "cancelled", "retry_after_ms": None})
                elif limited is not None:
                    self.stop(index + 1, {"reason": RATE_LIMITED, "retry_after_ms": limited})
                return self.stopped is None
            row["comment_id"] = walk(answer, comment.id)
            return True
        return True  # unreachable: the last attempt answers or stops

    def comment_key(self, item: Any) -> str:
        """The comment's idempotency key on `item`: from the call's key (a repeat of the call
        posts nothing twice) or, without one, from this call (its retries post nothing twice)."""
        base = self.given.get(self.spec.key) if self.spec.key else None
        seed = f"{base if base is not None else self.ctx.request_id}\n{item}"
        return "c" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:40]

    def envelope(self, err: ToolError) -> dict[str, Any]:
        """An item's error as its row carries it (the batch's answer carries the surface's
        fingerprint)."""
        return {k: v for k, v in err.envelope(request_id=self.ctx.request_id, fingerprint="").items()
                if k != "fingerprint"}

    @property
    def max_wait_ms(self) -> float:
        return self.ctx.host.max_wait_s * 1000 if self.ctx.host is not None else 0.0

    def position(self, item: Any) -> int:
        assert self.spec.items is not None
        return list(self.args[self.spec.items]).index(item)

    def row(self, item: Any, *, result: Mapping[str, Any] | None = None, error: ToolError | None = None,
            earlier: list[str]) -> dict[str, Any]:
        """The item's row: what its last attempt answered, with what earlier attempts applied."""
        row: dict[str, Any] = {self.spec.item: item}
        if error is not None:
            row["outcome"] = "error"
            row["error"] = self.envelope(error)
            if earlier:
                row["error"] = _with_earlier(row["error"], earlier)
            return row
        assert result is not None
        changed = _union(earlier, result.get(self.spec.changed, []))
        row["outcome"] = "changed" if changed else "unchanged"
        row[self.spec.changed] = changed
        if self.spec.ignored and result.get(self.spec.ignored):
            row[self.spec.ignored] = list(result[self.spec.ignored])
        shown = result.get(self.spec.shows_from) if self.spec.shows_from else None
        if changed and not self.dry and isinstance(shown, Mapping):  # as the change left it
            row.update({name: shown[name] for name in self.spec.shows if name in shown})
        return row

    def stop(self, index: int, why: dict[str, Any]) -> None:
        self.stopped, self.resume = why, index

    # -- the answer ---------------------------------------------------------------------------

    def answer(self, targets: _Targets) -> dict[str, Any]:
        out: dict[str, Any] = {
            "items": self.rows,
            "summary": {o: sum(1 for r in self.rows if r["outcome"] == o) for o in OUTCOMES},
        }
        comment = self.spec.comment
        if comment is not None and self.args.get(comment.param) is not None and not self.dry:
            out["summary"]["commented"] = sum(1 for r in self.rows if "comment_id" in r)
        if self.stopped is not None:
            out["stopped"] = self.stopped
        resume = self.resume if self.stopped is not None else len(targets.items) if targets.more else None
        out["has_more"] = resume is not None
        if resume is not None:
            out["next_cursor"] = self.ctx.mint_cursor(
                self.resume_state(targets, resume), bound_to=cursor_binding(self.given, self.spec.cursor))
        if targets.cut:
            out["truncated"] = True
        if self.dry:
            out["dry_run"] = True
        return out

    def resume_state(self, targets: _Targets, index: int) -> dict[str, Any]:
        """Where a next call starts: at this call's item `index`."""
        if self.listed:
            return {"offset": targets.start + index}
        return {"after": targets.items[index - 1] if index else targets.after}


@dataclass(frozen=True, slots=True)
class _Targets:
    items: list[Any]
    more: bool  # items beyond this call's max_items exist
    cut: bool  # the listing stopped at its own row cap: some matching items are unreachable
    start: int = 0  # an explicit list: the offset of items[0]
    after: Any = None  # a listing: the last item an earlier call handled


def _once_each(items: Sequence[Any], name: str, paired: str) -> None:
    """Each item once when values are paired with them: a repeated item would get two values."""
    repeated = sorted({i for i in items if items.count(i) > 1})
    if repeated:
        raise ToolError("invalid_field", f"{name} lists {', '.join(map(str, repeated))} more than once; with "
                        f"{paired} each goes once, with its own value. Nothing was changed.",
                        details={"field": name, "reason": f"repeated items with {paired}"})


def _union(first: Sequence[str], then: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *then]))


def _with_earlier(envelope: dict[str, Any], earlier: list[str]) -> dict[str, Any]:
    """An item's last error, also naming what its earlier attempts applied."""
    details = dict(envelope.get("details") or {})
    details["applied_fields"] = _union(earlier, details.get("applied_fields") or [])
    message = f"{envelope['message']} An earlier attempt of this item applied: {', '.join(earlier)}."
    return {**envelope, "message": message, "details": details}


def _rate_limit_wait(err: ToolError, unsaid_s: int) -> int | None:
    """Milliseconds the forge asks to wait before the refused request may be repeated (`unsaid_s`
    when it does not say: the profile's `secondary_limit_wait_s`, GitHub's "at least a minute"),
    or None when the failure is not a rate limit."""
    if err.code != RATE_LIMITED:
        return None
    return err.retry_after_ms if err.retry_after_ms is not None else unsaid_s * 1000


async def _wait(seconds: float, stop: anyio.Event) -> bool:
    """Sleep `seconds` unless `stop` is set first; True when it was."""
    with anyio.move_on_after(seconds):
        await stop.wait()
    return stop.is_set()


def _as_param(err: ToolError, param: str, fixed: Mapping[str, Any]) -> ToolError:
    """A listing's refusal of the caller's filters, located in the batch's filter parameter."""
    where = (err.details or {}).get("field")
    if err.code == "invalid_field" and isinstance(where, str) and where not in fixed:
        err.details = {**(err.details or {}), "field": f"{param}.{where}"}
    err.repair = None  # it would call the listing, not this tool
    return err


async def _between_items(work: Callable[[anyio.Event], Awaitable[T]],
                         cancelled: Callable[[], Awaitable[None]]) -> T:
    """Run `work(stop)` shielded from cancellation: a cancelled request, or `cancelled()`
    returning (the client cancelled or went away), sets `stop` instead, and `work` ends at its
    next item boundary (its answer stored, if it keeps one), then any cancellation goes on."""
    stop = anyio.Event()
    box: list[T] = []
    failure: list[BaseException] = []

    async def shielded() -> None:
        with anyio.CancelScope(shield=True):
            try:
                box.append(await work(stop))
            except Exception as exc:  # re-raised below, unwrapped
                failure.append(exc)

    async def watch() -> None:
        try:
            await cancelled()
        finally:
            stop.set()

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        await shielded()
        group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return box[0]

