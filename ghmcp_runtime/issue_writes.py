"""The writes of a partial issue update as `writes.Step`s, one upstream request each, in order:
the issue's own fields (issues/update, only what differs), add labels, remove each label, lock or
unlock. The hook resolves names and checks versions first; writes.run_steps sends and judges.

Parameters are the update tool's (issue_views keys); `current` is GitHub's issue JSON as read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.context import ToolContext, UpstreamResponse
from ghmcp_runtime.errors import UpstreamError
from ghmcp_runtime.issue_views import ISSUE_VIEWS, label_names
from ghmcp_runtime.model import Operation
from ghmcp_runtime.writes import Resource, Step

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


def patch_body(args: Mapping[str, Any], current: Mapping[str, Any], targets: Mapping[str, Any]) -> dict[str, Any]:
    """The issues/update body: only fields whose value differs from what the issue shows."""
    patch = {field: args[p] for field, p in PATCHED.items()
             if p in targets and ISSUE_VIEWS[p](current) != targets[p]}
    if "state" in patch:  # closing or reopening: GitHub's reasons unless one was given
        patch["state_reason"] = args.get("state_reason", "completed" if patch["state"] == "closed" else "reopened")
    elif "state_reason" in patch:
        patch["state"] = current["state"]  # GitHub reads state_reason only together with state
    return patch


def _with_labels(issue: Resource, resp: UpstreamResponse | None) -> Resource:
    return {**issue, "labels": resp.data} if resp is not None else issue


def _removal(ctx: ToolContext, op: Operation, path: Mapping[str, Any], name: str) -> Step:
    def gone(issue: Resource, resp: UpstreamResponse | None) -> Resource:
        if resp is not None:
            return _with_labels(issue, resp)
        return {**issue, "labels": [lb for lb in issue["labels"] if lb["name"] != name]}

    return Step(("remove_labels",), lambda: ctx.call(op, path={**path, "name": name}),
                gone, done_if=lambda err: isinstance(err, UpstreamError) and err.status == 404
                and err.code == "label_not_found")  # already off the issue


def update_steps(ctx: ToolContext, ops: IssueOps, args: Mapping[str, Any], current: Mapping[str, Any],
                 targets: Mapping[str, Any], add: Sequence[str], remove: Sequence[str]) -> list[Step]:
    """One write per step, only those that change something; `add`/`remove` are exact names."""
    path = {"owner": args["owner"], "repo": args["repo"], "issue_number": args["issue_number"]}
    steps: list[Step] = []
    if patch := patch_body(args, current, targets):
        steps.append(Step(tuple(PATCHED[k] for k in patch),
                          lambda: ctx.call(ops.update, path=path, body=patch),
                          lambda issue, resp: dict(resp.data) if resp is not None else issue))
    on_issue = set(label_names(current))
    if adding := [n for n in add if n not in on_issue]:
        steps.append(Step(("add_labels",),
                          lambda: ctx.call(ops.add_labels, path=path, body={"labels": adding}),
                          _with_labels))
    steps += [_removal(ctx, ops.remove_label, path, name) for name in remove if name in on_issue]
    reason = args.get("lock_reason")
    if args.get("locked") is True and (not current.get("locked") or
                                       reason not in (None, current.get("active_lock_reason"))):
        steps.append(Step(("locked", "lock_reason"),
                          lambda: ctx.call(ops.lock, path=path,
                                           body={"lock_reason": reason} if reason else None),
                          lambda issue, _: {**issue, "locked": True, "active_lock_reason": reason}))
    elif args.get("locked") is False and current.get("locked"):
        steps.append(Step(("locked",), lambda: ctx.call(ops.unlock, path=path),
                          lambda issue, _: {**issue, "locked": False, "active_lock_reason": None}))
    return steps
