from __future__ import annotations

import re
from typing import Any

from ghmcp_runtime.core.versioning import issue_version

BASE: dict[str, Any] = {
    "title": "t", "body": "b", "state": "open", "state_reason": None,
    "labels": [{"name": "b"}, {"name": "a"}], "assignees": [{"login": "y"}, {"login": "x"}],
    "milestone": {"number": 3, "title": "m"}, "locked": False, "comments": 4, "updated_at": "x",
}


def test_format_and_stability() -> None:
    v = issue_version(BASE)
    assert re.fullmatch(r"v1-[0-9a-f]{20}", v)
    reordered = {**BASE, "labels": [{"name": "a"}, "b"], "assignees": [{"login": "x"}, {"login": "y"}]}
    assert issue_version(reordered) == v
    # fields outside the editable state do not matter
    assert issue_version({**BASE, "comments": 9, "updated_at": "y"}) == v


def test_each_editable_field_changes_the_version() -> None:
    v = issue_version(BASE)
    for change in ({"title": "u"}, {"body": None}, {"state": "closed"}, {"state_reason": "completed"},
                   {"labels": []}, {"assignees": [{"login": "x"}]}, {"milestone": None},
                   {"milestone": {"number": 4}}, {"locked": True}):
        assert issue_version({**BASE, **change}) != v, change
