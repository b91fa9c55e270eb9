"""How a resource shows a value, and what an update asks for, as an `UpdatePlan`'s views see
both (`Shown`: a path in the resource's JSON, read through a transform; lists as sets)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ghmcp_runtime.core.declared import MemberSet, Shown, UpdatePlan
from ghmcp_runtime.core.refs import Ref, parse
from ghmcp_runtime.core.transforms import normalizer
from ghmcp_runtime.engine.writes import Views


def _plain(value: Any) -> Any:
    return None if value is None or value is False or value == "" else value


def items(value: Any, key: str | None) -> list[Any]:
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


def set_field(s: MemberSet, plan: UpdatePlan) -> tuple[str, str | None]:
    """The resource's list field of a set and the member key in its rows (None: plain values)."""
    path = plan.shows[s.view].path
    return path[0], (path[2] if len(path) > 2 else None)


def member_key(plan: UpdatePlan, s: MemberSet) -> Callable[[Any], Any]:
    return normalizer(plan.shows[s.view].normalize)


def views(plan: UpdatePlan, args: Mapping[str, Any]) -> Views:
    """Every judged name -> its view: the `shows` entries, and each set's add/remove parameters
    as which of the members they name the resource holds."""
    out: dict[str, Callable[[Mapping[str, Any]], Any]] = {n: view_of(s) for n, s in plan.shows.items()}
    for s in plan.sets:
        whole, key = out[s.view], member_key(plan, s)
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
        field = set_field(s, plan)[0]
        out.update({p: field for p in (s.view, *(w.param for w in (s.add, s.remove) if w is not None))
                    if p != field})
    return out
