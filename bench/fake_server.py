"""The fake GitHub the benchmarks run against: `fakegithub` seeded with a deterministic repository
and served on loopback in its own process (`python bench/fake_server.py --port P`).

Two bench-only changes, both outside the code path being measured:

* openapi-core request/response validation is switched off (`--validate` keeps it). It costs
  ~50 ms per request on this machine, which would swamp sub-millisecond server overheads and cap
  throughput at ~20 requests/s for every server alike. The tests keep it on.
* the bench token's rate-limit budgets are effectively unlimited, so thousands of calls never hit
  the fake's 403 rate limit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from fakegithub import FakeClock, FakeGitHub  # noqa: E402
from fakegithub.serve import serve_forever  # noqa: E402

TOKEN = "ghp_benchtoken00000000000000000000000000001"
OWNER, REPO = "octo-org", "roadmap"
ISSUE = 1  # the issue every per-call benchmark reads (6 comments, a realistic body)
N_ISSUES = 40
LABELS = ["bug", "enhancement", "documentation", "good first issue", "help wanted", "triage",
          "question", "wontfix"]
PEOPLE = ["octocat", "monalisa", "hubot", "jane-doe"]
PARAGRAPH = (
    "When the sync job runs against a board with more than a few hundred items, the worker "
    "pauses for several seconds while it recomputes the layout. Steps to reproduce: create a "
    "board, import the sample CSV, run `roadmap sync --all`, and watch the progress bar stall. "
    "Expected: steady progress. Actual: a long pause, then everything at once.\n\n"
)


class _NoValidation:
    """Stands in for `fake.contract` after the router is built: every request/response passes."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def request_errors(self, *args: Any, **kwargs: Any) -> list[str]:
        return []

    def response_errors(self, *args: Any, **kwargs: Any) -> list[str]:
        return []


def bench_fake(*, validate: bool = False) -> FakeGitHub:
    """`octo-org/roadmap`: 8 labels, a milestone, 40 open issues (no pull requests, so a listing
    page and a tool page hold the same 30 issues), 6 comments on issue #1."""
    fake = FakeGitHub(clock=FakeClock("2024-03-01T12:00:00Z"))
    if not validate:
        fake.contract = _NoValidation(fake.contract)  # type: ignore[assignment]
    fake.add_repo(OWNER, REPO, description="Public roadmap and issue tracker",
                  owner_type="Organization")
    fake.add_token(TOKEN, "octocat", ("repo",), collaborator_on=f"{OWNER}/{REPO}")
    for person in PEOPLE[1:]:
        fake.add_user(person, collaborator_on=f"{OWNER}/{REPO}")
    for name in LABELS:
        fake.add_label(OWNER, REPO, name, description=f"{name.capitalize()} items")
    milestone = fake.add_milestone(OWNER, REPO, "v1.0", description="First stable release")
    for i in range(N_ISSUES):
        labels = [LABELS[i % len(LABELS)], LABELS[(i * 3 + 1) % len(LABELS)]]
        fake.add_issue(
            OWNER, REPO, f"Board sync stalls on large boards (case {i + 1})",
            body=PARAGRAPH * (1 + i % 3), labels=sorted(set(labels)),
            assignees=[PEOPLE[i % len(PEOPLE)]], milestone=milestone if i % 2 else None,
            author=PEOPLE[(i + 1) % len(PEOPLE)],
        )
    for j in range(6):
        fake.add_comment(OWNER, REPO, ISSUE, f"Comment {j + 1}: reproduced on build {100 + j}.",
                         author=PEOPLE[j % len(PEOPLE)])
    for resource in ("core", "search"):
        fake.set_rate_limit(TOKEN, limit=10**9, remaining=10**9, resource=resource,  # type: ignore[arg-type]
                            reset="2099-01-01T00:00:00Z")
    return fake


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--validate", action="store_true", help="keep openapi-core validation on")
    parser.add_argument("--latency", type=float, default=0.0,
                        help="seconds every API answer waits (POST /_fake/latency changes it)")
    args = parser.parse_args()
    fake = bench_fake(validate=args.validate)
    fake.latency = args.latency
    fake.requests = _Discard()  # type: ignore[assignment]  # a long run must not grow the fake
    serve_forever(fake.app, host="127.0.0.1", port=args.port)
    return 0


class _Discard(list):  # type: ignore[type-arg]
    """A request log that keeps nothing (the fake appends every request it sees)."""

    def append(self, item: Any) -> None:
        pass


if __name__ == "__main__":
    sys.exit(main())
