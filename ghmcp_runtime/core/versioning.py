"""Content-derived version tokens for optimistic concurrency on issues."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _names(items: Any, key: str) -> list[str]:
    if not isinstance(items, list):
        return []
    out = [item.get(key) if isinstance(item, Mapping) else item for item in items]
    return sorted(str(v) for v in out if v is not None)


def issue_version(raw_issue: Mapping[str, Any]) -> str:
    """"v1-" + 20 hex of sha256 over the user-editable state of a GitHub issue."""
    milestone = raw_issue.get("milestone")
    state = {
        "title": raw_issue.get("title"),
        "body": raw_issue.get("body"),
        "state": raw_issue.get("state"),
        "state_reason": raw_issue.get("state_reason"),
        "labels": _names(raw_issue.get("labels"), "name"),
        "assignees": _names(raw_issue.get("assignees"), "login"),
        "milestone": milestone.get("number") if isinstance(milestone, Mapping) else None,
        "locked": bool(raw_issue.get("locked", False)),
    }
    return "v1-" + hashlib.sha256(canonical_json(state)).hexdigest()[:20]
