"""Cross-field rules (ghmcp_runtime.guards.rules): what each kind refuses, before any request."""

from __future__ import annotations

from ghmcp_runtime.guards.rules import Rule, check_rules

LOCK = Rule(kind="requires", when="lock_reason", fields=("locked",), equals=True,
            reason="lock_reason needs locked true")


def test_requires_with_equals_wants_the_value_not_only_the_field() -> None:
    assert check_rules({"lock_reason": "spam", "locked": True}, (LOCK,)) is None
    assert check_rules({"locked": False}, (LOCK,)) is None  # no lock_reason: nothing required
    for args in ({"lock_reason": "spam"}, {"lock_reason": "spam", "locked": False}):
        err = check_rules(args, (LOCK,))
        assert err is not None and err.code == "invalid_field"
        assert err.details == {"field": "locked", "reason": "lock_reason needs locked true"}


def test_requires_without_equals_takes_any_value() -> None:
    rule = Rule(kind="requires", when="lock_reason", fields=("locked",), reason="r")
    assert check_rules({"lock_reason": "spam", "locked": False}, (rule,)) is None
    assert check_rules({"lock_reason": "spam"}, (rule,)) is not None


REVIEW_BODY = Rule(kind="required_when", when="event", among=("REQUEST_CHANGES", "COMMENT"), fields=("body",),
                   reason="a review that requests changes or comments needs a body")


def test_required_when_asks_for_the_field_only_for_the_values_named() -> None:
    """GitHub's 422 was the only guard: pulls/create-review requires body for REQUEST_CHANGES and
    COMMENT (issue 31). Now the call is refused before any request, naming the field."""
    for args in ({"event": "APPROVE"}, {"event": "COMMENT", "body": "why"}, {"body": "pending review"}, {}):
        assert check_rules(args, (REVIEW_BODY,)) is None, args
    for event in ("REQUEST_CHANGES", "COMMENT"):
        err = check_rules({"event": event}, (REVIEW_BODY,))
        assert err is not None and err.code == "invalid_field"
        assert err.details == {"field": "body", "reason": REVIEW_BODY.reason}


def test_required_when_without_values_triggers_on_any_value_and_compares_types_exactly() -> None:
    any_value = Rule(kind="required_when", when="due_on", fields=("title",), reason="r")
    assert check_rules({"due_on": None}, (any_value,)) is not None  # an explicit null is a value
    ones = Rule(kind="required_when", when="n", among=(1,), fields=("x",), reason="r")
    assert check_rules({"n": True}, (ones,)) is None  # True == 1 in Python, not in JSON
    assert check_rules({"n": 1}, (ones,)) is not None


def test_forbidden_when_refuses_the_field_for_the_values_named() -> None:
    rule = Rule(kind="forbidden_when", when="state", among=("open",), fields=("state_reason", "closed_at"),
                reason="an open issue has no close reason")
    assert check_rules({"state": "closed", "state_reason": "completed"}, (rule,)) is None
    assert check_rules({"state": "open"}, (rule,)) is None
    err = check_rules({"state": "open", "closed_at": "x", "state_reason": "completed"}, (rule,))
    assert err is not None and err.details == {"field": "state_reason", "reason": rule.reason}


def test_distinct_refuses_two_parameters_given_the_same_value() -> None:
    rule = Rule(kind="distinct", fields=("sub_issue_number", "after_issue_number", "before_issue_number"),
                reason="a sub-issue moves after or before another sub-issue")
    refused = check_rules({"sub_issue_number": 3, "after_issue_number": 3}, (rule,))
    assert refused is not None and refused.details == {
        "fields": ["sub_issue_number", "after_issue_number"], "reason": "a sub-issue moves after or before another sub-issue"}
    assert check_rules({"sub_issue_number": 3, "after_issue_number": 4}, (rule,)) is None
    assert check_rules({"sub_issue_number": 3}, (rule,)) is None  # one alone compares with nothing
