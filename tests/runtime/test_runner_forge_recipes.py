"""The recipes a second forge needed, in the runner: `absent` (a value still free) and settle on a
create, `compare.carry`, `guard.total` (the forge's total-count header), paging by the forge's
parameter names, and comparisons that never raise on the forge's own stored form."""

from __future__ import annotations

from typing import Any

import pytest
from test_runner import ARGS, REPO, Scripted, context, op

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.core.declared import (
    Absent,
    Compare,
    Declaration,
    ErrorSpec,
    Guard,
    Output,
    Paginate,
    Settle,
    Step,
)
from ghmcp_runtime.core.errors import OutcomeUnknown, ToolError
from ghmcp_runtime.core.forges import FORGEJO
from ghmcp_runtime.core.transforms import normalizer
from ghmcp_runtime.engine.runner import declared

pytestmark = pytest.mark.anyio
EXISTS = ErrorSpec(code="label_exists", message="taken", field="name")


async def run(decl: Declaration, up: Scripted, args: dict[str, Any] | None = None) -> Any:
    ctx = context(up)
    ctx.forge = FORGEJO
    return await declared(decl)(ctx, {**ARGS, **(args or {})})


def page(rows: list[Any], total: int) -> UpstreamResponse:
    return UpstreamResponse(status=200, data=rows, headers={"x-total-count": str(total)})


def lost() -> OutcomeUnknown:
    return OutcomeUnknown("upstream_unavailable", "lost", temporary=True, source="Forgejo")


CREATE = Declaration(
    steps=(Step(id="taken", operation=op("list"), path=REPO,
                absent=Absent(match={"name": "{name}"}, refuse=EXISTS)),
           Step(id="create", operation=op("create", "POST"), path=REPO, body={"name": "{name}"},
                after=("taken",), settle=Settle(against="taken"))),
    output=(Output(name="label", value="{create}"),))


async def test_absent_reads_every_page_and_refuses_a_taken_value() -> None:
    pages = {1: page([{"name": f"l{i}"} for i in range(50)], 51), 2: page([{"name": "bug"}], 51)}
    up = Scripted({"list": lambda path, query, body: pages[query["page"]], "create": {"id": 9}})
    with pytest.raises(ToolError) as info:
        await run(CREATE, up, {"name": "bug"})
    assert info.value.code == "label_exists"
    assert [c[2] for c in up.calls] == [{"limit": 50, "page": 1}, {"limit": 50, "page": 2}]
    assert await run(CREATE, Scripted({"list": page([], 0), "create": {"id": 9, "name": "x"}}),
                     {"name": "x"}) == {"label": {"id": 9, "name": "x"}}


@pytest.mark.parametrize(("after", "outcome"), [
    ([{"id": 9, "name": "new"}], {"label": {"id": 9, "name": "new"}}),  # one row: the write made it
    ([], "not applied"),                                                  # none: it did not happen
    ([{"id": 9, "name": "new"}, {"id": 10, "name": "new"}], "lost"),      # several: unknown
])
async def test_a_lost_create_is_settled_by_the_listing(after: list[Any], outcome: Any) -> None:
    listings = iter([page([], 0), page(after, len(after))])
    up = Scripted({"list": lambda path, query, body: next(listings), "create": lost()})
    if isinstance(outcome, dict):
        assert await run(CREATE, up, {"name": "new"}) == outcome
        return
    with pytest.raises(OutcomeUnknown) as info:
        await run(CREATE, up, {"name": "new"})
    assert ("re-read shows it was not applied" in info.value.message) == (outcome == "not applied")
    assert [c[0] for c in up.calls] == ["list", "create", "list"]  # never a second create


EDIT = Declaration(
    steps=(Step(id="current", operation=op("get"), path=REPO),
           Step(id="update", operation=op("edit", "PATCH"), path=REPO,
                body={"color": "{color}", "is_archived": "{current.is_archived}"}, after=("current",),
                compare=Compare(against="current", fields={"color": "color"},
                                normalize={"color": "hex_color"}, carry=("is_archived",)),
                settle=Settle())),
    output=(Output(name="row", value="{update}"),))


async def test_carried_fields_go_with_a_change_and_never_alone() -> None:
    current = {"id": 1, "color": "aabbcc", "is_archived": True}
    up = Scripted({"get": current, "edit": {**current, "color": "112233"}})
    out = await run(EDIT, up, {"color": "#112233"})
    assert up.calls[-1][3] == {"color": "#112233", "is_archived": True}
    assert out["changed_fields"] == ["color"]
    same = Scripted({"get": current, "edit": current})
    assert (await run(EDIT, same, {"color": "#AABBCC"}))["changed_fields"] == []
    assert [c[0] for c in same.calls] == ["get"]  # nothing differed: no PATCH with is_archived alone


async def test_a_lost_edit_is_judged_without_the_carried_fields() -> None:
    reads = iter([{"id": 1, "color": "aabbcc", "is_archived": True},
                  {"id": 1, "color": "112233", "is_archived": True}])
    up = Scripted({"get": lambda path, query, body: next(reads), "edit": lost()})
    out = await run(EDIT, up, {"color": "112233"})
    assert out["row"] == {"id": 1, "color": "112233", "is_archived": True}


def test_comparisons_take_a_stored_form_the_argument_transform_refuses() -> None:
    color = normalizer("hex_color")
    assert color("#AABBCC") == "aabbcc" and color("not a color") == "not a color" and color(None) is None


GUARDED = Declaration(
    steps=(Step(id="usage", operation=op("count"), path=REPO, query={"limit": 1},
                guard=Guard(total=True, refuse=ErrorSpec(code="label_in_use", message="{count} use it"),
                            unknown=ErrorSpec(code="label_usage_unknown", message="Nothing deleted."),
                            unknown_field="label_id")),
           Step(id="delete", operation=op("delete", "DELETE"), path=REPO, after=("usage",))),
    output=())


@pytest.mark.parametrize(("answer", "code", "count"), [
    (page([{"id": 1}], 4), "label_in_use", 4),
    (UpstreamResponse(status=200, data=[], headers={}), "label_usage_unknown", None),
    (UpstreamResponse(status=200, data=[], headers={"x-total-count": "many"}), "label_usage_unknown", None),
])
async def test_a_guard_counts_the_forges_total_and_never_reads_a_missing_one_as_zero(
    answer: UpstreamResponse, code: str, count: int | None
) -> None:
    up = Scripted({"count": answer, "delete": None})
    with pytest.raises(ToolError) as info:
        await run(GUARDED, up)
    assert info.value.code == code and (info.value.details or {}).get("count") == count
    assert [c[0] for c in up.calls] == ["count"]
    if count is None:
        assert info.value.details == {"reason": "Forgejo's answer carried no total count", "field": "label_id"}
    ok = Scripted({"count": page([], 0), "delete": None})
    await run(GUARDED, ok)
    assert [c[0] for c in ok.calls] == ["count", "delete"]


async def test_a_cursor_listing_pages_by_the_forges_names_and_total() -> None:
    decl = Declaration(steps=(Step(id="page", operation=op("list"), path=REPO,
                                   paginate=Paginate(cursor="cursor", page_size=50)),),
                       output=(Output(name="n", value="{page}"),))
    up = Scripted({"list": page([{"id": i} for i in range(50)], 60)})
    first = await run(decl, up)
    assert up.calls[0][2] == {"limit": 50, "page": 1} and first["has_more"] is True
