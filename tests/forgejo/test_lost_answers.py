"""Writes whose answer is lost (a 502 after Forgejo committed, or before it did) are settled by a
re-read: the create by the one label of that name (absent before it), the edit by the label's
fields, the delete by the label being gone. Never a second write, never a claim the re-read
contradicts."""

from __future__ import annotations

import pytest

from fakeforgejo import FakeForgejo
from tests.forgejo.forgejo_support import ORG, OWNER_TOKEN, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
WHERE = {"owner": ORG, "repo": REPO}
NOT_APPLIED = "Forgejo's answer to a change was lost; a re-read shows it was not applied."


def opened(fake: FakeForgejo) -> Opened:
    return Opened(in_memory_server(fake), secrets=(OWNER_TOKEN,))


@pytest.mark.parametrize(("tool", "args", "operation"), [
    ("forgejo_create_repo_label", {**WHERE, "name": "needs-repro", "color": "d93f0b"}, "issueCreateLabel"),
    ("forgejo_create_org_label", {"org": ORG, "name": "release", "color": "5319e7"}, "orgCreateLabel"),
])
async def test_a_create_whose_answer_was_lost_is_found_not_repeated(
    fake: FakeForgejo, ids: dict[str, int], tool: str, args: dict[str, str], operation: str
) -> None:
    fake.faults.add(operation, "status", status=502, after_commit=True)
    async with opened(fake) as s:
        made = (await s.ok(tool, args))["label"]
        assert made["name"] == args["name"] and made["color"] == args["color"]
        again = await s.error(tool, args, "label_exists")  # a repeat never makes a second label
        assert "that first call created it" in again["message"]
    assert len(fake.calls(operation)) == 1


async def test_a_create_lost_before_forgejo_wrote_it_says_so(fake: FakeForgejo, ids: dict[str, int]) -> None:
    fake.faults.add("issueCreateLabel", "status", status=502)
    async with opened(fake) as s:
        lost = await s.error("forgejo_create_repo_label", {**WHERE, "name": "fresh", "color": "000000"},
                             "upstream_unavailable")
        assert lost["message"] == NOT_APPLIED and lost["temporary"] is True
        made = await s.ok("forgejo_create_repo_label", {**WHERE, "name": "fresh", "color": "000000"})
    assert made["label"]["name"] == "fresh"
    assert [lb.name for lb in fake.labels_of(repo=f"{ORG}/{REPO}")].count("fresh") == 1


async def test_an_edit_whose_answer_was_lost_is_judged_by_the_label(fake: FakeForgejo, ids: dict[str, int]) -> None:
    fake.faults.add("issueEditLabel", "status", status=502, after_commit=True)
    async with opened(fake) as s:
        edited = await s.ok("forgejo_edit_repo_label", {**WHERE, "label_id": ids["docs"], "color": "111111"})
    assert edited["changed_fields"] == ["color"] and edited["label"]["color"] == "111111"
    fake.faults.add("orgEditLabel", "status", status=502)
    async with opened(fake) as s:
        lost = await s.error("forgejo_edit_org_label", {"org": ORG, "label_id": ids["priority"], "name": "p1"},
                             "upstream_unavailable")
    assert lost["message"] == NOT_APPLIED
    label = fake.label(ids["priority"])
    assert label is not None and label.name == "priority"


async def test_a_delete_whose_answer_was_lost_is_judged_by_a_re_read(fake: FakeForgejo, ids: dict[str, int]) -> None:
    fake.faults.add("issueDeleteLabel", "status", status=502, after_commit=True)
    async with opened(fake) as s:
        gone = await s.ok("forgejo_delete_repo_label", {**WHERE, "label_id": ids["docs"]})
    assert gone["deleted_label"]["name"] == "docs" and fake.label(ids["docs"]) is None
    fake.faults.add("orgDeleteLabel", "status", status=502)
    async with opened(fake) as s:
        lost = await s.error("forgejo_delete_org_label", {"org": ORG, "label_id": ids["priority"]},
                             "upstream_unavailable")
    assert lost["message"] == NOT_APPLIED and fake.label(ids["priority"]) is not None
