"""The writes of a partial issue update as waves of `writes.Step`s, one upstream request each:
the issue's own fields (issues/update, only what differs), add labels, remove each label, remove
assignees, add assignees, lock or unlock. The hook resolves names and checks versions first;
writes.run_steps sends and judges.

The writes touch disjoint state: the issue's fields (the PATCH sends no `labels`, and no
`assignees` when assignees are added or removed), distinct label names (add_labels and
remove_labels never share one), distinct logins and the lock. So they go out together and every
order in which GitHub applies them ends in the same issue; a writer elsewhere changing other
labels, assignees or fields is never undone, because nothing here sends a whole set it did not
ask to replace (a PATCH of `labels` would drop a label added between our read and our write).

No re-read is needed to know the result: the PATCH answers with the issue, lock and unlock change
only the lock, and a label or assignee request answers with the issue's whole label list (or
issue), which is final for that field only if no other request of ours on it runs beside it. So
with two or more requests on one field, all but one go in the first wave (each followed by its own
effect) and one, the add when there is one, goes alone on that field in a second wave: its answer
is the field after all of them.

Parameters are the update tool's (hooks_views keys); `current` is GitHub's issue JSON as read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.calls.context import ToolContext, UpstreamResponse
from ghmcp_runtime.core.errors import UpstreamError
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.engine.catalog import fold
from ghmcp_runtime.engine.writes import Resource, Step

from .hooks_views import ISSUE_VIEWS, assignees, issue_targets, label_names

# issues/update body field -> the parameter that sets it
PATCHED = {"title": "title", "body": "body", "state": "state", "state_reason": "state_reason",
           "assignees": "assignee_logins", "milestone": "milestone"}


@dataclass(frozen=True, slots=True)
class IssueOps:
    """The generated server's operations an update writes with."""

    update: Operation
    add_labels: Operation
    remove_label: Operation
    lock: Operation
    unlock: Operation
    add_assignees: Operation
    remove_assignees: Operation


def patch_body(args: Mapping[str, Any], current: Mapping[str, Any], targets: Mapping[str, Any]) -> dict[str, Any]:
    """The issues/update body: only fields whose value differs from what the issue shows."""
    patch = {field: args[p] for field, p in PATCHED.items()
             if p in targets and ISSUE_VIEWS[p](current) != targets[p]}
    if "state" in patch:  # closing or reopening: GitHub's reasons unless one was given
        patch["state_reason"] = args.get("state_reason", "completed" if patch["state"] == "closed" else "reopened")
    elif "state_reason" in patch and "state" in args:
        # GitHub reads state_reason only together with state: the caller's state goes with it,
        # never the state read earlier (that would undo a reopen or close made since); alone,
        # GitHub ignores it and the answer says so (ignored_fields)
        patch["state"] = args["state"]
    return patch


def _with_labels(issue: Resource, resp: UpstreamResponse | None) -> Resource:
    return {**issue, "labels": resp.data} if resp is not None else issue


def _with_assignees(issue: Resource, resp: UpstreamResponse | None) -> Resource:
    return {**issue, "assignees": resp.data["assignees"]} if resp is not None else issue


def _logins(asked: Sequence[str], held: frozenset[str], *, assigned: bool) -> list[str]:
    """The logins asked for (each once, as first spelled) that are, or are not, `assigned`."""
    first = {fold(login): login for login in reversed(asked)}
    return [first[key] for key in dict.fromkeys(fold(login) for login in asked)
            if (key in held) == assigned]


def _assignment(ctx: ToolContext, op: Operation, path: Mapping[str, Any], param: str,
                logins: list[str]) -> Step:
    """One request adding or removing `logins`; GitHub answers with the issue."""
    return Step((param,), lambda: ctx.call(op, path=path, body={"assignees": logins}), _with_assignees)


def _without(name: str) -> Callable[[Resource, UpstreamResponse | None], Resource]:
    def gone(issue: Resource, resp: UpstreamResponse | None) -> Resource:
        return {**issue, "labels": [lb for lb in issue["labels"] if lb["name"] != name]}

    return gone


def _removal(ctx: ToolContext, op: Operation, path: Mapping[str, Any], name: str, *, final: bool) -> Step:
    """One label's DELETE; a `final` one is followed by GitHub's answer (the whole label list)."""
    own = _without(name)

    def apply(issue: Resource, resp: UpstreamResponse | None) -> Resource:
        return _with_labels(issue, resp) if final and resp is not None else own(issue, resp)

    return Step(("remove_labels",), lambda: ctx.call(op, path={**path, "name": name}), apply,
                done_if=lambda err: isinstance(err, UpstreamError) and err.status == 404
                and err.code == "label_not_found",  # already off the issue
                effect=lambda issue: name in label_names(issue))


def concurrent_fields(current: Mapping[str, Any], patched: Mapping[str, Any],
                      steps: Sequence[Sequence[Step]]) -> list[str]:
    """Issue fields (parameters) another writer changed between the read and the PATCH: its
    answer shows them other than read, though no write of this call touches them."""
    touched = {f for wave in steps for step in wave for f in step.fields}
    if {"add_labels", "remove_labels"} & touched:
        touched.add("labels")
    if {"add_assignees", "remove_assignees"} & touched:
        touched.add("assignee_logins")
    if "state" in touched:  # GitHub sets the reason with the state
        touched.add("state_reason")
    return [f for f, view in ISSUE_VIEWS.items() if f not in touched and view(patched) != view(current)]


def update_steps(ctx: ToolContext, ops: IssueOps, args: Mapping[str, Any], current: Mapping[str, Any],
                 targets: Mapping[str, Any], add: Sequence[str], remove: Sequence[str],
                 answers: dict[str, Any] | None = None) -> list[list[Step]]:
    """The waves of writes (only those that change something); `add`/`remove` are exact names.
    `answers["patch"]` gets the PATCH's answer (the issue as GitHub then holds it).

    The PATCH comes first in its wave: its answer replaces the whole issue, and the other steps'
    effects are applied over it (run_steps applies a wave's answers in this order)."""
    path = {"owner": args["owner"], "repo": args["repo"], "issue_number": args["issue_number"]}
    first: list[Step] = []
    seen = answers if answers is not None else {}

    def patched(issue: Resource, resp: UpstreamResponse | None) -> Resource:
        if resp is None:
            return issue
        seen["patch"] = resp.data
        return dict(resp.data)

    if patch := patch_body(args, current, targets):
        params = {PATCHED[k]: v for k, v in patch.items()}
        first.append(Step(tuple(params), lambda: ctx.call(ops.update, path=path, body=patch),
                          patched, sent=issue_targets(params, list(params))))
    on_issue = set(label_names(current))
    adding = [n for n in add if n not in on_issue]
    removing = [n for n in remove if n in on_issue]
    labels = [_removal(ctx, ops.remove_label, path, name, final=not adding and i == len(removing) - 1)
              for i, name in enumerate(removing)]
    if adding:
        labels.append(Step(("add_labels",),
                           lambda: ctx.call(ops.add_labels, path=path, body={"labels": adding}),
                           _with_labels))
    held = assignees(current)
    people = [_assignment(ctx, op, path, param, logins) for param, op, logins in (
        ("remove_assignees", ops.remove_assignees, _logins(args.get("remove_assignees", []), held, assigned=True)),
        ("add_assignees", ops.add_assignees, _logins(args.get("add_assignees", []), held, assigned=False)),
    ) if logins]
    groups = (labels, people)  # the requests on one field each
    first += [step for group in groups for step in group[:-1]]
    reason = args.get("lock_reason")
    if args.get("locked") is True and (not current.get("locked") or
                                       reason not in (None, current.get("active_lock_reason"))):
        first.append(Step(("locked", "lock_reason"),
                          lambda: ctx.call(ops.lock, path=path,
                                           body={"lock_reason": reason} if reason else None),
                          lambda issue, _: {**issue, "locked": True, "active_lock_reason": reason},
                          sent={"locked": True, "lock_reason": reason}))
    elif args.get("locked") is False and current.get("locked"):
        first.append(Step(("locked",), lambda: ctx.call(ops.unlock, path=path),
                          lambda issue, _: {**issue, "locked": False, "active_lock_reason": None},
                          sent={"locked": False}))
    last = [group[-1] for group in groups if group]
    if all(len(group) <= 1 for group in groups):  # one request per field: each answer is final
        return [wave for wave in (first + last,) if wave]
    return [first, last]
