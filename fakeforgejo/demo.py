"""A small realistic Forgejo world for `python -m fakeforgejo --seed demo` and demos of forgejo-mcp."""

from __future__ import annotations

from fakeforgejo.fake import FakeForgejo
from fakegithub.clock import Clock

DEMO_TOKEN = "f0" * 20  # 40 hex digits, like a Forgejo access token
ORG, REPO = "acme", "web"

LABELS = [
    ("bug", "#d73a4a", "Something isn't working"),
    ("enhancement", "#a2eeef", "New feature or request"),
    ("documentation", "#0075ca", "Improvements or additions to documentation"),
    ("good first issue", "#7057ff", "Good for newcomers"),
    ("triage", "#fbca04", "Needs a maintainer to look at it"),
    ("wontfix", "#ffffff", "This will not be worked on"),
]


def demo_fake(*, clock: Clock | None = None) -> FakeForgejo:
    """The organisation `acme` with the public repository `acme/web`: 6 labels, an organisation
    label, 2 open milestones and a closed one, 8 issues (labels, assignees, milestones, comments,
    a locked one, one blocked by another) and a pull request.

    Token `f0f0…` (40 hex digits) belongs to `alice`, owner of `acme`, with every scope. `bob`
    writes to acme/web; `carol` only reads it (her issues keep title and body only, as Forgejo
    drops the rest). The state is checkpointed, so `fake.reset()` returns here.
    """
    fake = FakeForgejo(clock=clock)
    for account in ("alice", "bob", "carol"):
        fake.add_user(account)
    fake.add_org(ORG, owners=["alice"], members=["bob"])
    fake.add_repo(ORG, REPO, collaborators={"bob": "write", "carol": "read"})
    fake.add_token(DEMO_TOKEN, "alice")
    labels = {name: fake.add_label(name, color, description, repo=f"{ORG}/{REPO}")
              for name, color, description in LABELS}
    fake.add_label("security", "#ee0701", "Security-relevant", org=ORG)
    v1 = fake.add_milestone(f"{ORG}/{REPO}", "v1.0", description="First stable release")
    v11 = fake.add_milestone(f"{ORG}/{REPO}", "v1.1", description="Polish and docs")
    fake.add_milestone(f"{ORG}/{REPO}", "v0.9", state="closed")
    where = f"{ORG}/{REPO}"
    crash = fake.add_issue(where, "Crash when the config file is empty", author="carol",
                           body="Starting with an empty `web.yml` raises `KeyError: 'routes'`.",
                           labels=[labels["bug"]], assignees=["bob"], milestone=v1)
    fake.add_issue(where, "Add dark mode", author="carol", body="Follow `prefers-color-scheme`.",
                   labels=[labels["enhancement"]], milestone=v11)
    fake.add_issue(where, "Document the deploy command", author="alice", body="@bob knows the flags.",
                   labels=[labels["documentation"], labels["good first issue"]], milestone=v11)
    login = fake.add_issue(where, "Login loops on Safari", author="carol", body="SSO redirects forever.",
                           labels=[labels["bug"], labels["triage"]])
    fake.add_issue(where, "Typo in CONTRIBUTING", author="carol", labels=[labels["documentation"]],
                   state="closed")
    fake.add_issue(where, "Rewrite in Rust", author="carol", labels=[labels["wontfix"]], state="closed",
                   locked=True)
    release = fake.add_issue(where, "Release 1.0", author="alice", body="Ship it.", assignees=["alice"],
                             milestone=v1)
    fake.add_issue(where, "Slow page with 500 routes", author="bob", body="Takes 8 s to render.",
                   labels=[labels["bug"]], assignees=["alice", "bob"], milestone=v1)
    fake.add_pull_request(where, "Handle empty config files", author="bob", body="Fixes #1.",
                          labels=[labels["bug"]])
    fake.add_dependency(where, release.number, depends_on=crash.number)
    fake.add_comment(where, crash.number, "Same here on 0.9.2.", author="alice")
    fake.add_comment(where, crash.number, "Confirmed, fix coming.", author="bob")
    fake.add_comment(where, login.number, "Safari 17 only? @carol", author="bob")
    fake.checkpoint()
    return fake
