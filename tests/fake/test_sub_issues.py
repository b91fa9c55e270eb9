"""The fake's sub-issues and dependencies: GitHub's refusals (one parent, no self or cycle, a full
parent, exactly one anchor when reordering, no such link), every answer validated by the spec."""

from __future__ import annotations

import httpx
import pytest
from fake_support import OWNER, REPO

from fakegithub import FakeGitHub
from fakegithub.sub_issue_handlers import MAX_SUB_ISSUES

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"


def made(fake: FakeGitHub, count: int) -> list[tuple[int, int]]:
    """(number, id) of `count` new issues."""
    numbers = [fake.add_issue(OWNER, REPO, f"issue {i}") for i in range(count)]
    return [(n, fake.get_issue(OWNER, REPO, n).id) for n in numbers]


async def test_a_sub_issue_has_one_parent_and_no_cycle(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                       seeded: dict[str, int]) -> None:
    (top, top_id), (mid, mid_id), (low, low_id) = made(fake, 3)
    assert (await gh.post(f"{R}/issues/{top}/sub_issues", json={"sub_issue_id": mid_id})).status_code == 201
    assert (await gh.post(f"{R}/issues/{mid}/sub_issues", json={"sub_issue_id": low_id})).status_code == 201
    for parent, child in ((low, top_id), (top, top_id), (top, mid_id)):  # cycle, self, linked already
        refused = await gh.post(f"{R}/issues/{parent}/sub_issues", json={"sub_issue_id": child})
        assert refused.status_code == 422, (parent, child)
    other = await gh.post(f"{R}/issues/{top}/sub_issues", json={"sub_issue_id": low_id})
    assert other.status_code == 422 and "one parent" in other.text
    moved = await gh.post(f"{R}/issues/{top}/sub_issues", json={"sub_issue_id": low_id, "replace_parent": True})
    assert moved.status_code == 201 and moved.json()["number"] == top and "location" in moved.headers
    assert fake.sub_issue_numbers(OWNER, REPO, top) == [mid, low] and fake.sub_issue_numbers(OWNER, REPO, mid) == []
    gone = await gh.request("DELETE", f"{R}/issues/{mid}/sub_issue", json={"sub_issue_id": low_id})
    assert gone.status_code == 404  # not its sub-issue
    no_parent = await gh.get(f"{R}/issues/{top}/parent")
    assert no_parent.status_code == 404


async def test_reordering_takes_exactly_one_sibling_anchor(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                           seeded: dict[str, int]) -> None:
    (parent, _), (a, a_id), (b, b_id), (_, outsider_id) = made(fake, 4)
    for child in (a_id, b_id):
        await gh.post(f"{R}/issues/{parent}/sub_issues", json={"sub_issue_id": child})
    url = f"{R}/issues/{parent}/sub_issues/priority"
    for body in ({"sub_issue_id": b_id}, {"sub_issue_id": b_id, "after_id": a_id, "before_id": a_id},
                 {"sub_issue_id": b_id, "after_id": outsider_id}):
        assert (await gh.patch(url, json=body)).status_code == 422, body
    assert (await gh.patch(url, json={"sub_issue_id": outsider_id, "after_id": a_id})).status_code == 404
    assert (await gh.patch(url, json={"sub_issue_id": b_id, "before_id": a_id})).status_code == 200
    assert fake.sub_issue_numbers(OWNER, REPO, parent) == [b, a]


async def test_a_parent_holds_at_most_the_limit(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                seeded: dict[str, int]) -> None:
    (parent, _), *children = made(fake, MAX_SUB_ISSUES + 2)
    for number, _ in children[:MAX_SUB_ISSUES]:
        fake.add_sub_issue(OWNER, REPO, parent, number)
    full = await gh.post(f"{R}/issues/{parent}/sub_issues", json={"sub_issue_id": children[-1][1]})
    assert full.status_code == 422


async def test_dependencies_refuse_cycles_and_list_both_ways(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                             seeded: dict[str, int]) -> None:
    (a, a_id), (b, b_id), (c, c_id) = made(fake, 3)
    assert (await gh.post(f"{R}/issues/{a}/dependencies/blocked_by", json={"issue_id": b_id})).status_code == 201
    assert (await gh.post(f"{R}/issues/{b}/dependencies/blocked_by", json={"issue_id": c_id})).status_code == 201
    for issue, blocker in ((c, a_id), (a, a_id), (a, b_id)):  # cycle through b, self, exists
        assert (await gh.post(f"{R}/issues/{issue}/dependencies/blocked_by",
                              json={"issue_id": blocker})).status_code == 422
    blocking = await gh.get(f"{R}/issues/{b}/dependencies/blocking")
    assert [i["number"] for i in blocking.json()] == [a]
    assert (await gh.delete(f"{R}/issues/{a}/dependencies/blocked_by/{c_id}")).status_code == 404
    assert (await gh.delete(f"{R}/issues/{a}/dependencies/blocked_by/{b_id}")).status_code == 200
    assert fake.blocker_numbers(OWNER, REPO, a) == []


async def test_writes_need_push_access(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    (parent, _), (_, child_id) = made(fake, 2)
    fake.add_token("ghp_visitor00000000000000000000000000009", "visitor", scopes=("repo",), collaborator_on=())
    async with fake.client("ghp_visitor00000000000000000000000000009") as c:
        refused = await c.post(f"{R}/issues/{parent}/sub_issues", json={"sub_issue_id": child_id})
    assert refused.status_code == 403 and "push access" in refused.json()["message"]
