"""What a GitHub issue shows, parameter by parameter: the views writes.py judges writes by.

Keys are the issue tools' parameter names; each view maps GitHub's issue JSON to a value that
compares equal exactly when the issue shows the same thing (assignee logins ignore case, label
and assignee order does not matter).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ghmcp_runtime.engine.catalog import fold


def label_names(issue: Mapping[str, Any]) -> list[str]:
    return [str(lb["name"]) if isinstance(lb, Mapping) else str(lb) for lb in issue.get("labels") or []]


def logins(items: Sequence[Any]) -> frozenset[str]:
    """Logins (strings or user objects), compared as GitHub does: ignoring ASCII case."""
    return frozenset(fold(str(i["login"]) if isinstance(i, Mapping) else str(i)) for i in items)


def assignees(issue: Mapping[str, Any]) -> frozenset[str]:
    return logins(issue.get("assignees") or [])


ISSUE_VIEWS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "title": lambda i: (i.get("title") or "").strip(),  # GitHub trims titles
    "body": lambda i: i.get("body") or "",
    "state": lambda i: i.get("state"),
    "state_reason": lambda i: i.get("state_reason"),
    "assignee_logins": assignees,
    "milestone": lambda i: (i.get("milestone") or {}).get("number"),
    "labels": lambda i: frozenset(label_names(i)),
    "locked": lambda i: bool(i.get("locked")),
    "lock_reason": lambda i: i.get("active_lock_reason"),
}


# the issue row's field a parameter changes, where the names differ (writes.run_steps `names`):
# changed_fields and applied_fields name the issue's fields
ROW_FIELD = {"assignee_logins": "assignees", "add_assignees": "assignees", "remove_assignees": "assignees",
             "add_labels": "labels", "remove_labels": "labels"}


def label_views(add: Sequence[str], remove: Sequence[str]) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    """Views of add_labels/remove_labels: which of the named labels (exact names) the issue holds."""
    return {"add_labels": lambda i: frozenset(label_names(i)) & set(add),
            "remove_labels": lambda i: frozenset(label_names(i)) & set(remove)}


def assignee_views(add: Sequence[str], remove: Sequence[str]) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
    """Views of add_assignees/remove_assignees: which of the named logins are assigned."""
    adding, removing = logins(add), logins(remove)
    return {"add_assignees": lambda i: assignees(i) & adding,
            "remove_assignees": lambda i: assignees(i) & removing}


def issue_targets(args: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """The values asked for, as the views see them (only the parameters passed), in `fields` order;
    label names must be the exact ones (catalog.require_names)."""
    out = {f: args[f] for f in fields if f in args}
    if isinstance(out.get("title"), str):
        out["title"] = out["title"].strip()
    for name in ("assignee_logins", "add_assignees"):
        if name in out:
            out[name] = logins(out[name])
    for name in ("labels", "add_labels"):
        if name in out:
            out[name] = frozenset(out[name])
    for name in ("remove_labels", "remove_assignees"):
        if name in out:
            out[name] = frozenset()  # none of them left on the issue
    return out
