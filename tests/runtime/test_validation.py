from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ghmcp_runtime.validation import ArgumentValidator

SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["owner", "repo"],
    "properties": {
        "owner": {"type": "string", "pattern": "^[A-Za-z0-9-]+$", "maxLength": 39},
        "repo": {"type": "string", "minLength": 1, "maxLength": 100},
        "title": {"type": "string", "maxLength": 10},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
        "labels": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 2,
                   "uniqueItems": True},
        "milestone": {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        "since": {"type": "string", "format": "date-time"},
        "filter": {"type": "object", "additionalProperties": False,
                   "properties": {"a": {"type": "integer"}}},
    },
}
V = ArgumentValidator(SCHEMA)
OK = {"owner": "octo", "repo": "hello"}


def check(args: Any) -> tuple[str, str]:
    err = V.validate(args)
    assert err is not None and err.code == "invalid_field" and not err.temporary
    assert err.details is not None and set(err.details) == {"field", "reason"}
    return err.details["field"], err.details["reason"]


def test_valid_and_none() -> None:
    assert V.validate(OK) is None
    assert V.validate({**OK, "milestone": None, "since": "2024-01-01T00:00:00Z"}) is None
    assert check(None) == ("owner", "is required")


@pytest.mark.parametrize(("args", "field", "reason"), [
    ([1, 2], "arguments", "must be a JSON object"),
    ("text", "arguments", "must be a JSON object"),
    ({"repo": "r"}, "owner", "is required"),
    ({"owner": "o"}, "repo", "is required"),
    ({**OK, "owner": "a b"}, "owner", "must match the pattern ^[A-Za-z0-9-]+$"),
    ({**OK, "owner": 5}, "owner", "must be of type string"),
    ({**OK, "repo": ""}, "repo", "must be at least 1 characters long"),
    ({**OK, "title": "x" * 11}, "title", "must be at most 10 characters long"),
    ({**OK, "state": "opne"}, "state", 'must be one of: "open", "closed"'),
    ({**OK, "per_page": 0}, "per_page", "must be at least 1"),
    ({**OK, "per_page": 101}, "per_page", "must be at most 100"),
    ({**OK, "per_page": 1.5}, "per_page", "must be of type integer"),
    ({**OK, "labels": ["a", "b", "c"]}, "labels", "must have at most 2 items"),
    ({**OK, "labels": ["a", "a"]}, "labels", "must not contain duplicate items"),
    ({**OK, "labels": ["ok", "toolong"]}, "labels", "item 1 must be at most 5 characters long"),
    ({**OK, "milestone": 0}, "milestone", "must be at least 1"),
    ({**OK, "milestone": "v1"}, "milestone", "must be of type integer or null"),
    ({**OK, "since": "yesterday"}, "since", "must be a valid date-time"),
    ({**OK, "filter": {"a": "x"}}, "filter.a", "must be of type integer"),
    ({**OK, "zzz": 1}, "zzz", "is not a known parameter; allowed: owner, repo, title, state, "
                              "per_page, labels, milestone, since, filter"),
])
def test_reasons(args: Any, field: str, reason: str) -> None:
    assert check(args) == (field, reason)


def test_first_error_follows_schema_property_order() -> None:
    # errors on state (4th property), owner (1st) and an unknown key: owner wins
    assert check({"repo": "r", "state": "x", "owner": "a b", "zz": 1})[0] == "owner"
    assert check({"owner": "o", "repo": "r", "state": "x", "per_page": 0})[0] == "state"
    assert check({"owner": "o", "repo": "r", "zz": 1, "per_page": 0})[0] == "per_page"


def test_unknown_property_name_is_truncated_and_redacted() -> None:
    field, _ = check({**OK, "k" * 100: 1})
    assert field == "k" * 64
    field, _ = check({**OK, "ghp_" + "a" * 36: 1})
    assert "ghp_" not in field


MARK = "\u2603"  # never appears in a schema, so any echo of the value would be visible
values = st.text(min_size=1, max_size=300).map(lambda s: MARK + s)


@settings(max_examples=150, deadline=None)
@given(field=st.sampled_from(["owner", "repo", "title", "state", "since", "milestone", "per_page"]),
       value=values)
def test_reasons_never_contain_the_value(field: str, value: str) -> None:
    err = V.validate({**OK, field: value})
    if err is None:  # e.g. any string is a valid repo
        return
    text = json.dumps(err.envelope(request_id="r", fingerprint="f"), ensure_ascii=False) + err.message
    assert MARK not in text


@settings(max_examples=100, deadline=None)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | values,
                          lambda inner: st.lists(inner, max_size=3)
                          # keys are names, echoed by design for unknown properties
                          | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=3)))
def test_nested_values_never_echoed(value: Any) -> None:
    for key in ("labels", "filter", "milestone"):
        err = V.validate({**OK, key: value})
        if err is not None:
            assert MARK not in json.dumps(err.envelope(request_id="r", fingerprint="f"),
                                          ensure_ascii=False)
