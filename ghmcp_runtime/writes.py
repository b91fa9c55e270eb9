"""Multi-step writes whose answer is what GitHub shows, not what was asked.

A partial update becomes a list of `Step`s (one upstream write each). The resource is followed
step by step from GitHub's own answers; parameters are then judged by their `views` (a
parameter's value as the resource shows it) against `targets` (the value asked for):

* changed: GitHub now shows the target and did not before;
* ignored: the writes succeeded, but GitHub does not show the target (it dropped or rewrote it);
* applied (on failure): GitHub shows a different value than before the call.

A step whose answer was lost (`OutcomeUnknown`) is settled by re-reading the resource: if its
effect shows, the walk goes on from what was read; otherwise the call fails saying so. Every
failure after the first write carries `details.applied_fields`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.context import UpstreamResponse
from ghmcp_runtime.errors import OutcomeUnknown, ToolError

Resource = dict[str, Any]
Views = Mapping[str, Callable[[Mapping[str, Any]], Any]]


def _never(err: ToolError) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Step:
    fields: tuple[str, ...]  # the parameters this request serves
    send: Callable[[], Awaitable[UpstreamResponse]]
    # the resource after this step, from GitHub's answer (None when `done_if` accepted an error)
    apply: Callable[[Resource, UpstreamResponse | None], Resource]
    # an error meaning the step's effect already holds (e.g. removing a label that is gone)
    done_if: Callable[[ToolError], bool] = _never


@dataclass(frozen=True, slots=True)
class Outcome:
    after: Resource
    changed: list[str]
    ignored: list[str]


def _differs(views: Views, fields: Sequence[str], a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    return [f for f in fields if views[f](a) != views[f](b)]


def unmet(after: Mapping[str, Any], views: Views, targets: Mapping[str, Any]) -> list[str]:
    """Parameters whose target GitHub does not show, in `targets` order."""
    return [f for f, target in targets.items() if views[f](after) != target]


def judge(before: Mapping[str, Any], after: Resource, views: Views, targets: Mapping[str, Any]) -> Outcome:
    ignored = unmet(after, views, targets)
    changed = [f for f in _differs(views, list(targets), before, after) if f not in ignored]
    return Outcome(after, changed, ignored)


async def run_steps(steps: Sequence[Step], before: Resource, *, views: Views,
                    targets: Mapping[str, Any], reread: Callable[[], Awaitable[Resource]]) -> Outcome:
    """Send the steps in order, following the resource; judge it against the targets."""
    now = before
    for step in steps:
        try:
            resp = await step.send()
        except ToolError as err:
            if step.done_if(err):
                now = step.apply(now, None)
                continue
            settled = await _settle(reread) if isinstance(err, OutcomeUnknown) else None
            if settled is not None and _differs(views, step.fields, now, settled):
                now = settled  # the lost answer's change shows: go on from what GitHub holds
                continue
            raise _annotated(err, before, settled or now, views, list(targets),
                             unknown=None if settled is not None or not isinstance(err, OutcomeUnknown)
                             else step.fields) from None
        now = step.apply(now, resp)
    return judge(before, now, views, targets)


async def _settle(reread: Callable[[], Awaitable[Resource]]) -> Resource | None:
    try:
        return await reread()
    except ToolError:
        return None


def _annotated(err: ToolError, before: Mapping[str, Any], now: Mapping[str, Any], views: Views,
               fields: list[str], *, unknown: Sequence[str] | None) -> ToolError:
    if isinstance(err, OutcomeUnknown) and unknown is None:
        err.message = "GitHub's answer to a change was lost; a re-read shows it was not applied."
        err.details = {**(err.details or {}), "reason": "the change was not applied; repeat the call"}
    applied = _differs(views, fields, before, now)
    if applied:
        err.details = {**(err.details or {}), "applied_fields": applied}
        err.message += f" Applied before the failure: {', '.join(applied)}."
    if unknown is not None:
        err.message += f" Whether {', '.join(unknown)} changed is unknown: read the resource first."
    return err
