"""The update plan recipe (ghmcp_runtime/engine/update_plan.py) on a resource that is not an issue:
a document with tags (exact names, one removal request each), owners (logins, ignoring ASCII
case, one request for all) and an `archived` toggle. Requests go to a recording stand-in for
ctx.call; the answers are what a forge would say."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.core.declared import (
    MemberSet,
    MemberWrite,
    SentWith,
    Shown,
    Step,
    Toggle,
    UpdatePlan,
    VersionCheck,
)
from ghmcp_runtime.core.errors import ToolError, UpstreamError, WriteLog
from ghmcp_runtime.core.forges import GITHUB
from ghmcp_runtime.core.operation import Operation
from ghmcp_runtime.engine.item_plan import patch_body, plan_item
from ghmcp_runtime.engine.shown import patch_fields, targets, views
from ghmcp_runtime.engine.update_plan import apply

pytestmark = pytest.mark.anyio


def op(name: str, method: str, path: str) -> Operation:
    return Operation(operation_id=f"docs/{name}", method=method, path=path, not_found="not_found",
                     success_status=(200,))


DOC = "/docs/{doc_id}"
EDIT, ADD_TAGS, REMOVE_TAG = op("edit", "PATCH", DOC), op("add-tags", "POST", DOC + "/tags"), \
    op("remove-tag", "DELETE", DOC + "/tags/{tag}")
ADD_OWNERS, REMOVE_OWNERS = op("add-owners", "POST", DOC + "/owners"), op("remove-owners", "DELETE", DOC + "/owners")
ARCHIVE, UNARCHIVE = op("archive", "PUT", DOC + "/archive"), op("unarchive", "DELETE", DOC + "/archive")
PLAN = UpdatePlan(
    against="current", noun="document",
    shows={"title": Shown(path=("title",), normalize="trim"), "status": Shown(path=("status",)),
           "reason": Shown(path=("reason",)), "tags": Shown(path=("tags", "[]", "name")),
           "owners": Shown(path=("owners", "[]", "login"), normalize="fold"),
           "archived": Shown(path=("archived",)), "why": Shown(path=("archive_note",))},
    sent_with=(SentWith(follow="reason", lead="status", default={"done": "finished"}),),
    sets=(MemberSet(view="tags", kind="tag",
                    add=MemberWrite(param="add_tags", operation=ADD_TAGS, body="tags", answer=()),
                    remove=MemberWrite(param="remove_tags", operation=REMOVE_TAG, each="tag", answer=(),
                                       done="tag_gone")),
          MemberSet(view="owners", kind="login",
                    add=MemberWrite(param="add_owners", operation=ADD_OWNERS, body="owners", answer=("owners",)),
                    remove=MemberWrite(param="remove_owners", operation=REMOVE_OWNERS, body="owners",
                                       answer=("owners",)))),
    toggles=(Toggle(param="archived", on=ARCHIVE, off=UNARCHIVE, reason="why"),),
    version=VersionCheck(param="expected_version", shape="document"),
)
# the step carrying the plan is the PATCH of the document's own fields (its body's parameters)
EDIT_STEP = Step(id="update", operation=EDIT, body={"title": "{title}", "status": "{status}", "reason": "{reason}"},
                 update=PLAN)
FIELDS = {"title": "title", "status": "status", "reason": "reason"}


@dataclass
class Forge:
    """A document store answering as a forge would; `sent` records every request."""

    doc: dict[str, Any]
    sent: list[tuple[str, dict[str, Any], Any]] = field(default_factory=list)
    fail: set[str] = field(default_factory=set)

    async def call(self, operation: Operation, *, path: Mapping[str, Any], query: Any = None,
                   body: Any = None) -> UpstreamResponse:
        name = operation.operation_id.removeprefix("docs/")
        self.sent.append((name, dict(path), body))
        if name in self.fail:
            raise ToolError("upstream_unavailable", "The write failed.", temporary=True)
        d = self.doc
        if name == "edit":
            d.update(body)
        elif name == "add-tags":
            d["tags"] = d["tags"] + [{"name": t} for t in body["tags"] if t not in [x["name"] for x in d["tags"]]]
            return UpstreamResponse(200, list(d["tags"]), {})
        elif name == "remove-tag":
            if path["tag"] not in [x["name"] for x in d["tags"]]:
                raise UpstreamError("tag_gone", "Not found.", status=404)
            d["tags"] = [x for x in d["tags"] if x["name"] != path["tag"]]
            return UpstreamResponse(200, list(d["tags"]), {})
        elif name == "add-owners":
            d["owners"] = d["owners"] + [{"login": o.lower()} for o in body["owners"]]
        elif name == "remove-owners":
            gone = {o.lower() for o in body["owners"]}
            d["owners"] = [o for o in d["owners"] if o["login"] not in gone]
        elif name == "archive":
            d["archived"], d["archive_note"] = True, (body or {}).get("why")
        elif name == "unarchive":
            d["archived"], d["archive_note"] = False, None
        return UpstreamResponse(200, {k: (list(v) if isinstance(v, list) else v) for k, v in d.items()}, {})


@dataclass
class Ctx:
    """What the engine uses of a ToolContext."""

    forge_store: Forge
    dry_run: bool = False
    writes: WriteLog = field(default_factory=WriteLog)
    forge: Any = GITHUB

    async def call(self, operation: Operation, **kwargs: Any) -> UpstreamResponse:
        return await self.forge_store.call(operation, **kwargs)

    def version(self, shape: str, raw: Mapping[str, Any]) -> str:
        return f"v-{raw.get('title')}"


def document(**extra: Any) -> dict[str, Any]:
    return {"id": 7, "title": "Plan", "status": "open", "reason": None, "archived": False, "archive_note": None,
            "tags": [{"name": "draft"}, {"name": "Q3"}], "owners": [{"login": "ann"}], **extra}


async def run(forge: Forge, args: dict[str, Any], **ctx: Any) -> Any:
    async def reread() -> dict[str, Any]:
        return dict(forge.doc)

    return await apply(Ctx(forge, **ctx), EDIT_STEP, {"doc_id": 7, **args}, dict(forge.doc), reread)  # type: ignore[arg-type]


async def test_only_what_differs_is_written_and_the_answer_is_what_the_forge_shows() -> None:
    forge = Forge(document())
    done = await run(forge, {"title": " Plan ", "add_tags": ["q4", "draft"], "remove_tags": ["Q3"],
                             "add_owners": ["ANN", "Bob"], "archived": True, "why": "old"})
    names = [s[0] for s in forge.sent]
    assert "edit" not in names  # the title, trimmed, is the one shown
    assert ("add-tags", {"doc_id": 7}, {"tags": ["q4"]}) in forge.sent  # draft is already there
    assert ("add-owners", {"doc_id": 7}, {"owners": ["Bob"]}) in forge.sent  # ann, ignoring case
    assert ("remove-tag", {"doc_id": 7, "tag": "Q3"}, None) in forge.sent
    assert done.changed == ["tags", "owners", "archived", "why"] and done.ignored == []
    assert done.after["tags"] == [{"name": "draft"}, {"name": "q4"}]


async def test_two_requests_on_one_set_take_two_waves_the_add_last() -> None:
    forge = Forge(document())
    args = {"doc_id": 7, "add_tags": ["q4"], "remove_tags": ["Q3", "draft"]}
    planned = plan_item(Ctx(forge), EDIT_STEP, args, document()).waves  # type: ignore[arg-type]
    assert [[s.fields for s in wave] for wave in planned] == [[("remove_tags",), ("remove_tags",)], [("add_tags",)]]


def body_of(plan: UpdatePlan, args: dict[str, Any], current: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], set[str]]:
    """The PATCH body, the values it leaves, the parameters it leaves out as ignored."""
    goal, ignored = targets(plan, args), set[str]()
    return patch_body(plan, FIELDS, args, current, views(plan, args), goal, ignored), goal, ignored


async def test_sent_with_sends_the_follower_with_its_lead_and_the_lead_with_it() -> None:
    current = document()
    assert patch_fields(EDIT_STEP.body) == FIELDS
    assert body_of(PLAN, {"status": "done"}, current) == (
        {"status": "done", "reason": "finished"}, {"status": "done", "reason": "finished"}, set())
    assert body_of(PLAN, {"status": "open", "reason": "later"}, current)[0] == {"reason": "later", "status": "open"}
    # read only with its lead: alone it is not sent, and reported ignored
    assert body_of(PLAN, {"reason": "later"}, current) == ({}, {}, {"reason"})


async def test_sent_with_stores_what_the_forge_keeps_whatever_is_sent() -> None:
    # reopening stores its own reason: the caller's is sent, the stored one planned, and the
    # caller's reported ignored; a lead that stays where the forge keeps its own reason reads none
    plan = dataclasses.replace(PLAN, sent_with=(SentWith(follow="reason", lead="status", default={"open": "again"},
                                                         stores={"open": "again"}),))
    done = document(status="done", reason="finished")
    assert body_of(plan, {"status": "open", "reason": "later"}, done) == (
        {"status": "open", "reason": "later"}, {"status": "open", "reason": "again"}, {"reason"})
    assert body_of(plan, {"status": "open"}, done) == ({"status": "open", "reason": "again"},
                                                       {"status": "open", "reason": "again"}, set())
    assert body_of(plan, {"status": "open", "reason": "later"}, document()) == (
        {}, {"status": "open"}, {"reason"})


async def test_a_member_already_gone_counts_as_done() -> None:
    forge = Forge(document())

    async def gone_meanwhile(operation: Operation, **kwargs: Any) -> UpstreamResponse:
        if operation is REMOVE_TAG:
            forge.doc["tags"] = [t for t in forge.doc["tags"] if t["name"] != "Q3"]
        return await Forge.call(forge, operation, **kwargs)

    forge.call = gone_meanwhile  # type: ignore[method-assign]
    done = await run(forge, {"remove_tags": ["Q3"]})
    assert done.changed == ["tags"] and done.after["tags"] == [{"name": "draft"}]


@pytest.mark.parametrize(("args", "field"), [
    ({"add_tags": ["x"], "remove_tags": ["x"]}, ["add_tags", "remove_tags"]),
    ({"add_owners": ["Ann"], "remove_owners": ["ANN"]}, ["add_owners", "remove_owners"]),
    ({"expected_version": "v-Other"}, "expected_version"),
    ({"remove_tags": [".."]}, "remove_tags"),
])
async def test_refusals_before_any_write(args: dict[str, Any], field: Any) -> None:
    forge = Forge(document(tags=[{"name": ".."}]))
    with pytest.raises(ToolError) as caught:
        await run(forge, args)
    assert caught.value.details is not None
    assert caught.value.details.get("field", caught.value.details.get("fields")) == field
    assert forge.sent == []


async def test_a_failed_write_names_what_was_applied_and_a_dry_run_sends_nothing() -> None:
    forge = Forge(document(), fail={"archive"})
    with pytest.raises(ToolError) as caught:
        await run(forge, {"title": "New", "archived": True})
    assert caught.value.details == {"applied_fields": ["title"]}
    planned = Forge(document())
    done = await run(planned, {"title": "New", "add_tags": ["q4"], "archived": True}, dry_run=True)
    # in `shows` order, as the real run reports them; the toggle's reason only when one is passed
    # that the document does not show
    assert planned.sent == [] and done.changed == ["title", "tags", "archived"]
    real = Forge(document())
    assert (await run(real, {"title": "New", "add_tags": ["q4"], "archived": True})).changed == done.changed
    reasoned = await run(Forge(document()), {"archived": True, "why": "stale"}, dry_run=True)
    assert reasoned.changed == ["archived", "why"]


async def test_targets_follow_shows_with_each_sets_parameters_after_its_view() -> None:
    asked = targets(PLAN, {"remove_owners": ["x"], "title": "T", "add_tags": ["a"], "owners": ["Z"]})
    assert list(asked) == ["title", "add_tags", "owners", "remove_owners"]
    assert asked["owners"] == frozenset({"z"}) and asked["remove_owners"] == frozenset()


async def test_requests_take_their_path_from_the_declared_bindings_and_null_goes_out_as_declared() -> None:
    """Forgejo's requests name the issue `{index}` while the tool says `issue_number`: every
    request of the plan takes the path the generator bound (`{index}` from `issue_number`), and a
    null milestone goes out as the 0 Forgejo clears with."""
    doc = "/items/{index}"
    edit, add, remove = op("edit", "PATCH", doc), op("add-tags", "POST", doc + "/tags"), \
        op("remove-tag", "DELETE", doc + "/tags/{tag}")
    plan = UpdatePlan(against="current", noun="item",
                      shows={"milestone": Shown(path=("milestone", "id")), "tags": Shown(path=("tags", "[]", "name"))},
                      sets=(MemberSet(view="tags", kind="tag",
                                      add=MemberWrite(param="add_tags", operation=add, body="tags", answer=(),
                                                      path={"index": "{issue_number}"}),
                                      remove=MemberWrite(param="remove_tags", operation=remove, each="tag",
                                                         path={"index": "{issue_number}"})),))
    step = Step(id="update", operation=edit, path={"index": "{issue_number}"}, body={"milestone": "{milestone}"},
                update=plan, null_as={"milestone": 0})
    forge = Forge({"milestone": {"id": 3}, "tags": [{"name": "Q3"}], "title": "x"})

    async def reread() -> dict[str, Any]:
        return dict(forge.doc)

    args = {"issue_number": 42, "milestone": None, "add_tags": ["q4"], "remove_tags": ["Q3"]}
    await apply(Ctx(forge), step, args, dict(forge.doc), reread)  # type: ignore[arg-type]
    assert sorted(forge.sent, key=lambda s: s[0]) == [
        ("add-tags", {"index": 42}, {"tags": ["q4"]}), ("edit", {"index": 42}, {"milestone": 0}),
        ("remove-tag", {"index": 42, "tag": "Q3"}, None)]
