"""X1 (correctness-3): the fake validates a write as a whole, then applies it, as GitHub does.

A PATCH refused with 422 changes nothing: not the fields listed before the invalid one, not the
repository's labels, not `updated_at`. Checked on every fake handler that writes several fields.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fake_support import OWNER, REPO

from fakegithub import FakeGitHub

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"title": "changed", "milestone": 999}, "milestone"),
        ({"title": "changed", "body": "new body", "assignees": ["ghost"]}, "assignees"),
        ({"body": "new body", "labels": ["never-seen"], "milestone": 999}, "milestone"),
        ({"title": "changed", "state": "closed", "state_reason": "reopened"}, "state_reason"),
        ({"body": "new body", "title": "   "}, "title"),
    ],
)
async def test_x01_refused_issue_patch_changes_nothing(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                      seeded: dict[str, int], payload: dict[str, Any],
                                                      field: str) -> None:
    path = f"{R}/issues/{seeded['second']}"
    before = (await gh.get(path)).json()
    labels = fake.label_names(OWNER, REPO)
    response = await gh.patch(path, json=payload)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == field
    assert (await gh.get(path)).json() == before
    assert fake.label_names(OWNER, REPO) == labels  # unknown labels are created only by a valid PATCH


async def test_x01_valid_issue_patch_still_applies_every_field(gh: httpx.AsyncClient,
                                                              seeded: dict[str, int]) -> None:
    path = f"{R}/issues/{seeded['second']}"
    response = await gh.patch(path, json={"title": "changed", "milestone": seeded["milestone"],
                                          "state": "closed", "labels": ["bug"]})
    issue = response.json()
    assert response.status_code == 200
    assert (issue["title"], issue["milestone"]["number"], issue["state"], issue["state_reason"]) == (
        "changed", seeded["milestone"], "closed", "completed")
    assert [lb["name"] for lb in issue["labels"]] == ["bug"]


@pytest.mark.parametrize(
    "payload",
    [
        {"new_name": "renamed", "color": "not-a-colour"},
        {"new_name": "renamed", "description": "x" * 101},
        {"color": "00ff00", "new_name": "Triage"},  # another label's name (case-insensitive)
    ],
)
async def test_x01_refused_label_patch_changes_nothing(gh: httpx.AsyncClient, payload: dict[str, Any]) -> None:
    before = (await gh.get(f"{R}/labels/bug")).json()
    response = await gh.patch(f"{R}/labels/bug", json=payload)
    assert response.status_code == 422
    assert (await gh.get(f"{R}/labels/bug")).json() == before
    assert (await gh.get(f"{R}/labels/renamed")).status_code == 404


async def test_x01_refused_milestone_patch_changes_nothing(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                          seeded: dict[str, int]) -> None:
    fake.add_milestone(OWNER, REPO, "v2.0")
    path = f"{R}/milestones/{seeded['milestone']}"
    before = (await gh.get(path)).json()
    response = await gh.patch(path, json={"description": "new", "state": "closed", "title": "V2.0"})
    assert response.status_code == 422
    assert (await gh.get(path)).json() == before
