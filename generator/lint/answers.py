"""Rule `write-answer`: a write's answer shows every field the write can change (issue 34, item 5),
so an agent confirms a write from its answer instead of reading the resource back.

What a declared write can change is what it compares: the `update` recipe's `shows` and a
`compare` step's fields, paths in the resource's JSON. Each must be read by a field of a row the
tool answers with from that step (its shape at the output's density, with `include`, less
`omit`). Text the write sends under `stored` is exempt: `stored_as_sent` answers for it without
repeating a body that may be 64 KiB.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.build.ir import IRField, IRShape, IRTool
from generator.lint.ctx import Ctx
from ghmcp_runtime.core.declared import Output, Step

RULE = "write-answer"


def check(ctx: Ctx) -> None:
    shapes = {s.name: s for s in ctx.server.shapes}
    for tool in ctx.server.tools:
        if tool.declaration is None or tool.annotations.read_only:
            continue
        for step in tool.declaration.steps:
            changed = _changeable(step)
            if not changed:
                continue
            shown = {_listed(path) for out in tool.declaration.output if step.id in out.sources
                     and out.shape in shapes for path in _shown(shapes[out.shape], out)}
            missing = [name for name, path in changed.items() if _listed(path) not in shown]
            if missing:
                ctx.error(ctx.where(tool, "output"), RULE,
                          f"{tool.name}: its answer leaves out {', '.join(missing)}, which step "
                          f"{step.id!r} can change", _hint(tool))


def _hint(tool: IRTool) -> str:
    return (f"show them in the row {tool.name} answers with from that step (`include:` adds "
            "full-density fields to summary rows), so no read-back is needed")


def _changeable(step: Step) -> dict[str, tuple[str, ...]]:
    """Name -> resource path of what the write step can change, less the text `stored` answers for."""
    if step.update is not None:
        found = {name: shown.path for name, shown in step.update.shows.items()}
    elif step.compare is not None:
        found = {name: tuple(path.split(".")) for name, path in step.compare.fields.items()}
    else:
        return {}
    stored = {path for path in step.stored.fields.values()} if step.stored is not None else set()
    return {name: path for name, path in found.items() if path not in stored}


def _listed(path: tuple[str, ...]) -> tuple[str, ...]:
    """A list's members are shown when the answer names them by any field (a label by its name,
    while the write compares ids): the path up to the list."""
    return path[:path.index("[]") + 1] if "[]" in path else path


def _shown(shape: IRShape, out: Output) -> Iterator[tuple[str, ...]]:
    density = out.detail or "full"
    for f in shape.fields:
        if f.name in out.omit or (density == "summary" and f.detail == "full" and f.name not in out.include):
            continue
        yield from _paths(f, f.path)


def _paths(f: IRField, at: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    yield at
    for nested in f.nested:
        yield from _paths(nested, (*at, *nested.path))
