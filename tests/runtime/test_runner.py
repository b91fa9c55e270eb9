"""The declaration runner: waves and concurrency, write ordering, error mapping, recipes, outputs.

The upstream is scripted at the network edge (the `Upstream` protocol); everything above it is
the real runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from runtime_support import make_ctx, tool_spec

from ghmcp_runtime.calls.context import ToolContext, UpstreamResponse
from ghmcp_runtime.core.concurrent import MAX_CONCURRENT
from ghmcp_runtime.core.declared import (
    Compare,
    Completion,
    Condition,
    Declaration,
    ErrorSpec,
    Guard,
    Idempotency,
    Match,
    NamesExist,
    OnError,
    Output,
    Paginate,
    Recover,
    Reject,
    Repair,
    Settle,
    Step,
    Verify,
)
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError, UpstreamError
from ghmcp_runtime.core.model import FieldRule, Operation, Shape
from ghmcp_runtime.core.projection import ShapeProjector
from ghmcp_runtime.engine.runner import completer, declared

pytestmark = pytest.mark.anyio


def op(name: str, method: str = "GET", path: str = "/repos/{owner}/{repo}/x") -> Operation:
    return Operation(operation_id=name, method=method, path=path, not_found="repo_not_found",
                     success_status=(200,))


REPO = {"owner": "{owner}", "repo": "{repo}"}
ARGS = {"owner": "o", "repo": "r"}
Reply = Callable[[Mapping[str, Any], Mapping[str, Any] | None, Any], Any]


@dataclass
class Scripted:
    """Upstream double: per operation, a reply (data, an UpstreamResponse, or a ToolError to raise)."""

    replies: dict[str, Any]
    calls: list[tuple[str, dict[str, Any], dict[str, Any] | None, Any]] = field(default_factory=list)
    events: list[tuple[str, str]] = field(default_factory=list)
    delay: float = 0.0
    running: int = 0
    peak: int = 0

    async def call(self, ctx: ToolContext, op: Operation, *, path: Mapping[str, Any],
                   query: Mapping[str, Any] | None, body: Any) -> UpstreamResponse:
        self.calls.append((op.operation_id, dict(path), dict(query) if query else None, body))
        self.events.append(("start", op.operation_id))
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await anyio.sleep(self.delay)
        finally:
            self.running -= 1
            self.events.append(("end", op.operation_id))
        reply = self.replies[op.operation_id]
        if callable(reply):
            reply = reply(path, query, body)
        if isinstance(reply, ToolError):
            raise reply
        if isinstance(reply, UpstreamResponse):
            return reply
        return UpstreamResponse(status=200, data=reply, headers={})


LABEL = Shape(name="label", fields=(FieldRule(name="name", path=("name",), detail="summary"),
                                    FieldRule(name="color", path=("color",), detail="summary")))


def context(upstream: Scripted) -> ToolContext:
    ctx = make_ctx(upstream)
    ctx.projector = ShapeProjector({"label": LABEL})
    return ctx


async def run(decl: Declaration, upstream: Scripted, args: Mapping[str, Any] = ARGS) -> Any:
    return await declared(decl)(context(upstream), dict(args))


async def test_independent_reads_run_concurrently_and_bounded() -> None:
    steps = tuple(Step(id=f"s{i}", operation=op(f"read{i}"), path=REPO) for i in range(6))
    up = Scripted({f"read{i}": {"i": i} for i in range(6)}, delay=0.02)
    out = await run(Declaration(steps=steps, output=(Output(name="first", value="{s0.i}"),)), up)
    assert out == {"first": 0}
    assert up.peak == MAX_CONCURRENT  # overlapping, never more than the cap
    assert [e for e in up.events[:2]] == [("start", "read0"), ("start", "read1")]


async def test_concurrency_follows_the_calls_slots() -> None:
    """GHMCP_MAX_CONCURRENT reaches declared tools through ctx.slots: no cap of the runner's own."""
    steps = tuple(Step(id=f"s{i}", operation=op(f"read{i}"), path=REPO) for i in range(6))
    up = Scripted({f"read{i}": {"i": i} for i in range(6)}, delay=0.02)
    ctx = context(up)
    ctx.slots = anyio.CapacityLimiter(6)
    await declared(Declaration(steps=steps, output=()))(ctx, dict(ARGS))
    assert up.peak == 6


async def test_writes_run_alone_and_in_declared_order() -> None:
    steps = (
        Step(id="a", operation=op("read_a"), path=REPO),
        Step(id="w1", operation=op("write1", "PATCH"), path=REPO, body={"x": 1}, after=("a",)),
        Step(id="w2", operation=op("write2", "POST"), path=REPO, body={"y": 2}, after=("a", "w1")),
        Step(id="b", operation=op("read_b"), path=REPO, after=("w1", "w2")),
    )
    up = Scripted({"read_a": {}, "write1": {}, "write2": {}, "read_b": {}}, delay=0.01)
    await run(Declaration(steps=steps, output=()), up)
    assert up.events == [(e, n) for n in ("read_a", "write1", "write2", "read_b") for e in ("start", "end")]


async def test_the_earliest_declared_failure_is_reported() -> None:
    boom = ToolError("rate_limited", "later step", temporary=True, retry_after_ms=5)
    first = ToolError("issue_not_found", "first step")
    steps = (Step(id="a", operation=op("a"), path=REPO), Step(id="b", operation=op("b"), path=REPO))
    up = Scripted({"a": first, "b": boom})
    with pytest.raises(ToolError) as caught:
        await run(Declaration(steps=steps, output=()), up)
    assert caught.value.code == "issue_not_found"


async def test_conditions_defaults_and_absent_values() -> None:
    steps = (
        Step(id="one", operation=op("one"), path=REPO, when=(Condition(param="name"),)),
        Step(id="all", operation=op("all"), path=REPO, query={"q": "{q}", "mode": "{mode}"},
             when=(Condition(param="name", present=False),)),
        Step(id="safe", operation=op("safe"), path=REPO, when=(Condition(param="mode", equals="safe"),)),
    )
    up = Scripted({"one": {}, "all": [], "safe": {}})
    await run(Declaration(steps=steps, output=(), defaults={"mode": "safe"}), up)
    # `q` was omitted: its key is dropped; the default fills `mode`
    assert [(c[0], c[2]) for c in up.calls] == [("all", {"mode": "safe"}), ("safe", None)]


async def test_a_refused_transform_is_invalid_field_with_nothing_sent() -> None:
    up = Scripted({"w": {}})
    decl = Declaration(steps=(Step(id="w", operation=op("w", "POST"), path=REPO, body={"color": "{color}"}),),
                       output=(), transforms={"color": "hex_color"})
    with pytest.raises(ToolError) as caught:
        await run(decl, up, {**ARGS, "color": "red"})
    assert caught.value.code == "invalid_field" and caught.value.details["field"] == "color"
    assert up.calls == []
    await run(decl, up, {**ARGS, "color": "#D73A4A"})
    assert up.calls[0][3] == {"color": "d73a4a"}


async def test_error_mapping_matches_status_github_code_and_code() -> None:
    exists = UpstreamError("invalid_field", "GitHub rejected", status=422, github_code="already_exists",
                           details={"field": "name", "reason": "x"})
    rule = OnError(when=Match(status=422, github_code="already_exists"),
                   error=ErrorSpec(code="label_exists", message="exists", field="name",
                                   repair=Repair(next_step="look", tool="t", arguments={"owner": "{owner}"})))
    step = Step(id="w", operation=op("w", "POST"), path=REPO, on_error=(rule,))
    with pytest.raises(ToolError) as caught:
        await run(Declaration(steps=(step,), output=()), Scripted({"w": exists}))
    err = caught.value
    assert (err.code, err.message, err.details, err.repair) == (
        "label_exists", "exists", {"field": "name", "reason": "x"},
        {"next_step": "look", "tool": "t", "arguments": {"owner": "o"}})
    other = UpstreamError("invalid_field", "GitHub rejected", status=422, github_code="invalid")
    with pytest.raises(ToolError) as caught:
        await run(Declaration(steps=(step,), output=()), Scripted({"w": other}))
    assert caught.value is other  # no rule matched: the runtime's mapping stands


async def test_skip_makes_a_step_produce_nothing() -> None:
    missing = UpstreamError("label_not_found", "gone", status=404)
    step = Step(id="one", operation=op("one"), path=REPO,
                on_error=(OnError(when=Match(code="label_not_found"), skip=True),))
    out = await run(Declaration(steps=(step,), output=(Output(name="labels", shape="label", each=True,
                                                              sources=("one",)),)),
                    Scripted({"one": missing}))
    assert out == {"labels": []}


async def test_reject_refuses_a_response() -> None:
    step = Step(id="issue", operation=op("get"), path=REPO,
                reject=(Reject(present="pull_request", error=ErrorSpec(code="issue_not_found",
                                                                      message="a PR")),))
    with pytest.raises(ToolError) as caught:
        await run(Declaration(steps=(step,), output=()), Scripted({"get": {"pull_request": {"url": "u"}}}))
    assert caught.value.code == "issue_not_found"
    assert await run(Declaration(steps=(step,), output=()), Scripted({"get": {"pull_request": None}})) == {}


async def test_compare_sends_only_what_changed_and_skips_a_no_op() -> None:
    steps = (
        Step(id="current", operation=op("get"), path=REPO),
        Step(id="update", operation=op("patch", "PATCH"), path=REPO,
             body={"new_name": "{new_name}", "description": "{description}", "due": "{due}"},
             after=("current",),
             compare=Compare(against="current", fields={"new_name": "name", "description": "description",
                                                        "due": "due_on"},
                             normalize={"due": "date"})),
    )
    current = {"name": "bug", "description": None, "due_on": "2026-12-31T08:00:00Z", "color": "aaaaaa"}
    decl = Declaration(steps=steps, output=(Output(name="label", shape="label", sources=("update", "current")),))
    up = Scripted({"get": current, "patch": lambda p, q, b: {**current, **b}})
    out = await run(decl, up, {**ARGS, "new_name": "bug", "description": "", "due": "2026-12-31"})
    assert out == {"label": {"name": "bug", "color": "aaaaaa"}, "changed_fields": []}
    assert [c[0] for c in up.calls] == ["get"]  # nothing differed: no write
    out = await run(decl, up, {**ARGS, "new_name": "Bug", "description": "", "due": "2027-01-01"})
    assert up.calls[-1][3] == {"new_name": "Bug", "due": "2027-01-01"}
    assert out["changed_fields"] == ["new_name", "due"]


def _guard(**kw: Any) -> Guard:
    return Guard(count=("total_count",), incomplete="incomplete_results", unknown_field="name",
                 refuse=ErrorSpec(code="in_use", message="{count} use it", field="name"),
                 unknown=ErrorSpec(code="unknown", message="Nothing deleted.", reason="count failed"), **kw)


def _delete_decl(guard: Guard) -> Declaration:
    return Declaration(steps=(
        Step(id="current", operation=op("get"), path=REPO),
        Step(id="usage", operation=op("search"), query={"q": 'label:"{current.name|search_phrase}"'},
             after=("current",), guard=guard),
        Step(id="delete", operation=op("delete", "DELETE"), path=REPO, after=("current", "usage")),
    ), output=())


@pytest.mark.parametrize(("search", "code", "details"), [
    ({"total_count": 3, "incomplete_results": False}, "in_use", {"field": "name", "count": 3}),
    ({"total_count": 0, "incomplete_results": True}, "upstream_unavailable", None),
    (UpstreamError("invalid_field", "bad query", status=422), "unknown", {"reason": "count failed"}),
])
async def test_guard_refuses_unless_the_count_is_known_to_be_zero(
        search: Any, code: str, details: dict[str, Any] | None) -> None:
    up = Scripted({"get": {"name": "bug"}, "search": search, "delete": None})
    with pytest.raises(ToolError) as caught:
        await run(_delete_decl(_guard()), up)
    assert caught.value.code == code
    if details:
        assert {k: caught.value.details[k] for k in details} == details
    assert "delete" not in [c[0] for c in up.calls]


async def test_guard_keeps_temporary_failures_and_refuses_uncountable_values() -> None:
    down = UpstreamError("upstream_unavailable", "GitHub is down.", temporary=True, retry_after_ms=1)
    up = Scripted({"get": {"name": "bug"}, "search": down, "delete": None})
    with pytest.raises(ToolError) as caught:
        await run(_delete_decl(_guard()), up)
    assert caught.value.code == "upstream_unavailable"
    assert caught.value.message == "Nothing deleted. GitHub is down."
    up = Scripted({"get": {"name": 'say "hi"'}, "search": {"total_count": 0}, "delete": None})
    with pytest.raises(ToolError) as caught:
        await run(_delete_decl(_guard()), up)
    assert caught.value.code == "unknown" and caught.value.details["field"] == "name"
    assert [c[0] for c in up.calls] == ["get"]  # the query was never sent
    up = Scripted({"get": {"name": "bug"}, "search": {"total_count": 0}, "delete": None})
    await run(_delete_decl(_guard()), up)
    assert [c[0] for c in up.calls] == ["get", "search", "delete"]


async def test_guard_with_a_condition_counts_its_own_step() -> None:
    guard = Guard(count=("open_issues", "closed_issues"), when=Condition(param="mode", equals="safe"),
                  refuse=ErrorSpec(code="in_use", message="{count} issues"))
    decl = Declaration(steps=(Step(id="current", operation=op("get"), path=REPO, guard=guard),
                              Step(id="delete", operation=op("delete", "DELETE"), path=REPO,
                                   after=("current",))),
                       output=(), defaults={"mode": "safe"})
    up = Scripted({"get": {"open_issues": 1, "closed_issues": 2}, "delete": None})
    with pytest.raises(ToolError) as caught:
        await run(decl, up)
    assert (caught.value.message, caught.value.details) == ("3 issues", {"count": 3})
    await run(decl, up, {**ARGS, "mode": "force"})
    assert [c[0] for c in up.calls] == ["get", "get", "delete"]


async def test_paging_round_trip_through_the_cursor() -> None:
    def page(path: Any, query: Any, body: Any) -> UpstreamResponse:
        more = query["page"] < 2
        return UpstreamResponse(status=200, data=[{"name": f"p{query['page']}", "color": "c"}],
                                headers={"link": '<u>; rel="next"'} if more else {})

    decl = Declaration(steps=(Step(id="page", operation=op("list"), path=REPO,
                                   paginate=Paginate(cursor="cursor", page_size=100)),),
                       output=(Output(name="labels", shape="label", each=True, sources=("page",)),))
    ctx = context(Scripted({"list": page}))
    first = await declared(decl)(ctx, dict(ARGS))
    assert first["has_more"] is True and first["labels"] == [{"name": "p1", "color": "c"}]
    second = await declared(decl)(ctx, {**ARGS, "cursor": first["next_cursor"]})
    assert second == {"labels": [{"name": "p2", "color": "c"}], "has_more": False}
    with pytest.raises(ToolError) as caught:  # bound to the other arguments
        await declared(decl)(ctx, {**ARGS, "repo": "other", "cursor": first["next_cursor"]})
    assert caught.value.code == "invalid_field"


async def test_idempotent_create_replays_and_recovers_a_lost_write() -> None:
    lost = OutcomeUnknown("upstream_unavailable", "lost", temporary=True, retry_after_ms=1)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    created = {"number": 7, "title": "v1.1", "user": {"login": "me"}, "created_at": now}
    older = {"number": 3, "title": "v1.0", "user": {"login": "me"}, "created_at": now}
    theirs = {"number": 5, "title": "v1.1", "user": {"login": "someone"}, "created_at": now}
    decl = Declaration(
        steps=(Step(id="create", operation=op("create", "POST"), path=REPO, body={"title": "{title}"}),),
        output=(Output(name="number", value="{create.number}"),),
        idempotency=Idempotency(key="key", write="create", scope=("owner", "repo"),
                                recover=Recover(operation=op("list"), path=REPO, match={"title": "{title}"})),
    )
    up = Scripted({"create": lost, "list": [older, theirs, created], "users/get-authenticated": {"login": "me"}})
    ctx = context(up)
    args = {**ARGS, "title": "v1.1", "key": "key-000001"}
    with pytest.raises(ToolError):
        await declared(decl)(ctx, dict(args))
    assert await declared(decl)(ctx, dict(args)) == {"number": 7}  # found, not written again
    assert [c[0] for c in up.calls] == ["create", "users/get-authenticated", "list"]
    assert up.calls[-1][2]["since"]  # only rows changed since the first attempt are read
    assert await declared(decl)(ctx, dict(args)) == {"number": 7}  # replayed from the store
    assert len(up.calls) == 3
    with pytest.raises(ToolError) as caught:
        await declared(decl)(ctx, {**args, "title": "other"})
    assert caught.value.code == "invalid_field"


def test_tool_spec_helper_still_builds() -> None:
    assert tool_spec().name == "issues_get"


async def test_names_exist_resolves_exact_names_and_verify_reports_what_github_dropped() -> None:
    labels = [{"name": "bug"}, {"name": "Docs"}]
    decl = Declaration(steps=(
        Step(id="known", operation=op("catalog"), path=REPO,
             names_exist=NamesExist(params=("labels",), code="label_not_found")),
        Step(id="create", operation=op("create", "POST"), path=REPO, after=("known",),
             body={"labels": "{known.labels}", "assignees": "{logins}"},
             verify=Verify(fields={"labels": ("labels", "[]", "name"), "assignees": ("assignees", "[]", "login")},
                           normalize={"assignees": "lower"}, names={"assignees": "logins"})),
    ), output=(Output(name="number", value="{create.number}"),))
    created = {"number": 1, "labels": [{"name": "Docs"}, {"name": "bug"}], "assignees": []}
    up = Scripted({"catalog": UpstreamResponse(status=200, data=labels, headers={}), "create": created})
    out = await run(decl, up, {**ARGS, "labels": ["DOCS", "bug"], "logins": ["Hubot"]})
    assert up.calls[-1][3] == {"labels": ["Docs", "bug"], "assignees": ["Hubot"]}  # exact catalog names
    assert out == {"number": 1, "ignored_fields": ["logins"]}  # GitHub kept the labels, not the assignee
    with pytest.raises(ToolError) as caught:
        await run(decl, up, {**ARGS, "labels": ["nope"]})
    assert caught.value.code == "label_not_found" and caught.value.details["field"] == "labels"


async def test_resource_pages_come_from_uri_variables() -> None:
    def page(path: Any, query: Any, body: Any) -> UpstreamResponse:
        return UpstreamResponse(status=200, data=[{"name": "a", "color": "c"}, {"name": "pr", "pull_request": {}}],
                                headers={"link": '<u>; rel="next"'})

    decl = Declaration(steps=(Step(id="rows", operation=op("list"), path=REPO, paginate=Paginate(
        page_size=100, page_param="page", size_param="limit", next_uri="x://{owner}/labels",
        next_query={"page": "{next_page}", "limit": "{page_size}"})),),
        output=(Output(name="labels", shape="label", each=True, sources=("rows",), exclude="pull_request",
                       omit=("color",)),
                Output(name="truncated", value={"more": True}, when_more="rows")))
    up = Scripted({"list": page})
    out = await run(decl, up, {**ARGS, "page": "2", "limit": "5"})
    assert up.calls[0][2] == {"per_page": 5, "page": 2}
    assert out == {"labels": [{"name": "a"}], "truncated": {"more": True}, "page": 2,
                   "next": "x://o/labels?page=3&limit=5"}
    for bad in ({"page": "0"}, {"page": "x"}, {"limit": "101"}):
        with pytest.raises(ToolError) as caught:
            await run(decl, up, {**ARGS, **bad})
        assert caught.value.code == "invalid_field"


async def test_a_declared_completion_lists_values_filtered_by_chosen_variables() -> None:
    repos = [{"name": "a", "owner": {"login": "Octo"}}, {"name": "b", "owner": {"login": "other"}}]
    complete = completer(Completion(operation=op("repos"), value=("name",), match={"owner": ("owner", "login")}))
    up = Scripted({"repos": UpstreamResponse(status=200, data=repos, headers={})})
    assert await complete(context(up), "", {"owner": "octo"}) == ["a"]
    assert await complete(context(up), "", {}) == ["a", "b"]
    needs_repo = completer(Completion(operation=op("labels"), value=("name",), path=REPO))
    assert await needs_repo(context(up), "", {"owner": "o"}) == []  # repo not chosen yet


# -- settle: a lost answer, a repeat after a rename --------------------------------------------------

LABEL_PATH = "/repos/{owner}/{repo}/labels/{name}"
GET_LABEL = Operation(operation_id="get", method="GET", path=LABEL_PATH, not_found="label_not_found",
                      success_status=(200,))
PATCH_LABEL = Operation(operation_id="patch", method="PATCH", path=LABEL_PATH, not_found="label_not_found",
                        success_status=(200,))
MISSING_LABEL = OnError(when=Match(code="label_not_found"), error=ErrorSpec(field="name", reason="no such label"))
SETTLED = Declaration(steps=(
    Step(id="current", operation=GET_LABEL, path={**REPO, "name": "{name}"}, on_error=(MISSING_LABEL,)),
    Step(id="update", operation=PATCH_LABEL, path={**REPO, "name": "{current.name}"},
         body={"new_name": "{new_name}", "color": "{color}"}, after=("current",),
         compare=Compare(against="current", fields={"new_name": "name", "color": "color"},
                         names={"new_name": "name"}),
         settle=Settle(path={"name": "{new_name}"})),
), output=(Output(name="label", shape="label", sources=("update", "current")),))
BUG = {"id": 7, "name": "bug", "color": "aaaaaa"}
DEFECT = {"id": 7, "name": "defect", "color": "bbbbbb"}


def _lost() -> OutcomeUnknown:
    return OutcomeUnknown("upstream_unavailable", "lost; it may have been applied.", temporary=True,
                          retry_after_ms=1000)


def _labels(*rows: Mapping[str, Any], failing: ToolError | None = None) -> Reply:
    """GET by name, ignoring case, as GitHub resolves it; `failing` answers every other name."""
    def get(path: Mapping[str, Any], query: Any, body: Any) -> Any:
        found = [r for r in rows if r["name"].casefold() == str(path["name"]).casefold()]
        return found[0] if found else failing or UpstreamError("label_not_found", "gone", status=404)
    return get


@pytest.mark.parametrize(("reread", "outcome"), [
    (DEFECT, "applied"),
    ({**BUG, "name": "defect"}, "unknown"),  # renamed, color not shown: not the change sent
    ({**DEFECT, "id": 8}, "unknown"),  # another label under the new name
    (None, "unknown"),  # the new name does not resolve
])
async def test_settle_judges_a_lost_write_by_the_resource_where_it_leaves_it(
        reread: Mapping[str, Any] | None, outcome: str) -> None:
    rows = [BUG] + ([reread] if reread else [])
    up = Scripted({"get": _labels(*rows), "patch": _lost()})
    args = {**ARGS, "name": "BUG", "new_name": "defect", "color": "bbbbbb"}
    if outcome == "applied":
        out = await run(SETTLED, up, args)
        assert out == {"label": {"name": "defect", "color": "bbbbbb"}, "changed_fields": ["name", "color"]}
    else:
        with pytest.raises(OutcomeUnknown) as caught:
            await run(SETTLED, up, args)
        assert caught.value.message == "lost; it may have been applied."
    assert [(c[0], c[1]["name"]) for c in up.calls] == [("get", "BUG"), ("patch", "bug"), ("get", "defect")]


async def test_settle_says_a_lost_write_the_re_read_does_not_show_was_not_applied() -> None:
    up = Scripted({"get": _labels(BUG), "patch": _lost()})
    with pytest.raises(OutcomeUnknown) as caught:
        await run(SETTLED, up, {**ARGS, "name": "bug", "color": "bbbbbb"})  # no rename: read by name
    assert "a re-read shows it was not applied" in caught.value.message
    assert [(c[0], c[1]["name"]) for c in up.calls] == [("get", "bug"), ("patch", "bug"), ("get", "bug")]


async def test_settle_keeps_a_lost_answer_when_the_re_read_fails() -> None:
    up = Scripted({"get": lambda p, q, b: BUG if p["name"] == "bug" else ToolError(
        "upstream_unavailable", "down", temporary=True), "patch": _lost()})
    with pytest.raises(OutcomeUnknown) as caught:
        await run(SETTLED, up, {**ARGS, "name": "bug", "new_name": "defect"})
    assert caught.value.message == "lost; it may have been applied."


@pytest.mark.parametrize("args", [
    {"new_name": "defect", "color": "bbbbbb"},
    {"new_name": "defect"},
    {"new_name": "DEFECT"},  # resolves to the label, whose name is not the one asked for
    {"new_name": "defect", "color": "cccccc"},
    {"color": "bbbbbb"},  # nothing moves the label: no second read
])
async def test_a_repeat_finding_the_old_name_gone_reads_the_new_one(args: dict[str, Any]) -> None:
    up = Scripted({"get": _labels(DEFECT), "patch": {}})
    shown = "new_name" in args and all(DEFECT[{"new_name": "name"}.get(k, k)] == v for k, v in args.items())
    if shown:
        out = await run(SETTLED, up, {**ARGS, "name": "bug", **args})
        assert out == {"label": {"name": "defect", "color": "bbbbbb"}, "changed_fields": []}
    else:
        with pytest.raises(ToolError) as caught:
            await run(SETTLED, up, {**ARGS, "name": "bug", **args})
        assert caught.value.code == "label_not_found"
        assert caught.value.details == {"field": "name", "reason": "no such label"}
    names = [c[1]["name"] for c in up.calls]
    assert names == (["bug", args["new_name"]] if "new_name" in args else ["bug"])
    assert "patch" not in [c[0] for c in up.calls]


async def test_a_repeat_that_cannot_read_the_new_name_says_why() -> None:
    down = ToolError("upstream_unavailable", "down", temporary=True, retry_after_ms=1000)
    up = Scripted({"get": _labels(failing=down), "patch": {}})
    up.replies["get"] = lambda p, q, b: UpstreamError("label_not_found", "gone", status=404) \
        if p["name"] == "bug" else down
    with pytest.raises(ToolError) as caught:
        await run(SETTLED, up, {**ARGS, "name": "bug", "new_name": "defect"})
    assert caught.value.code == "upstream_unavailable" and caught.value.temporary


DELETE_LABEL = Operation(operation_id="delete", method="DELETE", path=LABEL_PATH, not_found="label_not_found",
                         success_status=(204,))
SETTLED_DELETE = Declaration(steps=(
    Step(id="current", operation=GET_LABEL, path={**REPO, "name": "{name}"}, on_error=(MISSING_LABEL,)),
    Step(id="delete", operation=DELETE_LABEL, path={**REPO, "name": "{current.name}"}, after=("current",),
         settle=Settle(against="current")),
), output=(Output(name="deleted_label", shape="label", sources=("current",)),))


@pytest.mark.parametrize(("reread", "outcome"), [
    (UpstreamError("label_not_found", "gone", status=404), "applied"),
    (BUG, "not applied"),
    ({**BUG, "id": 8}, "unknown"),  # another label under the name
    (ToolError("upstream_unavailable", "down", temporary=True), "unknown"),
])
async def test_settle_judges_a_lost_delete_by_re_reading_the_resource(reread: Any, outcome: str) -> None:
    reads = iter([BUG, reread])
    up = Scripted({"get": lambda p, q, b: next(reads), "delete": _lost()})
    if outcome == "applied":
        assert await run(SETTLED_DELETE, up, {**ARGS, "name": "BUG"}) == {
            "deleted_label": {"name": "bug", "color": "aaaaaa"}}
    else:
        with pytest.raises(OutcomeUnknown) as caught:
            await run(SETTLED_DELETE, up, {**ARGS, "name": "BUG"})
        assert ("a re-read shows it was not applied" in caught.value.message) == (outcome == "not applied")
    assert [(c[0], c[1]["name"]) for c in up.calls] == [("get", "BUG"), ("delete", "bug"), ("get", "BUG")]


LIST_LABELS = Operation(operation_id="list", method="GET", path="/repos/{owner}/{repo}/labels",
                        not_found="repo_not_found", success_status=(200,))
FOUND_DELETE = Declaration(steps=(
    SETTLED_DELETE.steps[0],
    replace(SETTLED_DELETE.steps[1], settle=Settle(against="current", find=LIST_LABELS, find_path=REPO)),
), output=SETTLED_DELETE.output)


@pytest.mark.parametrize(("rows", "outcome"), [
    ([{"id": 3, "name": "other"}], "applied"),  # gone by its id too: deleted (by us or another)
    ([{"id": 7, "name": "legacy"}], "renamed"),  # n05 (a): renamed meanwhile, still alive
])
async def test_n05_a_lost_delete_by_name_is_done_only_when_no_row_keeps_the_id(
        rows: list[Any], outcome: str) -> None:
    reads = iter([BUG, UpstreamError("label_not_found", "gone", status=404)])
    up = Scripted({"get": lambda p, q, b: next(reads), "delete": _lost(), "list": rows})
    if outcome == "applied":
        assert await run(FOUND_DELETE, up, {**ARGS, "name": "bug"}) == {
            "deleted_label": {"name": "bug", "color": "aaaaaa"}}
    else:
        with pytest.raises(OutcomeUnknown) as caught:
            await run(FOUND_DELETE, up, {**ARGS, "name": "bug"})
        assert "another name" in caught.value.message
    assert [c[0] for c in up.calls] == ["get", "delete", "get", "list"]


@pytest.mark.parametrize(("reread", "outcome"), [
    ({"id": 1, "title": "v1", "updated_at": "t1"}, "not applied"),  # nothing moved
    ({"id": 1, "title": "v1", "updated_at": "t2"}, "unknown"),  # n02 (c): applied, then reverted
    ({"id": 1, "title": "v2", "updated_at": "t2"}, "applied"),
    ({"id": 1, "title": "other", "updated_at": "t2"}, "unknown"),  # n02 (a): another writer's
    ({"id": 2, "title": "v2", "updated_at": "t2"}, "unknown"),  # another resource
])
def test_n02_settle_judges_a_lost_update_by_the_values_sent(reread: dict[str, Any], outcome: str) -> None:
    from ghmcp_runtime.engine.settle import Verdict, judge

    compare = Compare(against="current", fields={"title": "title"})
    verdict = judge(compare, {"title": "v2"}, {"id": 1, "title": "v1", "updated_at": "t1"}, reread)
    assert verdict == {"applied": Verdict.APPLIED, "not applied": Verdict.NOT_APPLIED,
                       "unknown": Verdict.UNKNOWN}[outcome]
