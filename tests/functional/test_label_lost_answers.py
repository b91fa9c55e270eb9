"""github_update_label when GitHub's answer to the PATCH is lost (official client, fake GitHub).

A rename moves the label: once GitHub has applied it, the old name no longer resolves. The call
whose answer was lost settles by re-reading the label where the write leaves it (the new name);
a repeat of that call finds the old name gone and the new one carrying every requested field, and
answers with it (changed_fields []), never label_not_found ("nothing was changed") for a change
that GitHub shows. A label under the new name that does not carry the requested fields is not the
one asked for: the repeat still answers label_not_found and writes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
RENAME = {**REPO_ARGS, "name": "bug", "new_name": "defect", "color": "B60205",
          "description": "Something is broken"}
RENAMED_ROW = {"name": "defect", "color": "b60205", "description": "Something is broken"}
LOST = {"kind": "timeout", "after_commit": True, "delay": 2.0}  # applied, then no answer in time


def opened(fake: FakeGitHub) -> Opened:
    return Opened(in_memory_server(fake, timeout=0.5), secrets=("defect", "Something is broken"))


def label_state(fake: FakeGitHub, name: str) -> tuple[str, str, str | None] | None:
    found = [lb for lb in fake.labels(OWNER, REPO) if lb.name.casefold() == name.casefold()]
    return (found[0].name, found[0].color, found[0].description) if found else None


def patches(fake: FakeGitHub) -> int:
    return len(fake.calls("issues/update-label"))


async def test_a_rename_whose_answer_was_lost_is_settled_by_reading_the_new_name(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # before: upstream_unavailable "may have been applied", although GitHub showed the rename
    fake.faults.add("issues/update-label", **LOST)  # type: ignore[arg-type]
    async with opened(fake) as s:
        data = await s.ok("github_update_label", RENAME)
    assert data["label"] == RENAMED_ROW
    assert data["changed_fields"] == ["name", "color", "description"]  # GitHub shows them now
    assert label_state(fake, "defect") == ("defect", "b60205", "Something is broken")
    assert label_state(fake, "bug") is None and patches(fake) == 1
    assert fake.label_names(OWNER, REPO, seeded["first"]) == ["defect", "triage"]


async def test_a_rename_retried_after_a_lost_answer_answers_with_the_renamed_label(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # issue 14 (suspected, reproduced): the repeat answered label_not_found "nothing was changed"
    fake.faults.add("issues/update-label", **LOST)  # type: ignore[arg-type]
    # the first call cannot settle: every read of the new name fails for now
    fake.faults.add(Match(operation="issues/get-label", path="/labels/defect$"), "status", status=502,
                    times=None)
    async with opened(fake) as s:
        lost = await s.error("github_update_label", RENAME, "upstream_unavailable")
        assert lost["temporary"] is True and "may have been applied" in lost["message"]
        fake.faults.clear()
        repeat = await s.ok("github_update_label", RENAME)
        assert repeat["label"] == RENAMED_ROW and repeat["changed_fields"] == []
        # the same holds for the rename alone, and for any case of the old name
        alone = await s.ok("github_update_label", {**REPO_ARGS, "name": "BUG", "new_name": "defect"})
    assert alone["label"] == RENAMED_ROW and alone["changed_fields"] == []
    assert patches(fake) == 1 and label_state(fake, "defect") == ("defect", "b60205", "Something is broken")


async def test_a_change_whose_answer_was_lost_and_not_applied_says_so(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("issues/update-label", "status", status=502)  # not performed
    async with opened(fake) as s:
        data = await s.error("github_update_label", {**REPO_ARGS, "name": "bug", "color": "b60205"},
                             "upstream_unavailable")
        assert data["temporary"] is True
        assert data["message"] == "GitHub's answer to a change was lost; a re-read shows it was not applied."
        assert data["details"]["reason"] == "the change was not applied; repeat the call"
        again = await s.ok("github_update_label", {**REPO_ARGS, "name": "bug", "color": "b60205"})
    assert again["changed_fields"] == ["color"] and label_state(fake, "bug") == ("bug", "b60205", None)


async def test_a_rename_whose_answer_was_lost_and_not_applied_stays_unknown(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # the new name does not resolve: the re-read cannot show the label, so nothing is claimed
    fake.faults.add("issues/update-label", "status", status=502)
    async with opened(fake) as s:
        data = await s.error("github_update_label", RENAME, "upstream_unavailable")
        assert "may have been applied" in data["message"]
        again = await s.ok("github_update_label", RENAME)
    assert again["label"] == RENAMED_ROW and again["changed_fields"] == ["name", "color", "description"]
    assert label_state(fake, "bug") is None and patches(fake) == 2


@pytest.mark.parametrize("other", [
    {"color": "00ff00", "description": "Something is broken"},
    {"color": "b60205", "description": "Another meaning"},
    {"color": "b60205", "description": None},
], ids=["color", "description", "no-description"])
async def test_another_label_under_the_new_name_is_still_label_not_found(
        fake: FakeGitHub, seeded: dict[str, Any], other: dict[str, Any]) -> None:
    fake.add_label(OWNER, REPO, "defect", other["color"], other["description"])
    async with opened(fake) as s:
        data = await s.error("github_update_label", {**RENAME, "name": "gone"}, "label_not_found")
    assert data["details"] == {"field": "name", "reason": "no label of the repository has this name"}
    assert data["repair"]["tool"] == "github_list_labels"
    assert patches(fake) == 0 and label_state(fake, "defect") == ("defect", other["color"], other["description"])


async def test_a_new_name_in_another_case_is_not_the_requested_name(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # names compare exactly, as the partial update compares them: GitHub resolves "DEFECT" to the
    # label "defect", which does not carry the name asked for
    fake.add_label(OWNER, REPO, "defect", "b60205", "Something is broken")
    async with opened(fake) as s:
        await s.error("github_update_label", {**RENAME, "name": "gone", "new_name": "DEFECT"}, "label_not_found")
    assert patches(fake) == 0


DELETE = {**REPO_ARGS, "name": "WontFix", "delete_mode": "force"}


async def test_a_delete_whose_answer_was_lost_is_settled_by_a_re_read(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    # before: upstream_unavailable "may have been applied", although GitHub no longer had the label
    before = label_state(fake, "wontfix")
    assert before is not None
    fake.faults.add("issues/delete-label", **LOST)  # type: ignore[arg-type]
    async with opened(fake) as s:
        data = await s.ok("github_delete_label", DELETE)
        assert (data["deleted_label"]["name"], data["deleted_label"]["color"]) == before[:2]
        # a fresh call cannot know that an earlier one deleted it, and claims nothing for itself
        repeat = await s.error("github_delete_label", DELETE, "label_not_found")
    assert repeat["message"] == ("No label of the repository has this name (it may have been deleted "
                                 "already); this call changed nothing.")
    assert repeat["repair"]["tool"] == "github_list_labels"
    assert label_state(fake, "wontfix") is None and len(fake.calls("issues/delete-label")) == 1


async def test_a_delete_whose_answer_was_lost_and_not_applied_says_so(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("issues/delete-label", "status", status=502)  # not performed
    async with opened(fake) as s:
        data = await s.error("github_delete_label", DELETE, "upstream_unavailable")
        assert data["message"] == "GitHub's answer to a change was lost; a re-read shows it was not applied."
        assert label_state(fake, "wontfix") is not None
        await s.ok("github_delete_label", DELETE)
    assert label_state(fake, "wontfix") is None
