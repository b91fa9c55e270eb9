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
