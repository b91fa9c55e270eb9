"""Run an `UpdatePlan`: a partial update of one resource, planned from one read
(ghmcp_runtime.engine.item_plan), sent as waves of writes (`writes.Step`) and judged by what the
forge shows (docs/overrides.md, "Update plan"). A dry run answers the plan itself.

With an expected version, the version is checked on the read; what another writer changes after
it shows in the PATCH's answer (the writes stop there) or, for an update without a PATCH, in a
re-read after the writes: either is `conflict` naming the fields (`concurrent_fields`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.calls.error_rules import repair_of
from ghmcp_runtime.core.declared import ErrorSpec, Repair, Step, UpdatePlan, VersionCheck
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.refs import Scope
from ghmcp_runtime.engine.item_plan import ItemPlan, plan_item
from ghmcp_runtime.engine.shown import items, member_key, patch_fields, set_field
from ghmcp_runtime.engine.writes import Resource, Views, judge, run_steps
from ghmcp_runtime.engine.writes import Step as Write

_DOT_SEGMENTS = (".", "..")  # a path segment naming another resource


@dataclass(frozen=True, slots=True)
class Applied:
    """What an update plan did: the resource as the forge now shows it, the fields that changed
    (by the resource's names) and the parameters it ignored. A dry run: what would change."""

    after: Resource
    changed: list[str]
    ignored: list[str]


def concurrent_fields(plan: UpdatePlan, fields: Mapping[str, str], current: Mapping[str, Any],
                      now: Mapping[str, Any], writes: Sequence[Sequence[Write]], look: Views) -> list[str]:
    """Names another writer changed since the read: `now` (the PATCH's answer, or a re-read
    after the writes) shows them other than read, though no write of this call touches them."""
    touched = {f for wave in writes for write in wave for f in write.fields}
    touched |= {s.view for s in plan.sets if {w.param for w in (s.add, s.remove) if w} & touched}
    touched |= {fields[r.follow] for r in plan.sent_with if fields[r.lead] in touched}
    return [f for f in plan.shows if f not in touched and look[f](now) != look[f](current)]


# -- refusals before any write ----------------------------------------------------------------------


def refuse(ctx: ToolContext, plan: UpdatePlan, args: Mapping[str, Any], current: Mapping[str, Any]) -> None:
    """What the forge would refuse, known from the read: a member both added and removed, a
    changed version, a member removal whose path segment would name another resource."""
    for s in plan.sets:
        if s.add is None or s.remove is None:
            continue
        key = member_key(plan, s)
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
        field, key_name = set_field(s, plan)
        held = set(items(current.get(field), key_name))
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
    """Refuse what the forge would refuse, plan the update, then send exactly the plan's waves
    and judge them; a dry run (ctx.dry_run) answers the plan and sends nothing. `args` name set
    members exactly; the requests' path templates read them and the earlier steps' `results`."""
    plan = step.update
    assert plan is not None
    refuse(ctx, plan, args, current)
    item = plan_item(ctx, step, args, current, results)
    if ctx.dry_run:
        return Applied(current, item.changes(current), item.reported(()))
    version = plan.version if plan.version is not None and plan.version.param in args else None
    fields = patch_fields(step.body)
    check = None if version is None else _patch_check(plan, version, fields, args, current, item)
    try:
        done = await run_steps(item.waves, dict(current), views=item.look, targets=item.targets, reread=reread,
                               names=item.names, log=ctx.writes, check=check)
        if version is not None and item.waves and not item.patched:
            after = await _reread_check(plan, version, fields, args, current, item, reread)
            done = judge(current, after, item.look, item.targets, item.names)
    except ToolError as err:
        if version is not None and err.code != "conflict" and ctx.writes.after is not None \
                and not ctx.writes.unknown:
            # what this call applied is the version a repeat goes on from (its own writes are no
            # other writer's change)
            err.resume = {version.param: ctx.version(version.shape, ctx.writes.after)}
        raise
    return Applied(done.after, done.changed, item.reported(done.ignored))


def _conflict(plan: UpdatePlan, version: VersionCheck, args: Mapping[str, Any], meanwhile: Sequence[str],
              item: ItemPlan, stopped: bool) -> ToolError:
    where = "the writes were stopped there" if stopped else "every write of this update was sent"
    return ToolError(
        "conflict",
        f"The {plan.noun} was changed by someone else while this update was being written (after the "
        f"version was checked); {where}. Read it and check both changes.",
        details={"field": version.param, "reason": "changed between the check and the write",
                 "concurrent_fields": [item.names.get(f, f) for f in meanwhile]},
        repair=_repair(plan, args))


def _patch_check(plan: UpdatePlan, version: VersionCheck, fields: Mapping[str, str], args: Mapping[str, Any],
                 current: Resource, item: ItemPlan) -> Callable[[Resource], None]:
    def check(_: Resource) -> None:
        """The PATCH's answer shows whether someone else changed the resource between the
        version check and the write (the forge has no conditional write)."""
        if "patch" not in item.answers:
            return
        meanwhile = concurrent_fields(plan, fields, current, item.answers["patch"], item.waves, item.look)
        if meanwhile:
            raise _conflict(plan, version, args, meanwhile, item, stopped=True)

    return check


async def _reread_check(plan: UpdatePlan, version: VersionCheck, fields: Mapping[str, str],
                        args: Mapping[str, Any], current: Resource, item: ItemPlan,
                        reread: Callable[[], Awaitable[Resource]]) -> Resource:
    """Without a PATCH no answer shows the whole resource: a re-read after the writes says
    whether someone else changed it since the version was checked (and is what is answered)."""
    after = await reread()
    meanwhile = concurrent_fields(plan, fields, current, after, item.waves, item.look)
    if meanwhile:
        raise _conflict(plan, version, args, meanwhile, item, stopped=False)
    return after
