"""Run a `Declaration`: transforms, steps in dependency waves, recipes, error mapping, outputs.

Steps whose `after` lists are satisfied run together (ctx.call keeps at most ctx.slots upstream
requests of one call in flight: GitHub's secondary limits punish bursts). The generator makes
every write wait for all earlier steps and every later step wait for the write, so writes never
overlap or reorder.
When several steps of one wave fail, the earliest declared failure is reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol
from urllib.parse import urlencode

from ghmcp_runtime.calls.context import READ_METHODS, ToolContext, UpstreamResponse
from ghmcp_runtime.calls.error_rules import build_error, matches, repair_of
from ghmcp_runtime.core.concurrent import gather
from ghmcp_runtime.core.declared import (
    Absent,
    Compare,
    Completion,
    Confirm,
    Declaration,
    ErrorSpec,
    Guard,
    NamesExist,
    Output,
    Paginate,
    Resolve,
    Settle,
    Step,
    Stored,
    UpdatePlan,
    Verify,
)
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError
from ghmcp_runtime.core.model import CompletionHandler, Handler
from ghmcp_runtime.core.projection import rows_in
from ghmcp_runtime.core.projection import walk as walk_path
from ghmcp_runtime.core.refs import MISSING, Scope, joined, references, render, text_of, walk
from ghmcp_runtime.core.transforms import TRANSFORMS, Refused, normalizer
from ghmcp_runtime.core.versioning import canonical_json
from ghmcp_runtime.engine.catalog import require_names
from ghmcp_runtime.engine.confirm import digest as confirm_digest
from ghmcp_runtime.engine.outcomes import (
    RESPONSE,
    Outcome,
    answered,
    holds,
    response_scope,
    skipped,
)
from ghmcp_runtime.engine.paging import next_cursor, open_page, without
from ghmcp_runtime.engine.recovery import Listing, find_created, learn_login
from ghmcp_runtime.engine.resolve import Found, find_rows
from ghmcp_runtime.engine.settle import IDENTITY, Verdict, judge, same_resource, shows, shows_all
from ghmcp_runtime.engine.stored import altered
from ghmcp_runtime.engine.stored import outputs as stored_outputs
from ghmcp_runtime.stores.idempotency import History

CREDENTIAL_CODES = frozenset({"missing_credential", "invalid_credential", "insufficient_scope"})
INCOMPLETE = "The search stopped before it had looked at every item; retry shortly."


def declared(decl: Declaration) -> Handler:
    """The tool handler for a declaration."""

    async def handler(ctx: ToolContext, args: Any) -> dict[str, Any]:
        return await _Call(ctx, decl, prepare(decl, args), dict(args)).run()

    return handler


def resolving(handler: Handler, specs: tuple[Resolve, ...]) -> Handler:
    """A hook tool's handler that gets its name-or-id parameters resolved."""

    async def resolved(ctx: ToolContext, args: Any) -> Any:
        return await handler(ctx, await resolve_args(ctx, specs, args))

    return resolved


async def resolve_args(ctx: ToolContext, specs: tuple[Resolve, ...],
                       args: Mapping[str, Any]) -> dict[str, Any]:
    """`args` with every name a `Resolve` parameter holds replaced by what it names: one walk of
    each listing (specs reading the same rows share it), the walks and id checks concurrent."""
    out = dict(args)
    scope = Scope(out, {}, {})
    groups: dict[str, tuple[Resolve, dict[str, Any], dict[str, Any], list[Resolve]]] = {}
    checks: list[Callable[[], Awaitable[Any]]] = []
    for spec in specs:
        if spec.check is not None and _is_id(out.get(spec.param)):
            checks.append(partial(check_id, ctx, spec, out))
        if not _names(spec, out.get(spec.param)):
            continue
        path, query = render(dict(spec.path), scope), render(dict(spec.query), scope)
        key = repr((spec.operation.operation_id, sorted(path.items()), sorted(query.items()),
                    spec.match, spec.value, spec.pages))
        groups.setdefault(key, (spec, path, query, []))[3].append(spec)
    finders: list[Callable[[], Awaitable[Any]]] = [
        partial(find_rows, ctx, first, path=path, query=query,
                wanted=list(dict.fromkeys(n for s in members for n in _names(s, out.get(s.param)))))
        for first, path, query, members in groups.values()]
    calls = [*checks, *finders]
    found: list[Any] = await gather(calls, limit=len(calls)) if calls else []
    for (_, _, _, members), rows in zip(groups.values(), found[len(checks):], strict=True):
        _replace(ctx, members, out, rows)
    return out


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _names(spec: Resolve, value: Any) -> list[str]:
    """The names `value` holds: the string, or each string of a list (`each`)."""
    if spec.each:
        return [v for v in value if isinstance(v, str) and v not in spec.keep] \
            if isinstance(value, list) else []
    return [value] if isinstance(value, str) and value not in spec.keep else []


def _replace(ctx: ToolContext, specs: Sequence[Resolve], out: dict[str, Any], found: Found) -> None:
    """Names by what they name in `out`; the first spec with a miss raises its `unknown`, naming
    every name missing from its listing (a list's by index: names are never echoed)."""
    missing: list[tuple[Resolve, str]] = []
    for spec in specs:
        value = out[spec.param]
        if spec.each:
            missing += [(spec, f"{spec.param}[{i}]") for i, v in enumerate(value)
                        if v in _names(spec, [v]) and v not in found.values]
            out[spec.param] = [found.values.get(v, v) if isinstance(v, str) else v for v in value]
        elif value not in found.values:
            missing.append((spec, spec.param))
        else:
            out[spec.param] = found.values[value]
    if not missing:
        return
    first = missing[0][0]
    details: dict[str, Any] = {"field": first.param, "choices": found.choices}
    if any(s.each for s, _ in missing):
        fields = list(dict.fromkeys(s.param for s, _ in missing))
        if len(fields) > 1:
            details = {"fields": fields, "choices": found.choices}
        details["unknown"] = [where for _, where in missing]
        details["count"] = len(missing)
    error = replace(first.unknown, field=None) if "fields" in details else \
        first.unknown if first.unknown.field else replace(first.unknown, field=first.param)
    err = build_error(error, Scope(out, {}, {}), None, details)
    if not found.complete:
        err.message += f" Only the first {first.pages * ctx.forge.max_page_size} were compared."
    raise err


async def check_id(ctx: ToolContext, spec: Resolve, args: Mapping[str, Any]) -> None:
    """An id the forge would refuse is refused before anything is written (`Resolve.check`)."""
    assert spec.check is not None and spec.check_unknown is not None
    scope = Scope(dict(args), {}, {})
    try:
        await ctx.call(spec.check, path=render(dict(spec.check_path), scope))
    except ToolError as err:
        if err.code != spec.check.not_found:
            raise
        unknown = spec.check_unknown
        raise build_error(unknown if unknown.field else replace(unknown, field=spec.param), scope) from None


def resolving_requests(specs: Sequence[Resolve], args: Mapping[str, Any]) -> int:
    """How many reads resolving `args` starts (a listing walked, an id checked)."""
    walks = {(s.operation.operation_id, repr(dict(s.path)), repr(dict(s.query)), s.match, s.value)
             for s in specs if _names(s, args.get(s.param))}
    return len(walks) + sum(1 for s in specs if s.check is not None and _is_id(args.get(s.param)))


def reads_of(step: Step) -> set[str]:
    """The names a step's request reads: template references, conditions and checked names."""
    refs = references([dict(step.path), dict(step.query), dict(step.body)])
    out = {r.path[0] for r in refs} | {c.param for c in step.when if c.param}
    if step.names_exist is not None:
        out |= set(step.names_exist.params)
    if step.absent is not None:
        out |= {r.path[0] for r in references(dict(step.absent.match))}
    if step.guard is not None and step.guard.when is not None:
        out.add(step.guard.when.param)
    return out


class Prepared(Protocol):
    """What `prepare` reads: a Declaration or a Batch."""

    @property
    def defaults(self) -> Mapping[str, Any]: ...

    @property
    def transforms(self) -> Mapping[str, str]: ...


def prepare(decl: Prepared, args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments with defaults filled in and transforms applied; a refusal is invalid_field."""
    out = {**decl.defaults, **args}
    for name, transform in decl.transforms.items():
        if name in args and args[name] is not None:
            try:
                out[name] = TRANSFORMS[transform](args[name])
            except Refused as refused:
                raise ToolError("invalid_field", f"Invalid argument `{name}`: {refused.reason}.",
                                details={"field": name, "reason": refused.reason}) from None
    return out


async def confirm_or_refuse(ctx: ToolContext, spec: Confirm, args: Mapping[str, Any], *,
                            count: int | None = None, items: Sequence[Any] = ()) -> None:
    """Ask the user before a destructive call (ghmcp_runtime.engine.confirm), when `spec` applies: its
    conditions hold, and a batch changes more than `spec.over` items. A dry run never asks."""
    if ctx.dry_run or not all(holds(c, args) for c in spec.when):
        return
    if count is not None and count <= spec.over:
        return
    shown = ", ".join(f"#{i}" for i in items)
    message = render(spec.message, Scope(dict(args), {}, {"count": count, "items": shown}))
    await ctx.confirm(str(message), confirm_digest(ctx.tool.name, ctx.arguments, items))


@dataclass(slots=True)
class _Page:
    page: int
    has_more: bool
    size: int


@dataclass(slots=True)
class _Call:
    ctx: ToolContext
    decl: Declaration
    args: dict[str, Any]  # with defaults and transforms: what steps and outputs read
    given: dict[str, Any]  # as the caller sent them: what cursors bind and repairs repeat
    results: dict[str, Any] = field(default_factory=dict)
    pages: dict[str, _Page] = field(default_factory=dict)
    changed: dict[str, list[str]] = field(default_factory=dict)
    ignored: dict[str, list[str]] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # how each step ended
    asked: dict[str, dict[str, Any]] = field(default_factory=dict)  # a `stored` step's whole body
    sent_before: int = 0  # ctx.requests_sent when the steps began
    reads: int = 0  # reads started (one request each, unless one needed more)

    def scope(self, **extra: Any) -> Scope:
        return Scope(self.args, self.results, {RESPONSE: response_scope(self.outcomes), **extra})

    async def run(self) -> dict[str, Any]:
        if self.decl.confirm is not None:
            await confirm_or_refuse(self.ctx, self.decl.confirm, self.args)
        idem = self.decl.idempotency
        key = self.given.get(idem.key) if idem is not None else None
        if idem is None:
            return await self.run_steps()
        recover = idem.recover
        scope = (self.ctx.tool.name, *(str(self.args.get(p, "")).lower() for p in idem.scope))
        fingerprint = hashlib.sha256(canonical_json(without(self.given, idem.key))).hexdigest()
        result: dict[str, Any] = await self.ctx.idempotent(
            None if key is None else str(key), scope=scope, fingerprint=fingerprint,
            run=self.run_steps, recover=self.recover if recover is not None else None,
            claimed=self.written if recover is not None else None,
            repair=repair_of(ErrorSpec(repair=recover.repair), self.scope()) if recover else None)
        return result

    def written(self) -> str | None:
        """The GitHub id of the item the keyed write answered with (claimed for this call), and
        its author learned as the caller's login (GET /user may refuse to say)."""
        idem = self.decl.idempotency
        assert idem is not None and idem.recover is not None
        row = self.results.get(idem.write)
        if not isinstance(row, Mapping) or row.get("id") is None:
            return None
        learn_login(self.ctx, walk(row, (idem.recover.author_field, "login")))
        return str(row["id"])

    async def recover(self, history: History) -> dict[str, Any] | None:
        """The outputs of a write whose response was lost, if its row can be found. The reads
        before the write run first, so the row is compared with what the write sent."""
        idem = self.decl.idempotency
        assert idem is not None and idem.recover is not None
        r, scope = idem.recover, self.scope()
        listing = Listing(r.operation, render(dict(r.path), scope), render(dict(r.query), scope),
                          newest_first=r.newest_first, author_param=r.author_param,
                          author_field=r.author_field, since_param=r.since_param,
                          created_field=r.created_field)
        match = {k: None if v is MISSING else v for k, v in
                 ((k, render(v, scope)) for k, v in r.match.items())}
        found = await find_created(self.ctx, listing, match=match, history=history,
                                   repair=repair_of(ErrorSpec(repair=r.repair), scope))
        if found is None:
            return None
        write = self.decl.step(idem.write)
        if write.verify is not None or write.stored is not None:
            await self.run_steps(until=write.id)  # so `sent` is what the write sent
        sent = render(dict(write.body), self.scope())
        if write.verify is not None:
            self.check_applied(write.verify, sent, found)
        if write.stored is not None:
            self.asked[write.id] = sent
        self.results[idem.write] = found
        return self.outputs()

    async def run_steps(self, until: str | None = None) -> dict[str, Any]:
        """The steps in waves; with `until`, only those before that step (none of them a write).
        Name-or-id parameters are resolved beside the first wave's steps that do not read them."""
        self.sent_before = self.ctx.requests_sent
        self.reads = resolving_requests(self.decl.resolve, self.args)
        resolved = {r.param for r in self.decl.resolve}
        pending = [s for s in self.decl.steps if until is None or until not in {s.id, *s.after}]
        finished: set[str] = set()
        resolving = bool(self.decl.resolve)
        while pending:
            wave = [s for s in pending if set(s.after) <= finished]
            if resolving:
                wave = [s for s in wave if not reads_of(s) & resolved]
            elif not wave:
                raise RuntimeError("declared steps wait on each other")  # the generator prevents it
            # ctx.call bounds the requests in flight; the earliest declared failure is raised
            calls = [partial(self.step, step) for step in wave]
            await gather([self.resolve, *calls] if resolving else calls, limit=len(calls) + resolving)
            resolving = False
            finished |= {s.id for s in wave}
            pending = [s for s in pending if s.id not in finished]
        return self.outputs()

    async def resolve(self) -> None:
        self.args = await resolve_args(self.ctx, self.decl.resolve, self.args)

    # -- one step ---------------------------------------------------------------------------

    async def step(self, step: Step) -> None:
        if not all(holds(c, self.args, self.outcomes) for c in step.when):
            return
        guard = step.guard if step.guard and (step.guard.when is None
                                              or holds(step.guard.when, self.args)) else None
        scope = self.scope()
        try:
            path = render(dict(step.path), scope)
            query = render({k: v for k, v in step.query.items() if k not in step.join}, scope)
            for key, separator in step.join.items():
                value = joined(step.query[key], scope, separator)
                if value is not MISSING:
                    query[key] = value
            body = render(dict(step.body), scope)
        except Refused as refused:
            raise self.refused(step, guard, refused) from None
        body.update({k: v for k, v in step.null_as.items() if k in body and body[k] is None})
        if step.stored is not None:
            self.asked[step.id] = body
        if step.update is not None:
            await self.run_update(step, step.update)
            return
        if step.compare is not None:
            body = self.only_changed(step.compare, body)
            if not body:
                return
        if self.ctx.dry_run and step.operation.method not in READ_METHODS:
            return  # planned: compare named what would change (the generator allows no other write)
        if step.operation.method in READ_METHODS:
            self.reads += 1  # each read is one request unless it needs more (see run_update)
        if step.names_exist is not None:
            await self.require_names(step, step.names_exist, path, query)
            return
        if step.absent is not None:
            if await self.matching_rows(step, step.absent, path, query):
                raise build_error(step.absent.refuse, self.scope())
            return
        if step.paginate is not None:
            page, size = self.page_of(step.paginate)
            query = {**query, **self.ctx.forge.page_query(page, size)}
        try:
            resp = await self.ctx.call(step.operation, path=path, query=query or None,
                                       body=body or None)
        except ToolError as err:
            settled = await self.settled(step, body, err)
            if settled is not MISSING:  # a re-read showed the write's effect: it succeeded
                self.results[step.id] = settled
                success = step.operation.success_status
                self.outcomes[step.id] = answered(success[0] if success else 200, {}, settled)
                return
            mapped = self.on_error(step, err)
            if mapped is None:
                self.outcomes[step.id] = skipped(getattr(err, "status", None), err.code)
                return
            if guard is not None and guard.unknown is not None:
                raise self.uncounted(guard, mapped) from None
            raise mapped from None
        data = resp.data
        self.outcomes[step.id] = answered(resp.status, resp.headers, data)
        for reject in step.reject:
            if walk(data, tuple(reject.present.split("."))) not in (MISSING, None):
                seen = Scope(self.args, {**self.results, step.id: data}, self.scope().extra)
                raise build_error(reject.error, seen)
        if step.paginate is not None:
            self.pages[step.id] = _Page(page, self.more(step, resp, page, size), size)
        self.results[step.id] = data
        if guard is not None:
            self.check_guard(guard, resp)
        if step.verify is not None:
            self.check_applied(step.verify, body, data)

    async def require_names(self, step: Step, spec: NamesExist, path: dict[str, Any],
                            query: dict[str, Any]) -> None:
        names = {p: list(self.args[p]) for p in spec.params if self.args.get(p)}
        if not names:
            self.reads -= 1  # nothing to look up: no request
            return
        exact = await require_names(
            self.ctx, catalog=step.operation, lookup=spec.lookup, path=path, names=names,
            repair=repair_of(ErrorSpec(repair=spec.repair), self.scope()), code=spec.code,
            kind=spec.kind, key=spec.key, param=spec.lookup_param, absent=spec.absent, query=query)
        self.results[step.id] = exact

    async def run_update(self, step: Step, plan: UpdatePlan) -> None:
        """The update plan (ghmcp_runtime.engine.update_plan) over the resource `against` read.
        A read before it that needed more than one request widened the window between the
        resource's read (its version) and the writes: the resource is then read again."""
        # imported here: only a server with an update plan loads it (and writes.py) at all
        from ghmcp_runtime.engine.update_plan import apply as apply_update

        read = self.decl.step(plan.against)
        if self.ctx.requests_sent - self.sent_before > self.reads:
            await self.step(read)
        args = dict(self.args)
        for source in plan.exact:
            args.update(self.results.get(source) or {})
        done = await apply_update(self.ctx, step, args, dict(self.results[read.id]),
                                  reread=partial(self.read_again, read), results=self.results)
        self.results[step.id] = done.after
        self.changed[plan.changed] = done.changed
        self.ignored[plan.ignored] = done.ignored

    async def read_again(self, read: Step) -> dict[str, Any]:
        scope = self.scope()
        resp = await self.ctx.call(read.operation, path=render(dict(read.path), scope),
                                   query=render(dict(read.query), scope) or None)
        return dict(resp.data)

    def check_applied(self, verify: Verify, sent: Mapping[str, Any], data: Any) -> None:
        ignored = self.ignored.setdefault(verify.ignored, [])
        for key, path in verify.fields.items():
            if key not in sent:
                continue
            norm = normalizer(verify.normalize.get(key))
            shown = walk_path(data, path)
            if _comparable(sent[key], norm) != _comparable(shown, norm):
                ignored.append(verify.names.get(key, key))

    def altered(self, step: Step, spec: Stored) -> list[str]:
        """The text parameters of `step` GitHub holds otherwise than sent (see declared.Stored)."""
        sent = self.asked.get(step.id)
        shown = self.results.get(step.id)
        if shown is None and step.compare is not None:
            shown = self.results.get(step.compare.against)  # nothing differed: nothing was sent
        return [] if sent is None or shown is None else altered(sent, shown, spec.fields, spec.names)

    async def matching_rows(self, step: Step, absent: Absent, path: dict[str, Any],
                            query: dict[str, Any]) -> list[Any]:
        """The rows of `step`'s listing (every page, at most `absent.pages`) equal to `match`, but
        for the resource itself (`other_than`)."""
        wanted = render(dict(absent.match), self.scope())
        itself = render(dict(absent.other_than), self.scope())
        size = self.ctx.forge.max_page_size
        found: list[Any] = []
        for page in range(1, absent.pages + 1):
            resp = await self.ctx.call(step.operation, path=path,
                                       query={**query, **self.ctx.forge.page_query(page, size)})
            rows = resp.data if isinstance(resp.data, list) else []
            found += [r for r in rows if isinstance(r, Mapping)
                      and all(r.get(k) == v for k, v in wanted.items())
                      and not (itself and all(r.get(k) == v for k, v in itself.items()))]
            if not self.ctx.forge.has_more(resp, page, size):
                break
        return found

    def only_changed(self, compare: Compare, body: dict[str, Any]) -> dict[str, Any]:
        current = self.results.get(compare.against)
        changed = self.changed.setdefault(compare.changed, [])
        out: dict[str, Any] = {}
        for key, value in body.items():
            if key in compare.carry or shows(compare, key, value, current):
                continue
            out[key] = value
            changed.append(compare.names.get(key, key))
        if out:  # what the forge would reset unless sent again
            out.update({key: body[key] for key in compare.carry if key in body})
        return out

    # -- settle (see declared.Settle) -------------------------------------------------------

    async def settled(self, step: Step, sent: dict[str, Any], err: ToolError) -> Any:
        """GitHub's body when a re-read settles the failed `step`; MISSING when it does not."""
        if isinstance(err, OutcomeUnknown) and step.settle is not None:
            if step.compare is not None:
                compared = {k: v for k, v in sent.items() if k not in step.compare.carry}
                return await self.settle_lost(step.settle, step.compare, compared, err)
            assert step.settle.against is not None  # the generator requires it without compare
            listing = self.decl.step(step.settle.against)
            if listing.absent is not None:
                return await self.settle_created(listing, listing.absent, err)
            return await self.settle_delete(step.settle, err)
        if err.code == step.operation.not_found:
            return await self.read_moved(step)
        return MISSING

    async def settle_lost(self, settle: Settle, compare: Compare, sent: dict[str, Any],
                          lost: OutcomeUnknown) -> Any:
        read = self.decl.step(compare.against)
        try:
            after = await self.reread(read, settle)
        except (ToolError, Refused):
            return MISSING  # nothing more is known: the lost answer stands
        verdict = judge(compare, sent, self.results.get(read.id), after)
        if verdict is Verdict.NOT_APPLIED:
            lost.not_applied()
        return after if verdict is Verdict.APPLIED else MISSING

    async def settle_created(self, listing: Step, absent: Absent, lost: OutcomeUnknown) -> Any:
        """The row a create made, when the listing that held none like it now holds exactly one."""
        scope = self.scope()
        try:
            rows = await self.matching_rows(listing, absent, render(dict(listing.path), scope),
                                            render(dict(listing.query), scope))
        except (ToolError, Refused):
            return MISSING
        if not rows:
            lost.not_applied()
        return rows[0] if len(rows) == 1 else MISSING

    async def settle_delete(self, settle: Settle, lost: OutcomeUnknown) -> Any:
        """None (the delete is done) when the re-read finds nothing; MISSING when it does not settle."""
        assert settle.against is not None  # the generator requires it on a delete
        read = self.decl.step(settle.against)
        try:
            after = await self.reread(read, settle)
        except ToolError as err:
            if err.code != read.operation.not_found:
                return MISSING
            return await self.gone(settle, self.results.get(read.id), lost)
        except Refused:
            return MISSING
        if same_resource(self.results.get(read.id), after):
            lost.not_applied()
        return MISSING

    async def gone(self, settle: Settle, before: Any, lost: OutcomeUnknown) -> Any:
        """None (the delete is done) when no resource carries the read one's id any more; with a
        row that does, it lives on renamed (not applied); MISSING when the listing cannot tell."""
        if settle.find is None:
            return None  # the read's path names the resource for good (a number)
        ident = walk(before, IDENTITY)
        if ident is MISSING:
            return MISSING
        path = render(dict(settle.find_path), self.scope())
        size = self.ctx.forge.max_page_size
        for page in range(1, settle.pages + 1):
            try:
                resp = await self.ctx.call(settle.find, path=path,
                                           query=self.ctx.forge.page_query(page, size))
            except ToolError:
                return MISSING
            if any(isinstance(row, Mapping) and row.get("id") == ident for row in resp.data or []):
                lost.not_applied("It still exists under another name (renamed meanwhile).",
                                 "renamed since it was read: nothing was deleted")
                return MISSING
            if not self.ctx.forge.has_more(resp, page, size):
                return None
        return MISSING

    async def read_moved(self, read: Step) -> Any:
        """What an earlier call moved away from `read`'s path, when it shows what a write asks."""
        for write in self.decl.steps:
            settle, compare = write.settle, write.compare
            if (settle is None or compare is None or compare.against != read.id
                    or not all(holds(c, self.args, self.outcomes) for c in write.when)):
                continue
            scope = self.scope()
            try:
                base, moved = render(dict(read.path), scope), render(dict(settle.path), scope)
                wanted = {k: v for k, v in render(dict(write.body), scope).items()
                          if k not in compare.carry}
            except Refused:
                continue
            if not wanted or all(base.get(k) == v for k, v in moved.items()):
                continue  # nothing moves the resource (no new name)
            try:
                row = await self.reread(read, settle)
            except ToolError as err:
                if err.code == read.operation.not_found:
                    continue
                raise
            if shows_all(compare, wanted, row):
                return row
        return MISSING

    async def reread(self, read: Step, settle: Settle) -> Any:
        """`read` again, where `settle` says the write leaves the resource."""
        scope = self.scope()
        path = {**render(dict(read.path), scope), **render(dict(settle.path), scope)}
        query = render(dict(read.query), scope)
        resp = await self.ctx.call(read.operation, path=path, query=query or None)
        return resp.data

    def page_of(self, paginate: Paginate) -> tuple[int, int]:
        """(page number, page size): from the cursor, or from URI variables for resources."""
        if paginate.page_param is None:
            assert paginate.cursor is not None
            return open_page(self.ctx, self.given, paginate.cursor), paginate.page_size
        page = _whole(self.given, paginate.page_param, 1, None)
        if paginate.size_param is None:
            return page, paginate.page_size
        return page, _whole(self.given, paginate.size_param, paginate.page_size, paginate.page_size)

    def more(self, step: Step, resp: UpstreamResponse, page: int, size: int) -> bool:
        assert step.paginate is not None
        if step.paginate.style == "total_count":
            total = resp.data.get("total_count", 0) if isinstance(resp.data, Mapping) else 0
            return page * step.paginate.page_size < int(total)
        return self.ctx.forge.has_more(resp, page, size)

    def on_error(self, step: Step, err: ToolError) -> ToolError | None:
        """The mapped error, or None when a rule says the step just produced nothing."""
        for rule in step.on_error:
            if matches(rule.when, err, step.operation.method):
                return None if rule.skip else build_error(rule.error, self.scope(), err)
        return err

    # -- safe delete ------------------------------------------------------------------------

    def refused(self, step: Step, guard: Guard | None, refused: Refused) -> ToolError:
        if guard is not None and guard.unknown is not None:
            details = {"reason": refused.reason}
            if guard.unknown_field:
                details["field"] = guard.unknown_field
            return self.unknown_error(guard.unknown, details)
        return ToolError("invalid_field", f"A value cannot be used here: {refused.reason}.",
                         details={"reason": refused.reason})

    def unknown_error(self, spec: ErrorSpec, details: dict[str, Any]) -> ToolError:
        reason = str(details["reason"])
        message = f"{render(spec.message, self.scope())} {reason[0].upper()}{reason[1:]}."
        return build_error(ErrorSpec(code=spec.code, message=message, repair=spec.repair),
                           self.scope(), None, details)

    def uncounted(self, guard: Guard, err: ToolError) -> ToolError:
        assert guard.unknown is not None
        if err.temporary or err.code in CREDENTIAL_CODES:
            err.message = f"{render(guard.unknown.message, self.scope())} {err.message}"
            return err
        return self.unknown_error(guard.unknown, {"reason": guard.unknown.reason or err.message})

    def check_guard(self, guard: Guard, resp: UpstreamResponse) -> None:
        data = resp.data
        total = 0
        for path in guard.count:
            value = walk(data, tuple(path.split(".")))
            total += int(value) if isinstance(value, int) else 0
        if guard.total:
            listed = self.ctx.forge.total_count(resp)
            if listed is None:
                details = {"reason": f"{self.ctx.forge.display_name}'s answer carried no total count"}
                if guard.unknown_field:
                    details["field"] = guard.unknown_field
                if guard.unknown is None:
                    raise ToolError("upstream_unavailable", details["reason"] + ".", temporary=True,
                                    details=details)
                raise self.unknown_error(guard.unknown, details)
            total += listed
        prefix = render(guard.unknown.message, self.scope()) if guard.unknown else ""
        if total == 0 and guard.incomplete and walk(data, (guard.incomplete,)) is True:
            raise ToolError("upstream_unavailable", f"{prefix} {INCOMPLETE}".strip(), temporary=True,
                            details={"reason": "GitHub search answered with incomplete_results"})
        if total > 0:
            raise build_error(guard.refuse, self.scope(count=total), None, {"count": total})

    # -- outputs ----------------------------------------------------------------------------

    def outputs(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        detail = self.args.get(self.decl.detail, "full") if self.decl.detail else "full"
        for spec in self.decl.output:
            value = self.output(spec, spec.detail or detail)
            if value is not MISSING:
                out[spec.name] = value
        for name, fields in self.ignored.items():
            if fields:
                out[name] = list(fields)
        stored = [(s, s.stored) for s in self.decl.steps if s.stored is not None]
        if stored:
            out.update(stored_outputs([name for s, spec in stored for name in self.altered(s, spec)]))
        for step in self.decl.steps:
            if step.compare is not None:
                out[step.compare.changed] = list(self.changed.get(step.compare.changed, []))
            if step.update is not None:
                out[step.update.changed] = list(self.changed.get(step.update.changed, []))
            if step.paginate is None:
                continue
            state = self.pages.get(step.id)
            if step.paginate.page_param is not None:
                out.update(self.page_links(step.paginate, state))
                continue
            if state is None and out.get(step.paginate.has_more):
                continue  # not run (another paged step, chosen by a condition, answered)
            out[step.paginate.has_more] = bool(state and state.has_more)
            if state and state.has_more:
                assert step.paginate.cursor is not None
                out[step.paginate.next_cursor] = next_cursor(
                    self.ctx, self.given, step.paginate.cursor, state.page)
        return out

    def page_links(self, paginate: Paginate, state: _Page | None) -> dict[str, Any]:
        """A resource page's `page` and, when more exist, the URI of the `next` one."""
        if state is None:
            return {}
        links: dict[str, Any] = {"page": state.page}
        if state.has_more:
            scope = self.scope(next_page=state.page + 1, page_size=state.size)
            query = urlencode({k: text_of(v) for k, v in render(dict(paginate.next_query), scope).items()})
            links["next"] = f"{render(paginate.next_uri, scope)}?{query}"
        return links

    def output(self, spec: Output, detail: Any) -> Any:
        if spec.when_more is not None and not getattr(self.pages.get(spec.when_more), "has_more", False):
            return MISSING
        if spec.true_when is not None:
            return holds(spec.true_when, self.args, self.outcomes)
        if spec.version_of is not None:
            body = next((self.results[s] for s in spec.sources if self.results.get(s) is not None), None)
            return MISSING if body is None else self.ctx.version(spec.version_of, body)
        if spec.shape is None:
            return render(spec.value, self.scope())
        bodies = [(s, self.results[s]) for s in spec.sources if self.results.get(s) is not None]
        if spec.each:
            rows: list[Any] = []
            for source, body in bodies:
                found = rows_in(body, spec.items_at) if spec.items_at else self.rows_of(source, body)
                rows += [self.row(spec, r, detail) for r in found
                         if isinstance(r, Mapping) and not (spec.exclude and r.get(spec.exclude) is not None)]
            return rows
        objects = [body for _, body in bodies if isinstance(body, Mapping)]  # a list is no one row
        if not objects:
            return MISSING
        return self.row(spec, objects[0], detail)

    def row(self, spec: Output, raw: Mapping[str, Any], detail: Any) -> dict[str, Any]:
        assert spec.shape is not None
        row = self.ctx.project(spec.shape, raw, detail, include=spec.include, omit=spec.omit)
        if spec.local is not None and not self.of_this_repository(walk(raw, spec.local.repository)):
            row.update({name: None for name in spec.local.fields if name in row})
        return row

    def of_this_repository(self, url: Any) -> bool:
        """Whether an API repository URL names the call's repository (none: nothing says not)."""
        named = self.ctx.forge.repository_of(url) if isinstance(url, str) else None
        if named is None:
            return True
        mine = (str(self.args.get("owner")), str(self.args.get("repo")))
        return [part.casefold() for part in named] == [part.casefold() for part in mine]

    def rows_of(self, source: str, body: Any) -> list[Any]:
        step = self.decl.step(source)
        paged = step.paginate.items if step.paginate is not None and step.paginate.items else ""
        return rows_in(body, tuple(paged.split(".")) if paged else ())


def _whole(args: Mapping[str, Any], name: str, default: int, upper: int | None) -> int:
    """A whole-number argument (URI variables arrive as text) from 1 to `upper`."""
    raw = args.get(name)
    if raw is None:
        return default
    text = str(raw)
    if not text.isdigit() or int(text) < 1 or (upper is not None and int(text) > upper):
        bound = f" and at most {upper}" if upper is not None else ""
        raise ToolError("invalid_field", f"The {name} query variable must be a whole number from 1{bound}.",
                        details={"field": name, "reason": f"{name} is not a valid number"})
    return int(text)


def completer(spec: Completion) -> CompletionHandler:
    """The completion handler of a declared completion (see `Completion`)."""

    async def complete(ctx: ToolContext, prefix: str, chosen: dict[str, str]) -> list[str]:
        scope = Scope(chosen, {}, {})
        path = render(dict(spec.path), scope)
        if len(path) < len(spec.path):
            return []  # a variable the listing needs is not chosen yet
        query = render(dict(spec.query), scope)
        wanted = {var: str(chosen[var]).casefold() for var in spec.match if chosen.get(var)}
        found: set[str] = set()
        size = ctx.forge.max_page_size
        for page in range(1, spec.pages + 1):
            resp = await ctx.call(spec.operation, path=path, query={**query, **ctx.forge.page_query(page, size)})
            for row in resp.data if isinstance(resp.data, list) else []:
                if all(str(walk_path(row, spec.match[v])).casefold() == want for v, want in wanted.items()):
                    value = walk_path(row, spec.value)
                    if value is not None:
                        found.add(str(value))
            if not ctx.forge.has_more(resp, page, size):
                break
        return sorted(found)

    return complete


def _comparable(value: Any, norm: Any) -> Any:
    """A value as `verify` compares it: lists as sets (GitHub keeps its own order), normalized."""
    if isinstance(value, list | tuple):
        return frozenset(norm(v) for v in value)
    return norm(None if value is MISSING else value)

