"""The resolve recipe (a name for an id, looked up in a listing) and write rows (`include`/`omit`),
through the real runner with the upstream scripted at the network edge."""

from __future__ import annotations

from typing import Any

import pytest
from runtime_support import make_ctx, tool_spec
from test_runner import ARGS, REPO, Scripted, context, op, run

from ghmcp_runtime.calls.context import ToolContext, UpstreamResponse
from ghmcp_runtime.core.declared import (
    Compare,
    Declaration,
    ErrorSpec,
    Idempotency,
    Output,
    Resolve,
    Step,
)
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.model import FieldRule, Shape
from ghmcp_runtime.core.projection import ShapeProjector
from ghmcp_runtime.engine.runner import declared, resolving

pytestmark = pytest.mark.anyio
NOT_FOUND = ErrorSpec(code="milestone_not_found", message="No open milestone has that title.",
                      reason="no open milestone has this title")


def milestone_resolve(**kw: Any) -> Resolve:
    return Resolve(param="milestone", operation=op("milestones"), path=REPO, query={"state": "open"},
                   match=("title",), value=("number",), unknown=NOT_FOUND, **kw)


def create_decl(**kw: Any) -> Declaration:
    return Declaration(
        steps=(Step(id="create", operation=op("create", "POST"), path=REPO,
                    body={"title": "{title}", "milestone": "{milestone}"}),),
        output=(Output(name="number", value="{create.number}"),),
        resolve=(milestone_resolve(**kw),))


def pages(*rows: list[dict[str, Any]]) -> Any:
    """Listing pages by the `page` query value, with a next link on every page but the last."""
    def reply(path: Any, query: Any, body: Any) -> UpstreamResponse:
        page = int(query["page"])
        more = {"link": '<https://x/?page=2>; rel="next"'} if page < len(rows) else {}
        return UpstreamResponse(status=200, data=rows[page - 1], headers=more)
    return reply


def titled(*titles: str, start: int = 1) -> list[dict[str, Any]]:
    return [{"number": start + i, "title": t} for i, t in enumerate(titles)]


async def test_a_title_becomes_the_number_before_any_step() -> None:
    up = Scripted({"milestones": pages(titled("v1.0", "v1.1")),
                   "create": lambda p, q, b: {"number": 9, **b}})
    out = await run(create_decl(), up, {**ARGS, "title": "t", "milestone": "v1.1"})
    assert out == {"number": 9}
    assert up.calls == [("milestones", {"owner": "o", "repo": "r"},
                         {"state": "open", "per_page": 100, "page": 1}, None),
                        ("create", {"owner": "o", "repo": "r"}, None, {"title": "t", "milestone": 2})]


@pytest.mark.parametrize("given", [{"milestone": 3}, {"milestone": None}, {}])
async def test_a_number_null_or_absence_is_kept_without_a_lookup(given: dict[str, Any]) -> None:
    up = Scripted({"milestones": pages([]), "create": {"number": 1}})
    await run(create_decl(), up, {**ARGS, "title": "t", **given})
    assert [c[0] for c in up.calls] == ["create"]
    assert up.calls[0][3] == {"title": "t", **given}


async def test_an_exact_match_on_a_later_page_wins_over_a_folded_one() -> None:
    up = Scripted({"milestones": pages(titled("V1.1", "x"), titled("v1.1", start=7)),
                   "create": lambda p, q, b: {"number": b["milestone"]}})
    assert await run(create_decl(), up, {**ARGS, "title": "t", "milestone": "v1.1"}) == {"number": 7}
    assert await run(create_decl(), up, {**ARGS, "title": "t", "milestone": "X"}) == {"number": 2}


async def test_two_folded_matches_are_no_match() -> None:
    up = Scripted({"milestones": pages(titled("Beta", "BETA")), "create": {"number": 1}})
    with pytest.raises(ToolError) as caught:
        await run(create_decl(), up, {**ARGS, "title": "t", "milestone": "beta"})
    assert caught.value.code == "milestone_not_found"


async def test_a_miss_raises_the_declared_error_with_bounded_choices_and_writes_nothing() -> None:
    up = Scripted({"milestones": pages(titled(*(f"s{i}" for i in range(100))), titled("last", start=101)),
                   "create": {"number": 1}})
    with pytest.raises(ToolError) as caught:
        await run(create_decl(choices=3), up, {**ARGS, "title": "t", "milestone": "nope"})
    err = caught.value
    assert (err.code, err.message) == ("milestone_not_found", "No open milestone has that title.")
    assert err.details == {"field": "milestone", "reason": "no open milestone has this title",
                           "choices": ["s0", "s1", "s2"]}
    assert [c[0] for c in up.calls] == ["milestones", "milestones"]  # every page, then no write


async def test_a_listing_longer_than_the_page_cap_says_so() -> None:
    up = Scripted({"milestones": pages(titled("a"), titled("b"), titled("c")), "create": {"number": 1}})
    with pytest.raises(ToolError) as caught:
        await run(create_decl(pages=2), up, {**ARGS, "title": "t", "milestone": "c"})
    assert caught.value.message.endswith("Only the first 200 were compared.")
    assert len(up.calls) == 2


async def test_a_replayed_key_answers_without_resolving_again() -> None:
    decl = Declaration(steps=create_decl().steps, output=create_decl().output,
                       resolve=create_decl().resolve,
                       idempotency=Idempotency(key="key", write="create", scope=("owner", "repo")))
    up = Scripted({"milestones": pages(titled("v1.1")), "create": {"number": 4}})
    ctx = context(up)
    args = {**ARGS, "title": "t", "milestone": "v1.1", "key": "key-000001"}
    assert await declared(decl)(ctx, dict(args)) == {"number": 4}
    assert await declared(decl)(ctx, dict(args)) == {"number": 4}
    assert [c[0] for c in up.calls] == ["milestones", "create"]


async def test_a_hook_gets_its_arguments_resolved() -> None:
    seen: list[Any] = []

    async def hook(ctx: ToolContext, args: Any) -> Any:
        seen.append(dict(args))
        return {}

    up = Scripted({"milestones": pages(titled("v1.0", "v1.1"))})
    await resolving(hook, (milestone_resolve(),))(make_ctx(up), {**ARGS, "milestone": "v1.0"})
    await resolving(hook, (milestone_resolve(),))(make_ctx(up), {**ARGS, "milestone": None})
    assert seen == [{**ARGS, "milestone": 1}, {**ARGS, "milestone": None}]


# -- rows a write answers with ---------------------------------------------------------------------

ISSUE = Shape(name="issue", fields=(
    FieldRule(name="issue_number", path=("number",), detail="summary"),
    FieldRule(name="labels", path=("labels", "[]", "name"), detail="summary"),
    FieldRule(name="preview", path=("body",), detail="summary", transform="preview"),
    FieldRule(name="assignees", path=("assignees", "[]", "login"), detail="full"),
    FieldRule(name="milestone", path=("milestone",), detail="full", nested=(
        FieldRule(name="title", path=("title",), detail="full"),)),
    FieldRule(name="body", path=("body",), detail="full"),
))


async def test_a_summary_row_with_included_and_omitted_fields() -> None:
    decl = Declaration(
        steps=(Step(id="create", operation=op("create", "POST"), path=REPO, body={"title": "{title}"}),),
        output=(Output(name="issue", shape="issue", sources=("create",), detail="summary",
                       include=("assignees", "milestone"), omit=("preview",)),))
    up = Scripted({"create": {"number": 5, "labels": [], "body": "text", "assignees": None,
                              "milestone": {"title": "v1", "number": 2}}})
    ctx = context(up)
    ctx.projector = ShapeProjector({"issue": ISSUE})
    out = await declared(decl)(ctx, {**ARGS, "title": "t"})
    assert out == {"issue": {"issue_number": 5, "labels": [], "assignees": [], "milestone": {"title": "v1"}}}


async def test_a_hook_row_is_exactly_what_the_output_schema_lists() -> None:
    row_schema = {"type": "object", "properties": {"issue_number": {}, "labels": {}, "milestone": {}}}
    tool = tool_spec(output_schema={"oneOf": [{"type": "object", "properties": {"issue": row_schema}}]})
    ctx = make_ctx(tool=tool)
    ctx.projector = ShapeProjector({"issue": ISSUE})
    raw = {"number": 5, "labels": [{"name": "bug"}], "body": "b", "milestone": None}
    assert ctx.row("issue", "issue", raw) == {"issue_number": 5, "labels": ["bug"], "milestone": None}


async def test_changed_fields_carry_the_names_the_declaration_gives() -> None:
    steps = (Step(id="current", operation=op("get"), path=REPO),
             Step(id="update", operation=op("patch", "PATCH"), path=REPO, after=("current",),
                  body={"new_name": "{new_name}"},
                  compare=Compare(against="current", fields={"new_name": "name"}, names={"new_name": "name"})))
    up = Scripted({"get": {"name": "bug"}, "patch": {"name": "Bug"}})
    out = await run(Declaration(steps=steps, output=()), up, {**ARGS, "new_name": "Bug"})
    assert out == {"changed_fields": ["name"]}


# -- lists of names (Forgejo's labels by name, sent as ids) ----------------------------------------

LABEL_UNKNOWN = ErrorSpec(code="label_not_found", message="Some label names are unknown.",
                          reason="not a label of the repository")


def labels_resolve(param: str) -> Resolve:
    return Resolve(param=param, operation=op("labels"), path=REPO, match=("name",), value=("id",),
                   unknown=LABEL_UNKNOWN, each=True)


def labelled_decl(*params: str) -> Declaration:
    return Declaration(
        steps=(Step(id="write", operation=op("write", "POST"), path=REPO,
                    body={p: "{" + p + "}" for p in params}),),
        output=(Output(name="sent", value="{write}"),),
        resolve=tuple(labels_resolve(p) for p in params))


def labels(*names: str, start: int = 10) -> list[dict[str, Any]]:
    return [{"id": start + i, "name": n} for i, n in enumerate(names)]


async def test_every_name_of_a_list_becomes_its_id_in_one_walk_shared_by_the_parameters() -> None:
    up = Scripted({"labels": pages(labels("bug", "docs"), labels("ui", start=20)),
                   "write": lambda p, q, b: b})
    out = await run(labelled_decl("add", "remove"), up, {**ARGS, "add": ["ui", "BUG", 7], "remove": ["docs"]})
    assert out == {"sent": {"add": [20, 10, 7], "remove": [11]}}  # an id in the list is kept
    assert [c[0] for c in up.calls] == ["labels", "labels", "write"]  # both pages once, for both lists


async def test_a_walk_stops_once_every_name_matched_exactly() -> None:
    up = Scripted({"labels": pages(labels("bug", "docs"), labels("ui", start=20)), "write": lambda p, q, b: b})
    await run(labelled_decl("add"), up, {**ARGS, "add": ["docs"]})
    assert [c[0] for c in up.calls] == ["labels", "write"]


async def test_unknown_names_are_refused_together_by_index_and_nothing_is_written() -> None:
    up = Scripted({"labels": pages(labels("bug", "docs")), "write": {}})
    with pytest.raises(ToolError) as caught:
        await run(labelled_decl("add", "remove"), up,
                  {**ARGS, "add": ["nope", "bug", "zzz"], "remove": ["gone"]})
    err = caught.value
    assert err.code == "label_not_found"
    assert err.details == {"fields": ["add", "remove"], "reason": "not a label of the repository",
                           "choices": ["bug", "docs"], "unknown": ["add[0]", "add[2]", "remove[0]"], "count": 3}
    assert "nope" not in str(err.details) and [c[0] for c in up.calls] == ["labels"]


async def test_an_empty_list_or_a_list_of_ids_asks_nothing() -> None:
    up = Scripted({"labels": pages(labels("bug")), "write": lambda p, q, b: b})
    assert await run(labelled_decl("add"), up, {**ARGS, "add": []}) == {"sent": {"add": []}}
    assert await run(labelled_decl("add"), up, {**ARGS, "add": [3, 4]}) == {"sent": {"add": [3, 4]}}
    assert [c[0] for c in up.calls] == ["write", "write"]


async def test_a_null_goes_out_as_the_value_the_forge_clears_with() -> None:
    decl = Declaration(
        steps=(Step(id="write", operation=op("write", "PATCH"), path=REPO, body={"milestone": "{milestone}"},
                    null_as={"milestone": 0}),),
        output=(Output(name="sent", value="{write}"),), resolve=(milestone_resolve(),))
    up = Scripted({"milestones": pages(titled("v1")), "write": lambda p, q, b: b})
    assert await run(decl, up, {**ARGS, "milestone": None}) == {"sent": {"milestone": 0}}
    assert await run(decl, up, {**ARGS, "milestone": "v1"}) == {"sent": {"milestone": 1}}
    assert await run(decl, up, dict(ARGS)) == {"sent": None}  # omitted: no body at all
