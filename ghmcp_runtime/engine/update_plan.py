"""Run an `UpdatePlan`: a partial update of one resource as waves of writes (`writes.Step`), judged by
what the forge shows (docs/overrides.md, "Update plan").

The writes touch disjoint state: the resource's own fields (the PATCH sends only what differs,
and never a list a set recipe changes), distinct members of each set and each toggle. So they go
out together and every order in which the forge applies them ends in the same resource; a writer
elsewhere changing other members or fields is never undone, because nothing here sends a whole
list it did not ask to replace.

No re-read is needed to know the result: the PATCH answers with the resource, a toggle changes
only its field, and a member request answers with the whole list (or resource), which is final
for that field only if no other request of ours on it runs beside it. So with two or more
requests on one set, all but one go in the first wave (each followed by its own effect) and one,
the add when there is one, goes alone on that set in a second wave: its answer is the list after
all of them.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.calls.context import ToolContext, UpstreamResponse
from ghmcp_runtime.calls.error_rules import build_error, matches, repair_of
from ghmcp_runtime.core.declared import (
    ErrorSpec,
    MemberSet,
    MemberWrite,
    OnError,
    Repair,
    Shown,
    Step,
    Template,
    Toggle,
    UpdatePlan,
)
from ghmcp_runtime.core.errors import ToolError, UpstreamError
from ghmcp_runtime.core.operation import Operation
from ghmcp_runtime.core.refs import MISSING, Ref, Scope, parse, render
from ghmcp_runtime.core.transforms import normalizer
from ghmcp_runtime.engine.writes import Resource, Views, named, run_steps
from ghmcp_runtime.engine.writes import Step as Write

_UNKNOWN = object()  # a value a dry run cannot predict: the field is named

_VARIABLE = re.compile(r"\{(\w+)\}")
_DOT_SEGMENTS = (".", "..")  # a path segment naming another resource


@dataclass(frozen=True, slots=True)
class Applied:
    """What an update plan did: the resource as the forge now shows it, the fields that changed
    (by the resource's names) and the parameters it ignored. A dry run: what would change."""

    after: Resource
    changed: list[str]
    ignored: list[str]


# -- how the resource shows a value ---------------------------------------------------------------


def _plain(value: Any) -> Any:
    return None if value is None or value is False or value == "" else value


def _items(value: Any, key: str | None) -> list[Any]:
    rows = value if isinstance(value, list) else []
    if key is None:
        return [r for r in rows if r is not None]
    return [r.get(key) if isinstance(r, Mapping) else r for r in rows
            if (r.get(key) if isinstance(r, Mapping) else r) is not None]


def _read(resource: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at `path`; a list (`[]`) as its items' values (a string item is its own value)."""
    value: Any = resource
    for i, step in enumerate(path):
        if step == "[]":
            rest = path[i + 1:]
            return [v for v in (_read(item, rest) if isinstance(item, Mapping) else item
                                for item in (value if isinstance(value, list) else [])) if v is not None]
        value = value.get(step) if isinstance(value, Mapping) else None
    return value


def seen(shown: Shown, value: Any) -> Any:
    """`value` as the view compares it: lists as sets, through the normalize transform."""
    norm = normalizer(shown.normalize)
    if "[]" in shown.path or isinstance(value, list | tuple | frozenset | set):
        return frozenset(norm(v) for v in (value or ()) if v is not None)
    return _plain(norm(value) if value is not None else None)


def view_of(shown: Shown) -> Callable[[Mapping[str, Any]], Any]:
    return lambda resource: seen(shown, _read(resource, shown.path))


def _set_field(s: MemberSet, plan: UpdatePlan) -> tuple[str, str | None]:
    """The resource's list field of a set and the member key in its rows (None: plain values)."""
    path = plan.shows[s.view].path
    return path[0], (path[2] if len(path) > 2 else None)


def _key(plan: UpdatePlan, s: MemberSet) -> Callable[[Any], Any]:
    return normalizer(plan.shows[s.view].normalize)


def views(plan: UpdatePlan, args: Mapping[str, Any]) -> Views:
    """Every judged name -> its view: the `shows` entries, and each set's add/remove parameters
    as which of the members they name the resource holds."""
    out: dict[str, Callable[[Mapping[str, Any]], Any]] = {n: view_of(s) for n, s in plan.shows.items()}
    for s in plan.sets:
        whole, key = out[s.view], _key(plan, s)
        for write in (s.add, s.remove):
            if write is not None:
                named_ = frozenset(key(m) for m in args.get(write.param) or ())
                out[write.param] = (lambda w, n: lambda r: w(r) & n)(whole, named_)
    return out


def order(plan: UpdatePlan) -> list[str]:
    """The judged names in reporting order: `shows`, each set's parameters after its view."""
    out: list[str] = []
    for name in plan.shows:
        out.append(name)
        out += [w.param for s in plan.sets if s.view == name for w in (s.add, s.remove) if w is not None]
    return out


def targets(plan: UpdatePlan, args: Mapping[str, Any], names: Sequence[str] | None = None) -> dict[str, Any]:
    """The values asked for, as the views see them (only the parameters passed)."""
    removing = {s.remove.param for s in plan.sets if s.remove is not None}
    adding = {s.add.param: s for s in plan.sets if s.add is not None}
    out: dict[str, Any] = {}
    for name in names if names is not None else order(plan):
        if name not in args:
            continue
        if name in removing:
            out[name] = frozenset()  # none of them left
        elif name in adding:
            out[name] = seen(plan.shows[adding[name].view], list(args[name]))
        elif name in plan.shows:
            out[name] = seen(plan.shows[name], args[name])
    return out


def patch_fields(body: Mapping[str, Any]) -> dict[str, str]:
    """The PATCH's body field -> the parameter it sends (the step's whole-parameter bindings)."""
    out = {}
    for key, template in body.items():
        parts = parse(template) if isinstance(template, str) else ()
        if len(parts) == 1 and isinstance(parts[0], Ref) and len(parts[0].path) == 1 and not parts[0].filters:
            out[key] = parts[0].path[0]
    return out


def row_names(plan: UpdatePlan, fields: Mapping[str, str]) -> dict[str, str]:
    """A parameter -> the resource field it changes, where they differ (changed_fields name fields)."""
    out = {param: body for body, param in fields.items() if body != param}
    for s in plan.sets:
        field = _set_field(s, plan)[0]
        out.update({p: field for p in (s.view, *(w.param for w in (s.add, s.remove) if w is not None))
                    if p != field})
    return out


# -- the waves ------------------------------------------------------------------------------------


def _path(op: Operation, template: Mapping[str, Template], scope: Scope, **extra: Any) -> dict[str, Any]:
    """The request's path variables: `extra`, else the declared bindings (a tool parameter of
    another name: `{issue_number}` for Forgejo's `{index}`), else the parameter of that name."""
    bound = render(dict(template), scope)
    out = {}
    for v in _VARIABLE.findall(op.path):
        value = extra[v] if v in extra else bound.get(v, MISSING) if v in template else scope.args[v]
        if value is MISSING:
            raise ValueError(f"nothing fills {v!r} of {op.operation_id}")  # the generator prevents it
        out[v] = value
    return out


def patch_body(plan: UpdatePlan, fields: Mapping[str, str], args: Mapping[str, Any],
               current: Mapping[str, Any], look: Views, null_as: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The PATCH body: only fields whose value differs from what the resource shows; a null
    goes out as the field's `null_as` value where the forge clears with one (Forgejo: 0)."""
    asked = targets(plan, args, list(fields.values()))
    body = {field: args[p] for field, p in fields.items() if p in asked and look[p](current) != asked[p]}
    for field, value in (null_as or {}).items():
        if field in body and body[field] is None:
            body[field] = value
    for rule in plan.sent_with:
        follow = fields[rule.follow]
        if rule.lead in body:  # e.g. closing: the forge's reason unless one was given
            body[rule.follow] = args.get(follow, rule.default.get(body[rule.lead]))
            if body[rule.follow] is None:
                del body[rule.follow]
        elif rule.follow in body and fields[rule.lead] in args:
            # read only together with its lead: the caller's lead goes with it, never the one read
            # earlier (that would undo a change made since); alone, the forge ignores it
            body[rule.lead] = args[fields[rule.lead]]
    return body


def _mapped(ctx: ToolContext, rules: Sequence[OnError], op: Operation, args: Mapping[str, Any],
            send: Callable[[], Awaitable[UpstreamResponse]]) -> Callable[[], Awaitable[UpstreamResponse]]:
    if not rules:
        return send

    async def mapped() -> UpstreamResponse:
        try:
            return await send()
        except ToolError as err:
            rule = next((r for r in rules if matches(r.when, err, op.method)), None)
            if rule is None:
                raise
            raise build_error(rule.error, Scope(dict(args), {}, {}), err) from None

    return mapped


def _with_answer(path: tuple[str, ...] | None, field: str) -> Callable[[Resource, UpstreamResponse | None], Resource]:
    def apply(resource: Resource, resp: UpstreamResponse | None) -> Resource:
        if resp is None or path is None:
            return resource
        value: Any = resp.data
        for step in path:
            value = value.get(step) if isinstance(value, Mapping) else None
        return {**resource, field: value}

    return apply


def _member_steps(ctx: ToolContext, plan: UpdatePlan, s: MemberSet, scope: Scope,
                  current: Mapping[str, Any]) -> list[Write]:
    """A set's requests in order: removals, then the add (its answer is the list after both)."""
    field, key_name = _set_field(s, plan)
    key = _key(plan, s)
    args = scope.args
    held = {key(m) for m in _items(current.get(field), key_name)}

    def asked(write: MemberWrite | None, *, present: bool) -> list[Any]:
        if write is None:
            return []
        first: dict[Any, Any] = {}
        for m in args.get(write.param) or ():
            first.setdefault(key(m), m)
        return [m for k, m in first.items() if (k in held) == present]

    adding, removing = asked(s.add, present=False), asked(s.remove, present=True)
    steps: list[Write] = []
    if s.remove is not None and removing:
        rw = s.remove
        if rw.each is not None:
            steps += [_removal(ctx, rw, scope, field, key_name, key, m,
                               final=not adding and i == len(removing) - 1)
                      for i, m in enumerate(removing)]
        else:
            steps.append(_list_write(ctx, rw, scope, field, removing))
    if s.add is not None and adding:
        steps.append(_list_write(ctx, s.add, scope, field, adding))
    return steps


def _list_write(ctx: ToolContext, write: MemberWrite, scope: Scope, field: str,
                members: list[Any]) -> Write:
    """One request adding or removing `members`; its answer holds the whole list."""
    assert write.body is not None
    op, path = write.operation, _path(write.operation, write.path, scope)
    return Write((write.param,), lambda: ctx.call(op, path=path, body={write.body: members}),
                _with_answer(write.answer, field))


def _removal(ctx: ToolContext, write: MemberWrite, scope: Scope, field: str, key_name: str | None,
             key: Callable[[Any], Any], member: Any, *, final: bool) -> Write:
    """One member's removal; a `final` one is followed by the forge's answer (the whole list)."""
    assert write.each is not None
    op, path = write.operation, _path(write.operation, write.path, scope, **{write.each: member})
    answer = _with_answer(write.answer, field)

    def apply(resource: Resource, resp: UpstreamResponse | None) -> Resource:
        if final and resp is not None and write.answer is not None:
            return answer(resource, resp)
        rows = resource.get(field) or []
        return {**resource, field: [r for r in rows
                                    if key(r.get(key_name) if key_name and isinstance(r, Mapping) else r) != key(member)]}

    def done(err: ToolError) -> bool:  # already off the resource
        return write.done is not None and isinstance(err, UpstreamError) and err.status == 404 and err.code == write.done

    return Write((write.param,), lambda: ctx.call(op, path=path), apply, done_if=done,
                effect=lambda r: key(member) in {key(m) for m in _items(r.get(field), key_name)})


def _toggle_step(ctx: ToolContext, plan: UpdatePlan, t: Toggle, scope: Scope,
                 current: Mapping[str, Any], look: Views) -> Write | None:
    args = scope.args
    state = plan.shows[t.param].path[0]
    reason_at = plan.shows[t.reason].path[0] if t.reason else None
    reason = args.get(t.reason) if t.reason else None
    if args.get(t.param) is True and (not look[t.param](current) or
                                      (reason_at and reason not in (None, current.get(reason_at)))):
        on, path = t.on, _path(t.on, t.on_path, scope)
        fields = (t.param, t.reason) if t.reason else (t.param,)

        def switched_on(resource: Resource, _: UpstreamResponse | None) -> Resource:
            return {**resource, state: True, **({reason_at: reason} if reason_at else {})}

        return Write(fields, lambda: ctx.call(on, path=path, body={t.reason: reason} if reason and t.reason else None),
                    switched_on, sent=targets(plan, {t.param: True, **({t.reason: reason} if t.reason else {})}))
    if args.get(t.param) is False and look[t.param](current):
        off, path = t.off, _path(t.off, t.off_path, scope)

        def switched_off(resource: Resource, _: UpstreamResponse | None) -> Resource:
            return {**resource, state: False, **({reason_at: None} if reason_at else {})}

        return Write((t.param,), lambda: ctx.call(off, path=path), switched_off,
                    sent=targets(plan, {t.param: False}))
    return None


def waves(ctx: ToolContext, step: Step, scope: Scope, current: Mapping[str, Any],
          look: Views, answers: dict[str, Any]) -> list[list[Write]]:
    """The waves of writes (only those that change something). `answers["patch"]` gets the
    PATCH's answer. The PATCH comes first in its wave: its answer replaces the whole resource, and
    the other steps' effects are applied over it (run_steps applies answers in wave order)."""
    plan = step.update
    assert plan is not None
    args = scope.args
    first: list[Write] = []
    fields = patch_fields(step.body)
    if body := patch_body(plan, fields, args, current, look, step.null_as):
        operation, path = step.operation, _path(step.operation, step.path, scope)
        params = {fields[k]: v for k, v in body.items()}

        def patched(resource: Resource, resp: UpstreamResponse | None) -> Resource:
            if resp is None:
                return resource
            answers["patch"] = resp.data
            return dict(resp.data)

        send = _mapped(ctx, step.on_error, operation, args, lambda: ctx.call(operation, path=path, body=body))
        first.append(Write(tuple(params), send, patched, sent=targets(plan, params, list(params))))
    groups = [_member_steps(ctx, plan, s, scope, current) for s in plan.sets]
    first += [write for group in groups for write in group[:-1]]
    first += [write for t in plan.toggles if (write := _toggle_step(ctx, plan, t, scope, current, look))]
    last = [group[-1] for group in groups if group]
    if all(len(group) <= 1 for group in groups):  # one request per set: each answer is final
        return [wave for wave in (first + last,) if wave]
    return [first, last]


def concurrent_fields(plan: UpdatePlan, fields: Mapping[str, str], current: Mapping[str, Any],
                      patched: Mapping[str, Any], writes: Sequence[Sequence[Write]], look: Views) -> list[str]:
    """Names another writer changed between the read and the PATCH: its answer shows them other
    than read, though no write of this call touches them."""
    touched = {f for wave in writes for write in wave for f in write.fields}
    touched |= {s.view for s in plan.sets if {w.param for w in (s.add, s.remove) if w} & touched}
    touched |= {fields[r.follow] for r in plan.sent_with if fields[r.lead] in touched}
    return [f for f in plan.shows if f not in touched and look[f](patched) != look[f](current)]


# -- refusals before any write ----------------------------------------------------------------------


def refuse(ctx: ToolContext, plan: UpdatePlan, args: Mapping[str, Any], current: Mapping[str, Any]) -> None:
    """What the forge would refuse, known from the read: a member both added and removed, a
    changed version, a member removal whose path segment would name another resource."""
    for s in plan.sets:
        if s.add is None or s.remove is None:
            continue
        key = _key(plan, s)
        if {key(m) for m in args.get(s.add.param) or ()} & {key(m) for m in args.get(s.remove.param) or ()}:
            fields = [s.add.param, s.remove.param]
            raise ToolError("invalid_field", f"A {s.kind} is both in {fields[0]} and in {fields[1]}; "
                            "nothing was changed.",
                            details={"fields": fields, "reason": f"the same {s.kind} is added and removed"})
    v = plan.version
    if v is not None and v.param in args and args[v.param] != ctx.version(v.shape, current):
        raise ToolError("conflict", f"The {plan.noun} changed since that version was read; nothing was written.",
                        details={"field": v.param, "reason": "does not match the current version"},
                        repair=_repair(plan, args, "re-apply your change with the new version"))
    for s in plan.sets:
        if s.remove is None or s.remove.each is None:
            continue
        field, key_name = _set_field(s, plan)
        held = set(_items(current.get(field), key_name))
        stuck = [f"{s.remove.param}[{i}]" for i, m in enumerate(args.get(s.remove.param) or ())
                 if m in _DOT_SEGMENTS and m in held]
        if stuck:
            raise ToolError("invalid_field", f"A {s.kind} named . or .. cannot be removed from the {plan.noun} "
                            f"through {ctx.forge.display_name}'s API; nothing was changed.",
                            details={"field": s.remove.param, "reason": f"unaddressable: {', '.join(stuck)}"})


def _repair(plan: UpdatePlan, args: Mapping[str, Any], alternative: str | None = None) -> dict[str, Any] | None:
    assert plan.version is not None
    r = plan.version.repair
    if r is None:
        return None
    spec = Repair(next_step=r.next_step, tool=r.tool, arguments=r.arguments,
                  alternative=alternative if alternative is not None else r.alternative)
    return repair_of(ErrorSpec(repair=spec), Scope(dict(args), {}, {}))


# -- the run ------------------------------------------------------------------------------------------


async def apply(ctx: ToolContext, step: Step, args: Mapping[str, Any], current: Resource,
                reread: Callable[[], Awaitable[Resource]], results: Mapping[str, Any] | None = None) -> Applied:
    """Refuse what the forge would refuse, then write the waves of `step`'s plan and judge them;
    a dry run (ctx.dry_run) answers what would change and sends nothing. `args` name set members
    exactly; path templates read them and the earlier steps' `results`."""
    plan = step.update
    assert plan is not None
    refuse(ctx, plan, args, current)
    look = views(plan, args)
    answers: dict[str, Any] = {}
    planned = waves(ctx, step, Scope(args, results or {}, {}), current, look, answers)
    fields = patch_fields(step.body)
    names = row_names(plan, fields)
    if ctx.dry_run:  # the fields whose value a write would change (a lock without a reason: not the reason)
        wanted = targets(plan, args)

        def changes(write: Write, f: str) -> bool:
            value = (write.sent or {}).get(f, wanted.get(f, _UNKNOWN))
            return value is _UNKNOWN or look[f](current) != value

        return Applied(current, named([f for wave in planned for write in wave for f in write.fields
                                       if changes(write, f)], names), [])
    check: Callable[[Resource], None] | None = None
    if plan.version is not None and plan.version.param in args:
        version = plan.version

        def check(_: Resource) -> None:
            """The PATCH's answer shows whether someone else changed the resource between the
            version check and the write (the forge has no conditional write)."""
            meanwhile = concurrent_fields(plan, fields, current, answers["patch"], planned, look) \
                if "patch" in answers else []
            if meanwhile:
                raise ToolError(
                    "conflict",
                    f"The {plan.noun} was changed by someone else while this update was being written "
                    "(after the version was checked); the writes were stopped there. Read it and check "
                    "both changes.",
                    details={"field": version.param, "reason": "changed between the check and the write",
                             "concurrent_fields": [names.get(f, f) for f in meanwhile]},
                    repair=_repair(plan, args))

    done = await run_steps(planned, dict(current), views=look, targets=targets(plan, args), reread=reread,
                           names=names, log=ctx.writes, check=check)
    return Applied(done.after, done.changed, done.ignored)
