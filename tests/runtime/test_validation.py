from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ghmcp_runtime.guards.validation import ArgumentValidator

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


# --- sizes before contents (ghmcp_runtime.guards.bounds) --------------------------------------------


class Untouchable(list[Any]):
    """A list whose length may be read but whose elements must not be visited."""

    def __iter__(self) -> Any:
        raise AssertionError("an element was visited")

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("an element was visited")


class NoElementValidation:
    """Fails the test if jsonschema is asked to validate anything."""

    def iter_errors(self, instance: Any) -> Any:
        raise AssertionError("jsonschema validated the arguments")


@pytest.fixture
def sizes_only(monkeypatch: pytest.MonkeyPatch) -> ArgumentValidator:
    validator = ArgumentValidator(SCHEMA)
    monkeypatch.setattr(validator, "_compiled", NoElementValidation())
    return validator


@pytest.mark.parametrize(("args", "field", "reason"), [
    # the review's probe: 1.3 million items took 51 s of jsonschema before maxItems applied
    ({**OK, "labels": Untouchable([0] * 1_300_000)}, "labels", "must have at most 2 items"),
    ({**OK, "title": "x" * 3_000_000}, "title", "must be at most 10 characters long"),
    ({**OK, "owner": "x" * 1_000_000}, "owner", "must be at most 39 characters long"),
    ({**OK, "labels": ["ok", "x" * 1_000_000]}, "labels", "item 1 must be at most 5 characters long"),
    # no schema bound applies below an unknown key: the whole call's budget does
    ({**OK, "zzz": Untouchable([0] * 3000)}, "arguments", "are too large: at most 2048 values in all"),
    ({**OK, "zzz": "x" * 300_000}, "arguments",
     "are too large: at most 262144 characters in all"),
    ({**OK, **{f"k{i}": 0 for i in range(5000)}}, "arguments",
     "are too large: at most 2048 values in all"),
])
def test_oversized_input_is_refused_before_any_element_is_validated(
    sizes_only: ArgumentValidator, args: Any, field: str, reason: str
) -> None:
    err = sizes_only.validate(args)
    assert err is not None and err.code == "invalid_field"
    assert err.details == {"field": field, "reason": reason}


def test_deep_nesting_is_refused_by_the_size_walk(sizes_only: ArgumentValidator) -> None:
    deep: Any = 0
    for _ in range(10_000):  # deeper than the interpreter's recursion limit
        deep = [deep]
    err = sizes_only.validate({**OK, "filter": {"a": deep}})
    assert err is not None and err.details == {
        "field": "arguments", "reason": "are nested more than 32 levels deep"}


def test_an_unknown_key_is_never_echoed_by_a_size_refusal(sizes_only: ArgumentValidator) -> None:
    name = MARK + "k" * 100_000
    err = sizes_only.validate({**OK, name: [0] * 5000})
    assert err is not None and MARK not in json.dumps(err.envelope(request_id="r", fingerprint="f"))


def test_arguments_within_every_bound_reach_schema_validation() -> None:
    largest = {**OK, "title": "x" * 10, "labels": ["abcde", "fghij"], "filter": {"a": 1}}
    assert V.validate(largest) is None


DATED = ArgumentValidator({"type": "object", "additionalProperties": False, "properties": {
    "since": {"type": "string", "format": "date-time"}}})


@pytest.mark.parametrize(("since", "valid"), [
    ("2024-03-01T12:00:00Z", True), ("2024-03-01t12:00:00.5+02:00", True),
    ("2000-01-01 repo:octo-org/secret", False),  # review t12: pasted into a search query
    ("2024-03-01", False), ("2024-03-01 12:00:00Z", False), ("2024-02-30T00:00:00Z", False),
    ("2024-03-01T12:00:60Z", False), ("2024-03-01T12:00:00", False),
])
def test_date_time_is_checked_by_the_runtime_itself(since: str, valid: bool) -> None:
    """Not through jsonschema's optional rfc3339 checker, which an installed wheel lacks."""
    err = DATED.validate({"since": since})
    assert (err is None) == valid
    if err is not None:
        assert err.details == {"field": "since", "reason": "must be a valid date-time"}


def test_a_format_the_runtime_does_not_check_is_refused_when_the_server_is_built() -> None:
    with pytest.raises(ValueError, match="email"):
        ArgumentValidator({"type": "object", "properties": {"to": {"type": "string", "format": "email"}}})
