"""writes.run_steps reports changed and applied fields by the resource's field names (`names`),
each once, and ignored ones by the parameters asked for; a wave's steps go out together."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.core.concurrent import MAX_CONCURRENT
from ghmcp_runtime.core.errors import ToolError, WriteLog
from ghmcp_runtime.engine.writes import Resource, Step, run_steps

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


async def test_a_wave_goes_out_at_most_four_at_once_and_is_applied_in_declared_order() -> None:
    in_flight: list[int] = [0, 0]  # now, peak

    def timed(i: int) -> Step:
        async def send() -> UpstreamResponse:
            in_flight[0] += 1
            in_flight[1] = max(in_flight)
            await anyio.sleep(0.001 * (6 - i))  # later steps answer first
            in_flight[0] -= 1
            return OK

        return Step(("title",), send, lambda r, _: {**r, "order": [*r["order"], i]})

    done = await run_steps([[timed(i) for i in range(6)]], {"title": "t", "labels": [], "order": []},
                           views=VIEWS, targets={}, reread=reread)
    assert done.after["order"] == [0, 1, 2, 3, 4, 5] and in_flight[1] == MAX_CONCURRENT


async def test_every_step_of_a_failing_wave_runs_and_no_later_wave_is_sent() -> None:
    sent: list[str] = []

    def tracked(name: str, fields: tuple[str, ...], change: dict[str, Any], fail: bool = False) -> Step:
        inner = step(fields, change, fail)

        async def send() -> UpstreamResponse:
            sent.append(name)
            return await inner.send()

        return Step(fields, send, inner.apply)

    before = {"title": "t", "labels": ["b"], "reason": None}
    with pytest.raises(ToolError) as caught:
        await run_steps([[tracked("title", ("title",), {}, fail=True), tracked("add", ("add",), {"labels": ["a", "b"]})],
                         [tracked("remove", ("remove",), {"labels": ["a"]})]], dict(before), views=VIEWS,
                        targets={"title": "T", "add": frozenset({"a"}), "remove": frozenset()},
                        reread=reread, names=NAMES)
    assert sorted(sent) == ["add", "title"]
    assert caught.value.details == {"applied_fields": ["labels"]}


async def test_the_write_log_annotates_any_error_the_caller_raises_after_the_writes() -> None:
    # n01: an error mapper that builds a new error must not drop what was applied
    before = {"title": "t", "labels": ["b"], "reason": None}
    log = WriteLog()
    assert log.annotate(ToolError("invalid_field", "Before any write.")).details is None
    with pytest.raises(ToolError) as caught:
        await run_steps([[step(("add",), {"labels": ["a", "b"]}), step(("title",), {}, fail=True)]],
                        dict(before), views=VIEWS, targets={"add": frozenset({"a"}), "title": "T"},
                        reread=reread, names=NAMES, log=log)
    assert caught.value.details == {"applied_fields": ["labels"]}
    mapped = log.annotate(ToolError("milestone_not_found", "GitHub refused it.",
                                    details={"field": "milestone"}))
    assert mapped.details == {"field": "milestone", "applied_fields": ["labels"]}
    assert mapped.message == "GitHub refused it. Applied before the failure: labels."
    assert log.annotate(mapped).message == mapped.message  # once
    nothing = WriteLog(sent=True)
    assert nothing.annotate(ToolError("conflict", "x")).details == {"applied_fields": []}


@pytest.mark.parametrize(("after", "stamped", "expected"), [
    ({"id": 1, "title": "T", "updated_at": "b"}, True, "APPLIED"),  # shows what was sent
    ({"id": 1, "title": "t", "updated_at": "a"}, True, "NOT_APPLIED"),  # nothing moved
    ({"id": 1, "title": "t", "updated_at": "b"}, True, "UNKNOWN"),  # n02 (c): reverted since
    ({"id": 1, "title": "t", "updated_at": "b"}, False, "NOT_APPLIED"),  # our other writes moved it
    ({"id": 1, "title": "X", "updated_at": "b"}, True, "UNKNOWN"),  # n02 (a): another writer's
    ({"id": 2, "title": "T", "updated_at": "b"}, True, "UNKNOWN"),  # another resource
])
def test_n02_a_lost_step_is_judged_by_what_it_sent(after: dict[str, Any], stamped: bool,
                                                    expected: str) -> None:
    from ghmcp_runtime.engine.settle import Verdict

    before = {"id": 1, "title": "t", "labels": [], "updated_at": "a"}
    verdict = step(("title",), {}).verdict(VIEWS, {"title": "T"}, before, {"labels": [], **after},
                                          stamped=stamped)
    assert verdict is Verdict[expected]
