"""A stateful, contract-faithful fake of Forgejo's REST API (repository and organisation labels,
issues and pull requests with their labels, assignees, milestones and comments, organisations,
scoped tokens, private repositories, faults), validated against the pinned Forgejo description; it shares its machinery (request
pipeline, faults, contract checks, transports, serving) with `fakegithub`."""

from fakeforgejo.fake import OPERATIONS, FakeForgejo
from fakeforgejo.state import ALL_SCOPES, Comment, Issue, Label, Milestone, Org, Repo, Token, User

__all__ = ["ALL_SCOPES", "OPERATIONS", "Comment", "FakeForgejo", "Issue", "Label", "Milestone", "Org", "Repo",
           "Token", "User"]
