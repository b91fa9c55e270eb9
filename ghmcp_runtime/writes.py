"""Multi-step writes whose answer is what GitHub shows, not what was asked.

A partial update becomes waves of `Step`s (one upstream write each). The steps of a wave touch
disjoint parts of the resource, so they are sent together (at most concurrent.MAX_CONCURRENT at
once) and every interleaving ends in the same state; waves run one after another. After a wave,
GitHub's answers are applied in declared order (never in arrival order), so the resource is
followed deterministically. Parameters are then judged by their `views` (a parameter's value as
the resource shows it) against `targets` (the value asked for):

* changed: GitHub now shows the target and did not before;
* ignored: the writes succeeded, but GitHub does not show the target (it dropped or rewrote it);
* applied (on failure): GitHub shows a different value than before the call. Every step of the
  failing wave ran to its end: those that succeeded are applied, a failed one is not.

A step whose answer was lost (`OutcomeUnknown`) is settled by re-reading the resource once the
wave has ended: the read is what GitHub holds; if the step's effect shows, the walk goes on from
it; otherwise the call fails saying so. Every failure after the first write carries
`details.applied_fields`.

`names` maps a parameter to the resource field it changes (add_labels -> labels): changed and
applied fields are reported by field, each once; ignored ones stay parameters (what was asked).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.concurrent import outcomes
from ghmcp_runtime.context import UpstreamResponse
from ghmcp_runtime.errors import OutcomeUnknown, ToolError, WriteLog

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
    # what this step alone changes, as the resource shows it (default: the views of `fields`);
    # needed when steps of one wave serve the same parameter (one label removal each)
    effect: Callable[[Mapping[str, Any]], Any] | None = None

    def shows(self, views: Views, before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
        """Whether `after` shows this step's change over `before`."""
        if self.effect is not None:
            return bool(self.effect(before) != self.effect(after))
        return bool(_differs(views, self.fields, before, after))


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


def named(params: Sequence[str], names: Mapping[str, str]) -> list[str]:
    """The fields `params` change, in order, each once."""
    return list(dict.fromkeys(names.get(p, p) for p in params))


def judge(before: Mapping[str, Any], after: Resource, views: Views, targets: Mapping[str, Any],
          names: Mapping[str, str] | None = None) -> Outcome:
    ignored = unmet(after, views, targets)
    changed = [f for f in _differs(views, list(targets), before, after) if f not in ignored]
    return Outcome(after, named(changed, names or {}), ignored)


async def run_steps(waves: Sequence[Sequence[Step]], before: Resource, *, views: Views,
                    targets: Mapping[str, Any], reread: Callable[[], Awaitable[Resource]],
                    names: Mapping[str, str] | None = None, log: WriteLog | None = None) -> Outcome:
    """Send the waves in order (a wave's steps together), following the resource; judge it
    against the targets. `log` (the call's `ToolContext.writes`) is kept current, so an error
    raised after a write, here or by the caller, names exactly what was applied."""
    now = before
    log = log if log is not None else WriteLog()
    for wave in waves:
        now = await _run_wave(wave, before, now, views, list(targets), names or {}, reread, log)
    return judge(before, now, views, targets, names)


async def _run_wave(wave: Sequence[Step], before: Resource, now: Resource, views: Views,
                    fields: list[str], names: Mapping[str, str],
                    reread: Callable[[], Awaitable[Resource]], log: WriteLog) -> Resource:
    log.sent = True
    answers = await outcomes([step.send for step in wave])
    start = now
    failed: list[tuple[int, ToolError]] = []  # by position in the wave
    lost: list[tuple[int, ToolError]] = []
    for i, (step, answer) in enumerate(zip(wave, answers, strict=True)):
        if isinstance(answer, UpstreamResponse):
            now = step.apply(now, answer)
        elif not isinstance(answer, ToolError):
            raise answer
        elif step.done_if(answer):
            now = step.apply(now, None)
        else:
            (lost if isinstance(answer, OutcomeUnknown) else failed).append((i, answer))
    settled = await _settle(reread) if lost else None
    if settled is not None:
        now = settled  # what GitHub holds once every write of the wave has ended
        failed += [(i, err) for i, err in lost if not wave[i].shows(views, start, settled)]
        lost = []
    log.applied = named(_differs(views, fields, before, now), names)
    if not failed and not lost:
        return now
    log.unknown = named([f for i, _ in lost for f in wave[i].fields], names)
    first = min(failed + lost, key=lambda pair: pair[0])[1]
    if isinstance(first, OutcomeUnknown) and settled is not None:
        first.not_applied()
    raise log.annotate(first) from None


async def _settle(reread: Callable[[], Awaitable[Resource]]) -> Resource | None:
    try:
        return await reread()
    except ToolError:
        return None
