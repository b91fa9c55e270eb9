"""One resource's update, planned from one read (`ItemPlan`): the requests, the value each judged
name is left at, and the parameters the forge would ignore. A dry run answers from the plan; the
real run sends exactly its waves and judges them against its targets, so both name the same fields
whenever the forge does what its recipe declares (`sent_with`, a set's `max`).

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
from dataclasses import dataclass, field
from typing import Any

from ghmcp_runtime.calls.context import ToolContext, UpstreamResponse
from ghmcp_runtime.calls.error_rules import build_error, matches
from ghmcp_runtime.core.declared import (
    MemberSet,
    MemberWrite,
    OnError,
    Step,
    Template,
    Toggle,
    UpdatePlan,
)
from ghmcp_runtime.core.errors import ToolError, UpstreamError
from ghmcp_runtime.core.operation import Operation
from ghmcp_runtime.core.refs import MISSING, Scope, render
from ghmcp_runtime.engine.shown import (
    items,
    member_key,
    order,
    patch_fields,
    row_names,
    seen,
    set_field,
    targets,
    views,
)
from ghmcp_runtime.engine.writes import Resource, Views, named
from ghmcp_runtime.engine.writes import Step as Write

_VARIABLE = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True)
class ItemPlan:
    waves: list[list[Write]]
    look: Views
    targets: dict[str, Any]  # judged name -> the value the writes leave (asked, or a consequence)
    asked: frozenset[str]  # the judged names the caller passed
    ignored: frozenset[str]  # parameters the forge would ignore: not sent
    names: Mapping[str, str]  # a parameter -> the resource field it changes
    patched: bool  # the writes include the PATCH of the resource's own fields
    answers: dict[str, Any] = field(default_factory=dict)  # "patch": the PATCH's answer, once sent
    reporting: tuple[str, ...] = ()  # the judged names in reporting order

    def changes(self, current: Mapping[str, Any]) -> list[str]:
        """The fields the plan changes on `current` (what a dry run answers)."""
        return named([f for f, value in self.targets.items() if self.look[f](current) != value], self.names)

    def reported(self, unmet: Sequence[str]) -> list[str]:
        """The ignored parameters: those planned, and those asked that the forge did not show."""
        out = self.ignored | {f for f in unmet if f in self.asked}
        return [f for f in self.reporting if f in out]


def plan_item(ctx: ToolContext, step: Step, args: Mapping[str, Any], current: Mapping[str, Any],
              results: Mapping[str, Any] | None = None) -> ItemPlan:
    """The plan of `step`'s update on the resource as read (`current`); `args` name set members
    exactly; request paths are the declared bindings over `args` and the earlier steps' `results`."""
    plan = step.update
    assert plan is not None
    look = views(plan, args)
    asked = targets(plan, args)
    goal, ignored = dict(asked), set[str]()
    first: list[Write] = []
    answers: dict[str, Any] = {}
    fields = patch_fields(step.body)
    scope = Scope(args, results or {}, {})
    if body := patch_body(plan, fields, args, current, look, goal, ignored, step.null_as):
        first.append(_patch(ctx, step, scope, body, {fields[k]: v for k, v in body.items()}, goal, answers))
    groups = [_member_steps(ctx, plan, s, scope, current, goal, ignored) for s in plan.sets]
    first += [write for group in groups for write in group[:-1]]
    first += [write for t in plan.toggles if (write := _toggle_step(ctx, plan, t, scope, current, look, goal))]
    last = [group[-1] for group in groups if group]
    if all(len(group) <= 1 for group in groups):  # one request per set: each answer is final
        waves = [wave for wave in (first + last,) if wave]
    else:
        waves = [first, last]
    reporting = tuple(order(plan))
    return ItemPlan(waves=waves, look=look, targets={n: goal[n] for n in reporting if n in goal},
                    asked=frozenset(asked), ignored=frozenset(ignored), names=row_names(plan, fields),
                    patched=bool(body), answers=answers, reporting=reporting)


# -- the PATCH ------------------------------------------------------------------------------------


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


def patch_body(plan: UpdatePlan, fields: Mapping[str, str], args: Mapping[str, Any], current: Mapping[str, Any],
               look: Views, goal: dict[str, Any], ignored: set[str],
               null_as: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The PATCH body: only fields whose value differs from what the resource shows. `goal` gets
    what a `sent_with` follow becomes, `ignored` the follows the forge would not read. A null
    goes out as its field's `null_as` value where the forge clears with one (Forgejo: 0)."""
    body = {f: args[p] for f, p in fields.items() if p in goal and look[p](current) != goal[p]}
    body.update({f: value for f, value in (null_as or {}).items() if f in body and body[f] is None})
    for rule in plan.sent_with:
        follow, lead = fields[rule.follow], fields[rule.lead]
        if rule.lead in body:  # e.g. closing: the forge's reason unless one was given
            value = args.get(follow, rule.default.get(body[rule.lead]))
            if value is None:
                body.pop(rule.follow, None)
                continue
            body[rule.follow] = value
            stored = rule.stores.get(body[rule.lead], value)
            goal[follow] = seen(plan.shows[follow], stored)
            if follow in args and goal[follow] != seen(plan.shows[follow], args[follow]):
                ignored.add(follow)
        elif rule.follow in body:
            if lead in args and args[lead] not in rule.stores:
                # read only together with its lead: the caller's lead goes with it, never the one
                # read earlier (that would undo a change made since)
                body[rule.lead] = args[lead]
            else:  # alone, or beside a lead under which the forge keeps its own: not read
                del body[rule.follow]
                del goal[follow]
                ignored.add(follow)
    return body


def _patch(ctx: ToolContext, step: Step, scope: Scope, body: dict[str, Any], params: Mapping[str, Any],
           goal: Mapping[str, Any], answers: dict[str, Any]) -> Write:
    operation, path, args = step.operation, _path(step.operation, step.path, scope), scope.args

    def patched(resource: Resource, resp: UpstreamResponse | None) -> Resource:
        if resp is None:
            return resource
        answers["patch"] = resp.data
        return dict(resp.data)

    send = _mapped(ctx, step.on_error, operation, args, lambda: ctx.call(operation, path=path, body=body))
    return Write(tuple(params), send, patched, sent={p: goal[p] for p in params if p in goal})


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


# -- sets -----------------------------------------------------------------------------------------


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
                  current: Mapping[str, Any], goal: dict[str, Any], ignored: set[str]) -> list[Write]:
    """A set's requests in order: removals, then the add (its answer is the list after both).
    Members past the set's `max` are not added: the add parameter is then ignored in part."""
    args = scope.args
    field, key_name = set_field(s, plan)
    key = member_key(plan, s)
    held = {key(m) for m in items(current.get(field), key_name)}

    def asked(write: MemberWrite | None, *, present: bool) -> list[Any]:
        if write is None:
            return []
        first: dict[Any, Any] = {}
        for m in args.get(write.param) or ():
            first.setdefault(key(m), m)
        return [m for k, m in first.items() if (k in held) == present]

    adding, removing = asked(s.add, present=False), asked(s.remove, present=True)
    if s.add is not None and s.max is not None and adding:
        room = max(0, s.max - len(held - {key(m) for m in removing}))
        if len(adding) > room:
            goal[s.add.param] = goal[s.add.param] - {key(m) for m in adding[room:]}
            ignored.add(s.add.param)
            adding = adding[:room]
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
                 effect=lambda r: key(member) in {key(m) for m in items(r.get(field), key_name)})


# -- toggles --------------------------------------------------------------------------------------


def _toggle_step(ctx: ToolContext, plan: UpdatePlan, t: Toggle, scope: Scope,
                 current: Mapping[str, Any], look: Views, goal: dict[str, Any]) -> Write | None:
    """Switching on stores the reason sent (none: none); switching off clears it."""
    args = scope.args
    state = plan.shows[t.param].path[0]
    reason_at = plan.shows[t.reason].path[0] if t.reason else None
    reason = args.get(t.reason) if t.reason else None
    fields = (t.param, t.reason) if t.reason else (t.param,)
    if args.get(t.param) is True and (not look[t.param](current) or
                                      (reason_at and reason not in (None, current.get(reason_at)))):
        on, path = t.on, _path(t.on, t.on_path, scope)
        if t.reason:
            goal[t.reason] = seen(plan.shows[t.reason], reason)

        def switched_on(resource: Resource, _: UpstreamResponse | None) -> Resource:
            return {**resource, state: True, **({reason_at: reason} if reason_at else {})}

        return Write(fields, lambda: ctx.call(on, path=path, body={t.reason: reason} if reason and t.reason else None),
                     switched_on, sent={f: goal[f] for f in fields})
    if args.get(t.param) is False and look[t.param](current):
        off, path = t.off, _path(t.off, t.off_path, scope)
        if t.reason:
            goal[t.reason] = seen(plan.shows[t.reason], None)

        def switched_off(resource: Resource, _: UpstreamResponse | None) -> Resource:
            return {**resource, state: False, **({reason_at: None} if reason_at else {})}

        return Write(fields, lambda: ctx.call(off, path=path), switched_off, sent={f: goal[f] for f in fields})
    return None
