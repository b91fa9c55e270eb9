"""writes.run_steps reports changed and applied fields by the resource's field names (`names`),
each once, and ignored ones by the parameters asked for."""

from __future__ import annotations

from typing import Any

import pytest

from ghmcp_runtime.context import UpstreamResponse
from ghmcp_runtime.errors import ToolError
from ghmcp_runtime.writes import Resource, Step, run_steps

pytestmark = pytest.mark.anyio
VIEWS = {"add": lambda r: frozenset(r["labels"]) & {"a"}, "remove": lambda r: frozenset(r["labels"]) & {"b"},
         "title": lambda r: r["title"], "reason": lambda r: r.get("reason")}
NAMES = {"add": "labels", "remove": "labels"}
OK = UpstreamResponse(status=200, data=None, headers={})


def step(fields: tuple[str, ...], change: dict[str, Any], fail: bool = False) -> Step:
    async def send() -> UpstreamResponse:
        if fail:
            raise ToolError("upstream_unavailable", "The write failed.", temporary=True)
        return OK

    def apply(resource: Resource, resp: UpstreamResponse | None) -> Resource:
        return {**resource, **change}

    return Step(fields, send, apply)


async def reread() -> Resource:
    raise AssertionError("no lost answer here")


async def test_changed_and_applied_name_fields_ignored_names_parameters() -> None:
    before = {"title": "t", "labels": ["b"], "reason": None}
    targets = {"title": "T", "add": frozenset({"a"}), "remove": frozenset(), "reason": "x"}
    done = await run_steps([[step(("title",), {"title": "T"})], [step(("add",), {"labels": ["a", "b"]})],
                            [step(("remove",), {"labels": ["a"]})]], dict(before), views=VIEWS,
                           targets=targets, reread=reread, names=NAMES)
    assert done.changed == ["title", "labels"] and done.ignored == ["reason"]
    with pytest.raises(ToolError) as caught:
        await run_steps([[step(("add",), {"labels": ["a", "b"]})], [step(("remove",), {}, fail=True)]],
                        dict(before), views=VIEWS, targets=targets, reread=reread, names=NAMES)
    assert caught.value.details == {"applied_fields": ["labels"]}
    assert caught.value.message.endswith("Applied before the failure: labels.")
