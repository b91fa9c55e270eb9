"""Issue 22 item 3 in the runtime: a step's response status and headers in templates and outputs,
conditions on an earlier step's outcome, on_error matching GitHub's message (a step's rules and
the server-wide ones in ToolContext.call), and the exactly_one rule."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_support import make_ctx
from test_runner import ARGS, REPO, Scripted, op, run

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.calls.error_rules import matches, refine
from ghmcp_runtime.core.declared import (
    Condition,
    Declaration,
    ErrorSpec,
    Match,
    OnError,
    Output,
    Step,
)
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError, UpstreamError
from ghmcp_runtime.engine.runner import declared
from ghmcp_runtime.guards.rules import Rule, check_rules

pytestmark = pytest.mark.anyio
PUT = op("add", "PUT")


def forbidden(message: str, *, code: str = "insufficient_scope") -> UpstreamError:
    err = UpstreamError(code, "The token is not allowed to do this.", status=403,
                        details={"required_scopes": ["repo"], "reason": "scope"})
    err.upstream_message = message
    return err


def answer(status: int, data: Any = None, headers: dict[str, str] | None = None) -> UpstreamResponse:
    return UpstreamResponse(status=status, data=data, headers=headers or {})


ADD = Declaration(
    steps=(Step(id="add", operation=PUT, path=REPO),),
    output=(Output(name="invited", true_when=Condition(step="add", status=(201,))),
            Output(name="status", value="{response.add.status}"),
            Output(name="where", value="{response.add.headers.location}")))


async def test_outputs_read_the_status_and_headers_of_a_step() -> None:
    created = await run(ADD, Scripted({"add": answer(201, {"id": 1}, {"location": "https://x/1"})}))
    assert created == {"invited": True, "status": 201, "where": "https://x/1"}
    already = await run(ADD, Scripted({"add": answer(204)}))
    assert already == {"invited": False, "status": 204}  # no header: the output is left out


GONE = Declaration(
    steps=(Step(id="current", operation=op("get"), path=REPO,
                on_error=(OnError(when=Match(code="label_not_found"), skip=True),)),
           Step(id="delete", operation=op("delete", "DELETE"), path=REPO, after=("current",),
                when=(Condition(step="current", empty=True, present=False),))),
    output=(Output(name="deleted", true_when=Condition(step="delete", status=(204,))),
            Output(name="was_missing", true_when=Condition(step="current", code="label_not_found"))))


async def test_a_step_runs_on_an_earlier_steps_outcome() -> None:
    missing = UpstreamError("label_not_found", "No such label.", status=404)
    up = Scripted({"get": missing, "delete": answer(204)})
    assert await run(GONE, up) == {"deleted": False, "was_missing": True}
    assert [c[0] for c in up.calls] == ["get"]  # already gone: nothing deleted
    up = Scripted({"get": {"name": "bug"}, "delete": answer(204)})
    assert await run(GONE, up) == {"deleted": True, "was_missing": False}
    assert [c[0] for c in up.calls] == ["get", "delete"]


def test_message_matching_is_a_substring_in_any_case_or_a_regex_and_the_method() -> None:
    err = forbidden("Must have push access to this repository.")
    assert matches(Match(status=403, message_contains="must have PUSH access"), err)
    assert matches(Match(message_matches=r"(?i)push access to this repo"), err)
    assert not matches(Match(message_contains="not the author"), err)
    assert matches(Match(status=403, method=("POST",)), err, "POST")
    assert not matches(Match(status=403, method=("POST",)), err, "GET")
    assert not matches(Match(message_contains="push"), ToolError("invalid_field", "push"))  # no upstream text


PUSH = OnError(when=Match(status=403, message_contains="must have push access"),
               error=ErrorSpec(code="no_push_access", message="No push access.", reason="no push access"))


def test_a_server_rule_relabels_the_failure_and_drops_the_other_codes_details() -> None:
    refined = refine((PUSH,), forbidden("Must have push access to this repository."), "POST", {})
    assert isinstance(refined, UpstreamError) and refined.status == 403
    assert (refined.code, refined.message) == ("no_push_access", "No push access.")
    assert refined.details == {"reason": "no push access"}  # required_scopes belonged to the scope code
    other = forbidden("Resource not accessible by personal access token")
    assert refine((PUSH,), other, "POST", {}) is other
    lost = OutcomeUnknown("upstream_unavailable", "lost", status=None)
    lost.upstream_message = "must have push access"
    assert refine((PUSH,), lost, "POST", {}) is lost  # a lost answer keeps its unknown outcome


async def test_server_rules_apply_in_ctx_call_and_steps_see_their_code() -> None:
    decl = Declaration(steps=(Step(id="add", operation=PUT, path=REPO, on_error=(
        OnError(when=Match(code="no_push_access"), error=ErrorSpec(message="Step wording.")),)),),
        output=())
    ctx = make_ctx(Scripted({"add": forbidden("Must have push access to this repository.")}))
    ctx.error_rules = (PUSH,)
    with pytest.raises(ToolError) as caught:
        await declared(decl)(ctx, dict(ARGS))
    assert (caught.value.code, caught.value.message) == ("no_push_access", "Step wording.")


def test_exactly_one() -> None:
    rule = (Rule(kind="exactly_one", fields=("color", "random_color"), reason="one of them"),)
    assert check_rules({"color": "fff"}, rule) is None
    for args in ({}, {"color": "fff", "random_color": True}):
        err = check_rules(args, rule)
        assert err is not None and err.details == {"fields": ["color", "random_color"], "reason": "one of them"}


async def test_has_more_comes_from_the_paged_step_a_condition_chose() -> None:
    """Two paged steps, one run by a parameter: the one that did not run leaves has_more alone."""
    from ghmcp_runtime.core.declared import Paginate

    steps = tuple(Step(id=name, operation=op(name), path=REPO, paginate=Paginate(cursor="cursor"),
                       when=(Condition(param="direction", equals=name),)) for name in ("first", "second"))
    decl = Declaration(steps=steps, output=(Output(name="rows", value="{first}"),))
    more = UpstreamResponse(status=200, data=[1], headers={"link": '<https://x/?page=2>; rel="next"'})
    out = await run(decl, Scripted({"first": more, "second": []}), {**ARGS, "direction": "first"})
    assert out["has_more"] is True and "next_cursor" in out
