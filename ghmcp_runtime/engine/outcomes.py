"""How each step of a declared call ended, for conditions, outputs and templates that read it.

A step's outcome is its answer's status and headers (lower-case names) and whether it carried a
body, or — for a failure an `on_error` rule skipped — the failure's status and error code. A step
that did not run has no outcome: its status and code are absent and it counts as empty.

* Conditions (`Condition` with `step`): `{step: current, status: 200}`, `{step: current, code:
  label_not_found}`, `{step: current, empty: true}`; `unless:` negates.
* Templates: `{response.<step>.status}` and `{response.<step>.headers.<name>}`.
* Outputs: `true_when:` a condition, published as a boolean.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ghmcp_runtime.core.declared import Condition

RESPONSE = "response"  # the template scope name: {response.<step>.status}


@dataclass(frozen=True, slots=True)
class Outcome:
    status: int | None = None  # the answer's (or the skipped failure's) HTTP status
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    code: str | None = None  # the error code of a failure on_error skipped
    empty: bool = True  # no body, [] or {}


def answered(status: int, headers: Mapping[str, str], data: Any) -> Outcome:
    return Outcome(status=status, headers=dict(headers), empty=data is None or data == [] or data == {})


def skipped(status: int | None, code: str) -> Outcome:
    return Outcome(status=status, code=code)


NOT_RUN = Outcome()


def holds(condition: Condition, args: Mapping[str, Any],
          outcomes: Mapping[str, Outcome] | None = None) -> bool:
    """A parameter condition (present, absent, equal), or a step-outcome condition."""
    if condition.step is None:
        if condition.equals is not None:
            return bool(args.get(condition.param) == condition.equals) == condition.present
        return (condition.param in args) == condition.present
    outcome = (outcomes or {}).get(condition.step, NOT_RUN)
    met = ((not condition.status or outcome.status in condition.status)
           and (condition.code is None or outcome.code == condition.code)
           and (condition.empty is None or outcome.empty == condition.empty))
    return met == condition.present


def response_scope(outcomes: Mapping[str, Outcome]) -> dict[str, Any]:
    """`{response.<step>.status}` / `.headers.<name>` for the steps that got an answer."""
    return {step: {"status": o.status, "headers": dict(o.headers)}
            for step, o in outcomes.items() if o.status is not None}
