"""A stateful, contract-faithful fake of GitHub's REST API (issues, comments, labels, milestones,
search, locks, rate limits, faults), validated against the pinned OpenAPI description."""

from fakegithub.clock import FakeClock, offset_clock, system_clock
from fakegithub.demo import DEMO_TOKEN, demo_fake
from fakegithub.fake import FakeGitHub, RecordedRequest, TimedRequest
from fakegithub.faults import Fault, Faults, Match
from fakegithub.state import Comment, Issue, Label, Milestone, RateBucket, Repo, Token, User

__all__ = [
    "DEMO_TOKEN",
    "Comment",
    "FakeClock",
    "FakeGitHub",
    "Fault",
    "Faults",
    "Issue",
    "Label",
    "Match",
    "Milestone",
    "RateBucket",
    "RecordedRequest",
    "Repo",
    "TimedRequest",
    "Token",
    "User",
    "demo_fake",
    "offset_clock",
    "system_clock",
]
