"""Shared constants and helpers for the fake GitHub's tests (a unique module name, unlike conftest)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fakegithub import FakeGitHub  # noqa: E402

OWNER, REPO = "octo-org", "roadmap"
TOKEN = "ghp_testtoken"  # octocat, scope repo, collaborator on octo-org/roadmap
OUTSIDER = "ghp_outsider"  # jane, scope repo, not a collaborator
NO_SCOPE = "ghp_noscope"  # octocat, scope read:user only
START = "2024-03-01T12:00:00Z"

def seed(fake: FakeGitHub) -> dict[str, int]:
    fake.add_repo(OWNER, REPO, owner_type="Organization")
    fake.add_token(TOKEN, "octocat", ("repo",), collaborator_on=f"{OWNER}/{REPO}")
    fake.add_token(OUTSIDER, "jane", ("repo",), collaborator_on=())
    fake.add_token(NO_SCOPE, "octocat", ("read:user",), collaborator_on=f"{OWNER}/{REPO}")
    fake.add_user("hubot", collaborator_on=[f"{OWNER}/{REPO}"])
    for name in ("bug", "enhancement", "good first issue", "triage"):
        fake.add_label(OWNER, REPO, name)
    v1 = fake.add_milestone(OWNER, REPO, "v1.0", due_on="2024-06-01T00:00:00Z")
    first = fake.add_issue(OWNER, REPO, "Crash on empty config", "Steps: run with {}",
                           labels=["bug", "triage"], assignees=["hubot"], milestone=v1,
                           author="jane")
    second = fake.add_issue(OWNER, REPO, "Dark mode", "Please add dark mode",
                            labels=["enhancement"], author="hubot")
    closed = fake.add_issue(OWNER, REPO, "Old bug", "fixed long ago", labels=["bug"],
                            state="closed", author="hubot")
    pr = fake.add_pull_request(OWNER, REPO, "Fix crash", "fixes #1", labels=["bug"], author="hubot")
    fake.add_comment(OWNER, REPO, first, "me too", author="hubot")
    return {"first": first, "second": second, "closed": closed, "pr": pr, "milestone": v1}


def take_violations(fake: FakeGitHub) -> list[str]:
    """Return and clear the recorded violations (for tests that provoke them on purpose)."""
    with fake.lock:
        found = list(fake.violations)
        fake.violations.clear()
    return found
