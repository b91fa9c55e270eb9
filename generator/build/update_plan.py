"""A write step's `update:` in the override file → a runtime `UpdatePlan`
(ghmcp_runtime/engine/update_plan.py), checked against the spec and the tool's parameters: the
step is the PATCH of the resource's own fields (its body bindings), `sets` add and remove members
of a list field, `toggles` switch a boolean with two requests. Every problem is located."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.base.diagnostics import closest
from generator.build.ir import IRParam
from generator.build.recipe_base import (
    Counted,
    Loc,
    Report,
    bind_path,
    path_filler,
    path_names,
    spec_fields,
    split_path,
)
from generator.language.overrides import MemberWriteDef, RepairDef, StepDef
from generator.spec.pinned import SpecOperation, listing_row, resolve_ref
from generator.spec.schemas import accepted_types, schema_types
from ghmcp_runtime.core.declared import (
    MemberSet,
    MemberWrite,
    Repair,
    SentWith,
    Shown,
    Step,
    Toggle,
    UpdatePlan,
    VersionCheck,
)
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.core.refs import references
from ghmcp_runtime.core.transforms import TRANSFORMS
from ghmcp_runtime.engine.shown import patch_fields

READS = ("GET", "HEAD")
# what a step with `update:` cannot also carry (the plan judges, settles and reports itself)
EXCLUSIVE = ("compare", "settle", "verify", "paginate", "guard", "names_exist", "absent")
PLAN_CODES = frozenset({"invalid_field"})  # a member both added and removed, a dot segment


@dataclass(frozen=True, slots=True)
class Context:
    """What the plan is checked against."""

    params: Mapping[str, IRParam]
    ops: Mapping[str, SpecOperation]
    runtime_ops: Mapping[str, Operation]
    document: Any
    earlier: Sequence[Step]
    versioned: Collection[str]
    codes: Collection[str]
    resolved: Mapping[str, str]  # `resolve:` parameter -> the JSON type its names become


def _repair(r: RepairDef | None) -> Repair | None:
    if r is None:
        return None
    return Repair(next_step=r.next_step, tool=r.tool, arguments=dict(r.arguments), alternative=r.alternative)


def build_update(raw: StepDef, loc: Loc, body: Mapping[str, Any], operation: Operation, c: Context,
                 error: Report) -> UpdatePlan | None:
    """The plan, or None once every problem is reported."""
    u = raw.update
    assert u is not None
    uloc = (*loc, "update")
    problems = Counted(error)
    report = problems.report
    if operation.method in READS:
        report((*loc, "call"), f"update is a write recipe; {raw.call} is a {operation.method}",
               "call the operation that writes the resource's own fields (a PATCH)")
    for key in EXCLUSIVE:
        if getattr(raw, key) is not None:
            report((*loc, key), f"a step with update takes no {key}",
                   "the update plan compares, settles and reports its writes itself")
    for j, mapping in enumerate(raw.on_error):
        if mapping.skip:
            report((*loc, "on_error", j, "skip"), "an update's PATCH cannot skip a failure",
                   "map it to a code instead")
    reads = [s.id for s in c.earlier if s.operation.method in READS
             and listing_row(c.document, c.ops[s.operation.operation_id]) is None]
    if u.against not in reads:
        report((*uloc, "against"), f"update.against names {u.against!r}, not an earlier read step",
               f"earlier reads of one resource (not a listing): {', '.join(reads) or 'none'}")
    shows = _shows(u.shows, (*uloc, "shows"), c, report)
    fields = {key: param for key, param in patch_fields(body).items() if param in c.params}
    for key, param in fields.items():
        if param not in shows:
            report((*uloc, "shows"), f"the PATCH sends {param!r} (body field {key!r}), which shows does not list",
                   f"add {param}: <path in the resource> so the answer can be judged")
    sent_with = []
    for key, rule in u.sent_with.items():
        for name, where in ((key, (*uloc, "sent_with", key)), (rule.lead, (*uloc, "sent_with", key, "lead"))):
            if name not in fields:
                report(where, f"sent_with names {name!r}, not a body field bound to a parameter",
                       f"body fields: {', '.join(sorted(fields)) or 'none'}")
        sent_with.append(SentWith(follow=key, lead=rule.lead, default=dict(rule.default), stores=dict(rule.stores)))
    names_steps = {s.id for s in c.earlier if s.names_exist is not None}
    for k, sid in enumerate(u.exact):
        if sid not in names_steps:
            report((*uloc, "exact", k), f"exact names {sid!r}, not an earlier names_exist step",
                   f"names_exist steps: {', '.join(sorted(names_steps)) or 'none'}")
    sets = [_set(m, (*uloc, "sets", k), shows, c, report) for k, m in enumerate(u.sets)]
    toggles = [_toggle(t, (*uloc, "toggles", k), shows, c, report) for k, t in enumerate(u.toggles)]
    version = None
    if u.version is not None:
        vloc = (*uloc, "version")
        if u.version.param not in c.params:
            report((*vloc, "param"), f"version names {u.version.param!r}, not a parameter",
                   f"parameters: {', '.join(sorted(c.params))}")
        if u.version.shape not in c.versioned:
            report((*vloc, "shape"), f"shape {u.version.shape!r} declares no version",
                   f"shapes with a version: {', '.join(sorted(c.versioned)) or 'none'}")
        version = VersionCheck(param=u.version.param, shape=u.version.shape, repair=_repair(u.version.repair))
    if problems.count:
        return None
    return UpdatePlan(against=u.against, noun=u.noun, shows=shows, sent_with=tuple(sent_with),
                      sets=tuple(s for s in sets if s is not None), toggles=tuple(t for t in toggles if t),
                      version=version, exact=tuple(u.exact), changed=u.changed, ignored=u.ignored)


def _shows(raw: Mapping[str, Any], loc: Loc, c: Context, report: Report) -> dict[str, Shown]:
    out: dict[str, Shown] = {}
    for name, value in raw.items():
        source, normalize = (value, None) if isinstance(value, str) else (value.source, value.normalize)
        path = split_path(source)
        if not all(part == "[]" or part.isidentifier() for part in path) or path[0] == "[]":
            report((*loc, name), f"{source!r} is not a dotted path in the resource",
                   "e.g. title, milestone.number, labels[].name")
        if normalize is not None and normalize not in TRANSFORMS:
            guess = closest(normalize, list(TRANSFORMS))
            report((*loc, name, "normalize"), f"unknown transform {normalize!r}",
                   f"did you mean {guess!r}?" if guess else f"transforms: {', '.join(TRANSFORMS)}")
        out[name] = Shown(path=path, normalize=normalize)
    return out


def _op(call: str, loc: Loc, c: Context, report: Report) -> tuple[SpecOperation, Operation] | None:
    spec, op = c.ops.get(call), c.runtime_ops.get(call)
    if spec is None or op is None:
        guess = closest(call, list(c.ops))
        report(loc, f"unknown operationId {call!r}", f"did you mean {guess!r}?" if guess else "")
        return None
    return spec, op


def _path(spec: SpecOperation, explicit: Mapping[str, Any], loc: Loc, c: Context, report: Report,
          own: str | None = None) -> dict[str, Any]:
    """A plan request's path parameters but `own` (the member): `path:` templates over the tool's
    parameters, else the parameter mapped there or of that name (path_filler)."""
    params = list(c.params.values())
    bound = bind_path(spec.operation_id, explicit, spec, loc, path_filler(params, spec.operation_id), report, own)
    for key, template in explicit.items():
        for ref in references(template):
            if ref.path[0] not in c.params:
                report((*loc, "path", key), f"template reads {ref.path[0]!r}, not a parameter",
                       f"parameters are: {', '.join(sorted(c.params))}")
    return bound


def member_types(c: Context, param: str) -> set[str]:
    """What one member of list parameter `param` is once it reaches a request: its items' types,
    with names turned into ids where the parameter resolves them."""
    p = c.params.get(param)
    items = p.schema.get("items") if p is not None else None
    kinds = schema_types(items) if isinstance(items, Mapping) else set()
    if param in c.resolved:
        kinds = (kinds - {"string"}) | {c.resolved[param]}
    return kinds - {"null"}


def _member_type(w: MemberWriteDef, spec: SpecOperation, loc: Loc, c: Context, report: Report) -> None:
    """A member sent where the operation takes another type (names into an integer `{id}`) fails
    at run time: refused here (rule binding-paths)."""
    given = member_types(c, w.param)
    if w.each is not None:
        target = accepted_types(c.document, spec_fields(c.document, spec, "path").get(w.each, {}))
        where = (*loc, "each")
    else:
        field = resolve_ref(c.document, spec_fields(c.document, spec, "body").get(w.body or "", {}))
        target = accepted_types(c.document, field["items"]) if "items" in field else set()
        where = (*loc, "body")
    wanted = target
    if given and target and not given & wanted:
        hint = ("resolve the names to ids (`resolve:` on the parameter, a listing whose rows carry both)"
                if "string" in given and "integer" in target else "send members of the type the operation takes")
        report(where, f"{spec.operation_id} takes each member as {'/'.join(sorted(target))}, but "
               f"{w.param!r} holds {'/'.join(sorted(given))}", hint, "binding-paths")


def _set(m: Any, loc: Loc, shows: Mapping[str, Shown], c: Context, report: Report) -> MemberSet | None:
    view = shows.get(m.view)
    if view is None or len(view.path) not in (2, 3) or view.path[1] != "[]":
        report((*loc, "view"), f"set view {m.view!r} is not a shows entry of the form list[].key",
               "e.g. labels: \"labels[].name\" under shows, then view: labels")
        return None
    writes: list[MemberWrite | None] = []
    for key in ("add", "remove"):
        w: MemberWriteDef | None = getattr(m, key)
        if w is None:
            writes.append(None)
            continue
        wloc = (*loc, key)
        p = c.params.get(w.param)
        if p is None or "array" not in schema_types(p.schema):
            report((*wloc, "param"), f"{key} names {w.param!r}, not an array parameter",
                   "the parameter listing the members to " + key)
        if (w.each is None) == (w.body is None):
            report(wloc, f"{key} needs `each` (one request per member) or `body` (one for all), not "
                   + ("both" if w.each else "neither"), "e.g. each: name, or body: labels")
        if key == "add" and w.each is not None:
            report((*wloc, "each"), "add writes the missing members in one request",
                   "give body: <the field listing them>")
        found = _op(w.call, (*wloc, "call"), c, report)
        path: dict[str, Any] = {}
        if found is not None:
            spec, _ = found
            if w.each is not None and w.each not in path_names(spec):
                report((*wloc, "each"), f"{w.call} has no path parameter {w.each!r}",
                       f"its path parameters: {', '.join(path_names(spec))}")
            if w.body is not None and w.body not in spec_fields(c.document, spec, "body"):
                report((*wloc, "body"), f"{w.call} has no body field {w.body!r}",
                       f"body fields: {', '.join(sorted(spec_fields(c.document, spec, 'body'))) or 'none'}")
            path = _path(spec, w.path, wloc, c, report, own=w.each)
            _member_type(w, spec, wloc, c, report)
        if w.done is not None and w.done not in c.codes:
            report((*wloc, "done"), f"error code {w.done!r} is not in error_codes", "declare it under error_codes")
        if found is None:
            writes.append(None)
            continue
        writes.append(MemberWrite(param=w.param, operation=found[1], each=w.each, body=w.body,
                                  answer=split_path(w.answer) if w.answer else (() if w.answer == "" else None),
                                  done=w.done, path=path))
    if m.add is None and m.remove is None:
        report(loc, f"set {m.view!r} declares neither add nor remove", "give add:, remove: or both")
    if m.max is not None and m.add is None:
        report((*loc, "max"), f"set {m.view!r} has a max but no add", "max limits what an add can write")
    return MemberSet(view=m.view, kind=m.kind, add=writes[0], remove=writes[1], max=m.max)


def _toggle(t: Any, loc: Loc, shows: Mapping[str, Shown], c: Context, report: Report) -> Toggle | None:
    p = c.params.get(t.param)
    if p is None or "boolean" not in schema_types(p.schema):
        report((*loc, "param"), f"toggle names {t.param!r}, not a boolean parameter", "e.g. locked")
    for name, where in ((t.param, "param"), (t.reason, "reason")):
        if name is not None and (name not in shows or len(shows[name].path) != 1):
            report((*loc, where), f"{name!r} needs a shows entry naming one field of the resource",
                   f"e.g. {name}: <field>")
    if t.reason is not None and t.reason not in c.params:
        report((*loc, "reason"), f"reason names {t.reason!r}, not a parameter", "")
    ops, paths = [], []
    for key in ("on_true", "on_false"):
        found = _op(getattr(t, key), (*loc, key), c, report)
        if found is not None:
            paths.append(_path(found[0], t.path, (*loc, key), c, report))
            if key == "on_true" and t.reason is not None and t.reason not in spec_fields(c.document, found[0], "body"):
                report((*loc, "reason"), f"{t.on_true} has no body field {t.reason!r}", "the reason is sent under its name")
            ops.append(found[1])
    if len(ops) != 2:
        return None
    return Toggle(param=t.param, on=ops[0], off=ops[1], reason=t.reason, on_path=paths[0], off_path=paths[1])


def update_codes(raw: StepDef) -> set[str]:
    """The codes a declared plan can raise besides its operations' (for the tool's code list)."""
    u = raw.update
    if u is None:
        return set()
    codes = set(PLAN_CODES) | ({"conflict"} if u.version is not None else set())
    return codes | {w.done for m in u.sets for w in (m.add, m.remove) if w is not None and w.done}

