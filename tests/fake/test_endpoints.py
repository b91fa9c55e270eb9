"""Every implemented operation's happy path; the fixture asserts no contract violations."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fake_support import OWNER, REPO

from fakegithub import FakeGitHub
from fakegithub.validation import OPERATIONS

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"


async def test_every_operation_happy_path(fake: FakeGitHub, gh: httpx.AsyncClient,
                                          seeded: dict[str, int]) -> None:
    n = seeded["first"]
    subs = [fake.add_issue(OWNER, REPO, f"part {i}") for i in range(2)]
    ids = [fake.get_issue(OWNER, REPO, s).id for s in subs]
    calls: list[tuple[str, str, Any, int]] = [
        ("GET", R, None, 200),
        ("GET", f"{R}/issues", None, 200),
        ("GET", f"{R}/issues/{n}", None, 200),
        ("POST", f"{R}/issues", {"title": "New", "body": "b", "labels": ["bug"],
                                 "assignees": ["hubot"], "milestone": seeded["milestone"]}, 201),
        ("PATCH", f"{R}/issues/{n}", {"title": "Renamed", "state": "closed"}, 200),
        ("PUT", f"{R}/issues/{n}/lock", {"lock_reason": "resolved"}, 204),
        ("DELETE", f"{R}/issues/{n}/lock", None, 204),
        ("GET", f"{R}/issues/{n}/comments", None, 200),
        ("POST", f"{R}/issues/{n}/comments", {"body": "hello"}, 201),
        ("GET", f"{R}/labels", None, 200),
        ("POST", f"{R}/labels", {"name": "needs info", "color": "#FFAA00", "description": "d"}, 201),
        ("GET", f"{R}/labels/needs%20info", None, 200),
        ("PATCH", f"{R}/labels/needs%20info", {"new_name": "needs-info", "color": "00ff00"}, 200),
        ("POST", f"{R}/issues/{n}/labels", {"labels": ["needs-info"]}, 200),
        ("GET", f"{R}/issues/{n}/labels", None, 200),
        ("DELETE", f"{R}/issues/{n}/labels/needs-info", None, 200),
        ("PUT", f"{R}/issues/{n}/labels", {"labels": ["bug"]}, 200),
        ("DELETE", f"{R}/labels/needs-info", None, 204),
        ("GET", f"{R}/milestones", None, 200),
        ("POST", f"{R}/milestones", {"title": "v2.0", "state": "open", "description": "next",
                                     "due_on": "2024-09-30T00:00:00Z"}, 201),
        ("GET", f"{R}/milestones/2", None, 200),
        ("PATCH", f"{R}/milestones/2", {"state": "closed"}, 200),
        ("DELETE", f"{R}/milestones/2", None, 204),
        ("GET", "/search/issues", {"q": f"repo:{OWNER}/{REPO} is:issue"}, 200),
        ("GET", "/user", None, 200),
        ("GET", "/user/repos", {"per_page": 100}, 200),
        ("GET", f"{R}/collaborators/hubot/permission", None, 200),
        ("POST", f"{R}/issues/{n}/sub_issues", {"sub_issue_id": ids[0]}, 201),
        ("POST", f"{R}/issues/{n}/sub_issues", {"sub_issue_id": ids[1]}, 201),
        ("GET", f"{R}/issues/{n}/sub_issues", None, 200),
        ("PATCH", f"{R}/issues/{n}/sub_issues/priority", {"sub_issue_id": ids[1], "before_id": ids[0]}, 200),
        ("GET", f"{R}/issues/{subs[0]}/parent", None, 200),
        ("DELETE", f"{R}/issues/{n}/sub_issue", {"sub_issue_id": ids[0]}, 200),
        ("POST", f"{R}/issues/{n}/dependencies/blocked_by", {"issue_id": ids[0]}, 201),
        ("GET", f"{R}/issues/{n}/dependencies/blocked_by", None, 200),
        ("GET", f"{R}/issues/{subs[0]}/dependencies/blocking", None, 200),
        ("DELETE", f"{R}/issues/{n}/dependencies/blocked_by/{ids[0]}", None, 200),
        ("GET", f"{R}/assignees", None, 200),
        ("GET", f"{R}/assignees/hubot", None, 204),
        ("POST", f"{R}/issues/{n}/assignees", {"assignees": ["octocat"]}, 201),
        ("DELETE", f"{R}/issues/{n}/assignees", {"assignees": ["octocat"]}, 200),
        *_git_calls(fake, seeded["pr"]),
    ]
    for method, url, payload, status in calls:
        if method == "GET":
            response = await gh.get(url, params=payload)
        else:
            response = await gh.request(method, url, json=payload)
        assert response.status_code == status, (method, url, response.text)
    assert {r.operation_id for r in fake.requests} == set(OPERATIONS)
    assert fake.violations == []


def _git_calls(fake: FakeGitHub, pr: int) -> list[tuple[str, str, Any, int]]:
    """Pull requests, branches, commits and contents (fakegithub/pull_handlers.py, git_handlers.py)."""
    fake.add_check_run(OWNER, REPO, f"pr-{pr}", "ci")
    fake.add_status(OWNER, REPO, f"pr-{pr}", "lint")
    feature = fake.add_commit(OWNER, REPO, "feature", {"src/app.py": "print('hi')\n"}, author="hubot")
    main = fake.branch_sha(OWNER, REPO, "main")
    content = "aGVsbG8K"  # base64 of "hello\n"
    return [
        ("GET", f"{R}/pulls", None, 200),
        ("GET", f"{R}/pulls/{pr}", None, 200),
        ("GET", f"{R}/pulls/{pr}/files", None, 200),
        ("GET", f"{R}/pulls/{pr}/reviews", None, 200),
        ("POST", f"{R}/pulls/{pr}/reviews", {"event": "COMMENT", "body": "nice"}, 200),
        ("GET", f"{R}/pulls/{pr}/comments", None, 200),
        ("POST", f"{R}/pulls/{pr}/requested_reviewers", {"reviewers": ["octocat"]}, 201),
        ("DELETE", f"{R}/pulls/{pr}/requested_reviewers", {"reviewers": ["octocat"]}, 200),
        ("PATCH", f"{R}/pulls/{pr}", {"title": "Fix the crash"}, 200),
        ("GET", f"{R}/commits/{feature}/check-runs", None, 200),
        ("GET", f"{R}/commits/pr-{pr}/status", None, 200),
        ("GET", f"{R}/branches", None, 200),
        ("POST", f"{R}/git/refs", {"ref": "refs/heads/topic", "sha": main}, 201),
        ("GET", f"{R}/commits", {"sha": "feature"}, 200),
        ("GET", f"{R}/commits/{feature}", None, 200),
        ("GET", f"{R}/contents/src/app.py", {"ref": "feature"}, 200),
        ("PUT", f"{R}/contents/docs/hello.md", {"message": "Add", "content": content, "branch": "feature"}, 201),
        ("POST", f"{R}/pulls", {"title": "Feature", "head": "feature", "base": "main"}, 201),
        ("GET", "/search/code", {"q": f"hello repo:{OWNER}/{REPO}"}, 200),
        ("PUT", f"{R}/pulls/{pr}/update-branch", None, 422),  # main has not moved: nothing to merge
        ("PUT", f"{R}/pulls/{pr}/merge", {"sha": fake.pull(OWNER, REPO, pr).head_sha}, 200),
    ]


async def test_objects_are_complete(gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    issue = (await gh.get(f"{R}/issues/{seeded['first']}")).json()
    assert issue["html_url"] == f"https://github.com/{OWNER}/{REPO}/issues/{seeded['first']}"
    assert issue["url"] == f"http://fake-github.test{R}/issues/{seeded['first']}"
    assert [lb["name"] for lb in issue["labels"]] == ["bug", "triage"]
    assert issue["assignee"]["login"] == "hubot" and [a["login"] for a in issue["assignees"]] == ["hubot"]
    assert issue["milestone"]["title"] == "v1.0" and issue["milestone"]["open_issues"] == 1
    assert issue["comments"] == 1 and issue["state_reason"] is None
    assert issue["created_at"].endswith("Z") and issue["user"]["login"] == "jane"
    assert "pull_request" not in issue

    pr = (await gh.get(f"{R}/issues/{seeded['pr']}")).json()
    assert pr["pull_request"]["html_url"] == f"https://github.com/{OWNER}/{REPO}/pull/{seeded['pr']}"
    assert pr["html_url"].endswith(f"/pull/{seeded['pr']}")

    repo = (await gh.get(R)).json()
    assert repo["full_name"] == f"{OWNER}/{REPO}" and repo["owner"]["type"] == "Organization"
    assert repo["open_issues_count"] == 3 and repo["permissions"]["push"] is True

    me = (await gh.get("/user")).json()
    assert me["login"] == "octocat"


async def test_unknown_repo_issue_and_label_are_404(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    assert (await gh.get("/repos/nobody/nothing")).status_code == 404
    assert (await gh.get("/repos/nobody/nothing/issues/1")).status_code == 404
    assert (await gh.get(f"{R}/issues/999")).status_code == 404
    missing = await gh.get(f"{R}/labels/nope")
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"


async def test_unimplemented_route_is_a_violation(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    response = await gh.get(f"{R}/releases")
    assert response.status_code == 404
    assert fake.requests[-1].operation_id is None
    found = list(fake.violations)
    fake.violations.clear()
    assert len(found) == 1 and "no such operation" in found[0]


async def test_response_validation_catches_a_broken_object(
    fake: FakeGitHub, gh: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakegithub import objects

    real = objects.label

    def broken(*args: object) -> dict[str, object]:
        out = real(*args)  # type: ignore[arg-type]
        del out["color"]
        out["id"] = "not-an-int"
        return out

    monkeypatch.setattr(objects, "label", broken)
    assert (await gh.get(f"{R}/labels/bug")).status_code == 200
    found = list(fake.violations)
    fake.violations.clear()
    assert any("'color' is a required property" in v for v in found), found
    assert any("response 200" in v and "issues/get-label" in v for v in found)


async def test_deleted_issue_is_gone(fake: FakeGitHub, gh: httpx.AsyncClient,
                                     seeded: dict[str, int]) -> None:
    fake.delete_issue(OWNER, REPO, seeded["second"])
    response = await gh.get(f"{R}/issues/{seeded['second']}")
    assert response.status_code == 410
    assert response.json()["message"] == "This issue was deleted"
    assert (await gh.get(f"{R}/issues/{seeded['second']}/comments")).status_code == 410
    numbers = [i["number"] for i in (await gh.get(f"{R}/issues")).json()]
    assert seeded["second"] not in numbers
