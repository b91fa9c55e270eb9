"""stored_as_sent (declared.Stored): a write answers whether GitHub holds its text exactly as sent,
judged on GitHub's answer; a partial update that sent nothing is judged on its compare read."""

from __future__ import annotations

from typing import Any

import pytest
from test_runner import ARGS, REPO, Scripted, op, run

from ghmcp_runtime.core.declared import Compare, Declaration, Output, Step, Stored
from ghmcp_runtime.engine.stored import altered

pytestmark = pytest.mark.anyio

CREATE = Declaration(steps=(
    Step(id="create", operation=op("create", "POST"), path=REPO,
         body={"title": "{title}", "body": "{text}"},
         stored=Stored(fields={"title": ("title",), "body": ("body",)}, names={"body": "text"})),
), output=(Output(name="number", value="{create.number}"),))


def github(trim: bool = False, newlines: bool = False) -> Any:
    """A create whose answer holds the text as GitHub would keep it."""
    def answer(path: Any, query: Any, body: dict[str, Any]) -> dict[str, Any]:
        title, text = body["title"], body.get("body")
        return {"number": 7, "title": title.strip() if trim else title,
                "body": text.replace("\r\n", "\n") if newlines and text else text}
    return answer


@pytest.mark.parametrize(("args", "trim", "newlines", "expected"), [
    ({"title": "Crash", "text": "a\r\nb <!-- form -->"}, True, False, {}),  # kept: nothing to say
    ({"title": "Crash \n", "text": "a"}, True, False, {"stored_as_sent": False, "altered_fields": ["title"]}),
    ({"title": "Crash", "text": "a\r\nb"}, False, True, {"stored_as_sent": False, "altered_fields": ["text"]}),
    ({"title": " Crash", "text": "a\r\n"}, True, True,
     {"stored_as_sent": False, "altered_fields": ["title", "text"]}),
    ({"title": "Crash"}, True, True, {}),  # no body sent: nothing to compare
])
async def test_a_create_says_whether_github_kept_its_text(args: dict[str, Any], trim: bool, newlines: bool,
                                                          expected: dict[str, Any]) -> None:
    up = Scripted({"create": github(trim, newlines)})
    out = await run(CREATE, up, {**ARGS, **args})
    assert out == {"number": 7, **expected}


async def test_a_partial_update_is_judged_on_what_github_holds() -> None:
    current = {"id": 1, "title": "Crash", "description": None}
    decl = Declaration(steps=(
        Step(id="current", operation=op("get"), path=REPO),
        Step(id="update", operation=op("patch", "PATCH"), path=REPO, after=("current",),
             body={"title": "{title}", "description": "{description}"},
             compare=Compare(against="current", fields={"title": "title", "description": "description"}),
             stored=Stored(fields={"title": ("title",), "description": ("description",)})),
    ), output=())
    up = Scripted({"get": current, "patch": lambda p, q, b: {**current, **b, "title": b.get("title", "").strip()}})
    assert await run(decl, up, {**ARGS, "title": "Crash", "description": ""}) == {
        "changed_fields": []}  # nothing differed, nothing sent: the read holds it
    assert [c[0] for c in up.calls] == ["get"]
    out = await run(decl, up, {**ARGS, "title": "Crash!  "})
    assert out == {"changed_fields": ["title"], "stored_as_sent": False, "altered_fields": ["title"]}


def test_null_and_empty_text_are_the_same_and_absent_fields_are_not_compared() -> None:
    fields = {"body": ("body",), "title": ("title",)}
    assert altered({"body": ""}, {"body": None, "title": "x"}, fields) == []
    assert altered({"title": "x"}, {"title": "x\n"}, fields, {"title": "name"}) == ["name"]
    assert altered({"title": "x"}, None, fields) == ["title"]
