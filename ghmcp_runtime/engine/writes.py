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
wave has ended, by what the step sent (`Step.verdict`): the same resource (`id`) showing the
values sent -> applied, the walk goes on from the re-read; the old values unchanged (and, in the
first wave with nothing else of it applied, `updated_at` unchanged too, so an edit reverted by
someone else is not taken for "not applied") -> not applied; anything else (another writer's
change) -> unknown, named in the message. Every failure after the first write carries
`details.applied_fields`.

`names` maps a parameter to the resource field it changes (add_labels -> labels): changed and
applied fields are reported by field, each once; ignored ones stay parameters (what was asked).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.core.concurrent import outcomes
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError, WriteLog
from ghmcp_runtime.engine.settle import Verdict, same_resource

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
    # the values this request sent, as the views show them (default: the targets of `fields`);
    # a PATCH also sends values nobody asked for (a closing reason GitHub would default)
    sent: Mapping[str, Any] | None = None

    def verdict(self, views: Views, targets: Mapping[str, Any], before: Mapping[str, Any],
                after: Mapping[str, Any], *, stamped: bool) -> Verdict:
        """A lost answer judged by a re-read `after` against the resource `before` the wave:
        applied when it shows what this step sent, not applied when what the step touches is
        unchanged (with `stamped`, `updated_at` too), else unknown."""
        if not same_resource(before, after):
            return Verdict.UNKNOWN
        if self.effect is not None:  # sent only to change it: shown once it changed
            if self.effect(before) != self.effect(after):
                return Verdict.APPLIED
        else:
            sent = self.sent if self.sent is not None else {
                f: targets[f] for f in self.fields if f in targets}
            if sent and all(views[f](after) == value for f, value in sent.items()):
                return Verdict.APPLIED
            if _differs(views, list(sent) or self.fields, before, after):
                return Verdict.UNKNOWN
        quiet = not stamped or before.get("updated_at") == after.get("updated_at")
        return Verdict.NOT_APPLIED if quiet else Verdict.UNKNOWN


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
                    names: Mapping[str, str] | None = None, log: WriteLog | None = None,
                    check: Callable[[Resource], None] | None = None) -> Outcome:
    """Send the waves in order (a wave's steps together), following the resource; judge it
    against the targets. `log` (the call's `ToolContext.writes`) is kept current, so an error
    raised after a write, here or by the caller, names exactly what was applied. `check(now)`
    runs after every wave; a ToolError it raises ends the call before the next wave."""
    now = before
    log = log if log is not None else WriteLog()
    served: set[str] = set()  # parameters of the steps known to have taken effect
    for n, wave in enumerate(waves):
        now = await _run_wave(wave, before, now, views, targets, names or {}, reread, log, served,
                              first=n == 0)
        if check is not None:
            try:
                check(now)
            except ToolError as err:
                raise log.annotate(err) from None
    return judge(before, now, views, targets, names)


async def _run_wave(wave: Sequence[Step], before: Resource, now: Resource, views: Views,
                    targets: Mapping[str, Any], names: Mapping[str, str],
                    reread: Callable[[], Awaitable[Resource]], log: WriteLog, served: set[str], *,
                    first: bool) -> Resource:
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
            continue
        served.update(step.fields)
    settled = await _settle(reread) if lost else None
    if settled is not None:
        now = settled  # what GitHub holds once every write of the wave has ended
        # updated_at tells a revert from "not applied" only while nothing else of ours moved it
        stamped = first and len(lost) + len(failed) == len(wave)
        verdicts = [(i, err, wave[i].verdict(views, targets, start, settled, stamped=stamped))
                    for i, err in lost]
        failed += [(i, err) for i, err, v in verdicts if v is Verdict.NOT_APPLIED]
        lost = [(i, err) for i, err, v in verdicts if v is Verdict.UNKNOWN]
        served.update(f for i, _, v in verdicts if v is Verdict.APPLIED for f in wave[i].fields)
        for _, err in failed:
            if isinstance(err, OutcomeUnknown):
                err.not_applied()
    # what this call applied: a change the re-read shows in a field no write of ours took
    # effect on is someone else's
    log.applied = named([f for f in _differs(views, list(targets), before, now) if f in served], names)
    log.after = now
    if not failed and not lost:
        return now
    log.unknown = named([f for i, _ in lost for f in wave[i].fields], names)
    raise log.annotate(min(failed + lost, key=lambda pair: pair[0])[1]) from None


async def _settle(reread: Callable[[], Awaitable[Resource]]) -> Resource | None:
    try:
        return await reread()
    except ToolError:
        return None
