"""A small realistic repository for `make demo` and `python -m fakegithub --seed demo`."""

from __future__ import annotations

from datetime import timedelta

from fakegithub.clock import Clock, iso
from fakegithub.fake import FakeGitHub

DEMO_TOKEN = "ghp_demo"
OWNER, REPO = "octo-org", "roadmap"

LABELS = [
    ("bug", "d73a4a", "Something isn't working"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("triage", "fbca04", "Needs a maintainer to look at it"),
    ("question", "d876e3", "Further information is requested"),
    ("wontfix", "ffffff", "This will not be worked on"),
]


def demo_fake(*, clock: Clock | None = None) -> FakeGitHub:
    """`octo-org/roadmap` with 8 labels, 2 milestones, 12 issues, 2 pull requests and comments.

    Token `ghp_demo` belongs to `octocat` (scope `repo`, collaborator). `monalisa` and `hubot` are
    collaborators; `jane-doe` is an outside contributor. The state is checkpointed, so
    `fake.reset()` / `POST /_fake/reset` returns here.
    """
    fake = FakeGitHub(clock=clock)
    fake.add_repo(OWNER, REPO, description="Public roadmap and issue tracker",
                  owner_type="Organization")
    fake.add_token(DEMO_TOKEN, "octocat", ("repo", "read:org"), collaborator_on=[f"{OWNER}/{REPO}"])
    fake.add_user("monalisa", name="Mona Lisa Octocat", collaborator_on=[f"{OWNER}/{REPO}"])
    fake.add_user("hubot", name="Hubot", collaborator_on=[f"{OWNER}/{REPO}"])
    fake.add_user("jane-doe", name="Jane Doe", collaborator_on=())
    for name, color, description in LABELS:
        fake.add_label(OWNER, REPO, name, color, description, default=name in ("bug", "enhancement"))

    start = fake.state.now() - timedelta(days=40)

    def day(n: float) -> str:
        return iso(start + timedelta(days=n))

    v1 = fake.add_milestone(OWNER, REPO, "v1.0", description="First stable release",
                            due_on=day(50), creator="octocat")
    v11 = fake.add_milestone(OWNER, REPO, "v1.1", description="Polish and docs",
                             due_on=day(80), creator="monalisa")

    issues = [
        ("Crash when the config file is empty", "Starting with an empty `roadmap.yml` raises "
         "`KeyError: 'projects'`.\n\nSteps: create an empty file, run `roadmap sync`.",
         ["bug"], ["monalisa"], v1, "jane-doe", "open"),
        ("Add dark mode to the web view", "The board is hard to read at night. A dark theme "
         "following `prefers-color-scheme` would help.", ["enhancement"], [], v11, "jane-doe", "open"),
        ("Document the sync command", "The README does not mention `roadmap sync` flags.",
         ["documentation", "good first issue"], [], v11, "octocat", "open"),
        ("Export the roadmap as CSV", "Product wants a CSV export of all items with their status.",
         ["enhancement", "help wanted"], ["hubot"], v1, "monalisa", "open"),
        ("Login redirects loop on Safari", "After SSO, Safari keeps redirecting between `/login` and "
         "`/callback`.", ["bug", "triage"], [], None, "jane-doe", "open"),
        ("Typo in the contributing guide", "\"recieve\" should be \"receive\".",
         ["documentation", "good first issue"], [], None, "jane-doe", "closed"),
        ("Timeline view shows wrong quarter", "Items due on March 31 appear in Q2.",
         ["bug"], ["octocat"], v1, "monalisa", "closed"),
        ("How do I archive a project?", "Is there a way to hide finished projects?",
         ["question"], [], None, "jane-doe", "open"),
        ("Support multiple boards", "Teams want one board per product line.",
         ["enhancement", "triage"], [], None, "hubot", "open"),
        ("Rewrite everything in Rust", "It would be faster.", ["wontfix"], [], None, "jane-doe",
         "closed"),
        ("Slow load with 500+ items", "The board takes 8 s to render with 600 items.",
         ["bug", "help wanted"], ["monalisa", "octocat"], v1, "octocat", "open"),
        ("Keyboard shortcuts for navigation", None, ["enhancement", "good first issue"], [], v11,
         "monalisa", "open"),
    ]
    numbers: list[int] = []
    for index, (title, body, labels, assignees, milestone, author, state) in enumerate(issues):
        created = day(index * 2.5)
        number = fake.add_issue(
            OWNER, REPO, title, body, labels=labels, assignees=assignees, milestone=milestone,
            author=author, state=state,  # type: ignore[arg-type]
            state_reason="not_planned" if "wontfix" in labels else None,
            created_at=created, updated_at=created,
            closed_at=day(index * 2.5 + 3) if state == "closed" else None,
        )
        numbers.append(number)

    pr1 = fake.add_pull_request(OWNER, REPO, "Handle empty config files", "Fixes #1.",
                                labels=["bug"], assignees=["monalisa"], milestone=v1,
                                author="monalisa", created_at=day(31), updated_at=day(31))
    pr2 = fake.add_pull_request(OWNER, REPO, "Fix typo in CONTRIBUTING.md", "Fixes #6.",
                                labels=["documentation"], author="jane-doe", merged=True,
                                created_at=day(14), updated_at=day(15), closed_at=day(15))

    comments = [
        (numbers[0], "jane-doe", "Same here on 0.9.2.", 1),
        (numbers[0], "monalisa", "Confirmed, working on a fix in #13.", 2),
        (numbers[1], "octocat", "Would love this. Let's target v1.1.", 1),
        (numbers[4], "hubot", "Could not reproduce on Chrome; Safari 17 only?", 1),
        (numbers[4], "jane-doe", "Yes, Safari 17.2 on macOS 14.", 2),
        (numbers[6], "monalisa", "Fixed by the timezone change.", 4),
        (numbers[7], "octocat", "Not yet. Tracking in #9.", 1),
        (numbers[10], "octocat", "Profiling shows the layout pass dominates.", 1),
        (pr1, "octocat", "LGTM once CI is green.", 1),
        (pr2, "monalisa", "Thanks!", 0.5),
    ]
    for number, author, text, after in comments:
        item = fake.get_issue(OWNER, REPO, number)
        fake.add_comment(OWNER, REPO, number, text, author=author,
                         created_at=iso(item.created_at + timedelta(days=after)))
    fake.checkpoint()
    return fake
