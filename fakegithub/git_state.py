"""A repository's git data in the fake: blobs, commits (whole trees, flat paths), branches, branch
protection, commit statuses and check runs, and the pull requests built on them. Plain data plus
the few git algorithms GitHub's answers need (merge base, changed paths, three-way mergeability).

Blob SHAs are git's own (`sha1("blob <size>\\0" + bytes)`), so a file's `sha` is what `git
hash-object` prints; commit and tree SHAs are sha1 digests of the fake's own serialization.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

MergeMethod = Literal["merge", "squash", "rebase"]


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def tree_sha(tree: dict[str, str]) -> str:
    text = "\n".join(f"{path}\0{sha}" for path, sha in sorted(tree.items()))
    return hashlib.sha1(b"tree\0" + text.encode(), usedforsecurity=False).hexdigest()


@dataclass
class Commit:
    sha: str
    tree: dict[str, str]  # every file's path -> its blob sha
    parents: list[str]
    message: str
    author: str  # login
    date: datetime


@dataclass
class Protection:
    """A protected branch's rules the merge endpoint enforces."""

    required_checks: list[str] = field(default_factory=list)  # contexts / check-run names
    required_reviews: int = 0  # approving reviews by users with push access


@dataclass
class Status:
    id: int
    context: str
    state: Literal["error", "failure", "pending", "success"]
    description: str | None
    created_at: datetime


@dataclass
class CheckRun:
    id: int
    name: str
    status: Literal["queued", "in_progress", "completed"]
    conclusion: str | None
    started_at: datetime
    completed_at: datetime | None


@dataclass
class Review:
    id: int
    author: str
    state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "PENDING", "DISMISSED"]
    body: str
    commit_id: str
    submitted_at: datetime | None


@dataclass
class ReviewComment:
    id: int
    review_id: int | None
    author: str
    path: str
    line: int | None
    side: str
    body: str
    commit_id: str
    diff_hunk: str
    created_at: datetime


@dataclass
class Pull:
    """What a pull request has beyond its issue: branches, reviews, merge state."""

    number: int
    head: str  # branch name in the same repository
    base: str
    head_sha: str  # the head branch's tip; frozen once merged or closed with the branch gone
    maintainer_can_modify: bool = False
    requested_users: list[str] = field(default_factory=list)
    requested_teams: list[str] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    review_comments: list[ReviewComment] = field(default_factory=list)
    merge_commit_sha: str | None = None
    merged_by: str | None = None


@dataclass
class RepoGit:
    default_branch: str = "main"
    blobs: dict[str, bytes] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)  # name -> tip sha
    protection: dict[str, Protection] = field(default_factory=dict)  # by branch name
    statuses: dict[str, list[Status]] = field(default_factory=dict)  # by commit sha
    check_runs: dict[str, list[CheckRun]] = field(default_factory=dict)  # by commit sha
    pulls: dict[int, Pull] = field(default_factory=dict)  # by pull request number
    merge_methods: set[str] = field(default_factory=lambda: {"merge", "squash", "rebase"})
    teams: set[str] = field(default_factory=set)  # team slugs that may be requested as reviewers
    serial: int = 0  # makes every commit sha unique

    # objects ------------------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        sha = blob_sha(data)
        self.blobs[sha] = data
        return sha

    def commit(self, tree: dict[str, str], parents: list[str], message: str, author: str,
               date: datetime) -> Commit:
        self.serial += 1
        text = f"{tree_sha(tree)}\n{' '.join(parents)}\n{author}\n{date.isoformat()}\n{self.serial}\n{message}"
        sha = hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()
        made = Commit(sha, dict(tree), list(parents), message, author, date)
        self.commits[sha] = made
        return made

    def resolve(self, ref: str) -> Commit | None:
        """A branch name (`refs/heads/x`, `heads/x` too), `HEAD` (the default branch) or a commit
        SHA (a unique prefix of at least 7 characters), as GitHub resolves a `{ref}`."""
        name = ref.removeprefix("refs/").removeprefix("heads/")
        if ref == "HEAD":
            name = self.default_branch
        if name in self.branches:
            return self.commits[self.branches[name]]
        if len(ref) >= 7 and all(c in "0123456789abcdef" for c in ref.lower()):
            found = [c for sha, c in self.commits.items() if sha.startswith(ref.lower())]
            if len(found) == 1:
                return found[0]
        return None

    # history --------------------------------------------------------------------------------

    def ancestors(self, sha: str) -> list[str]:
        """`sha` and every commit it descends from, newest first (breadth first by date)."""
        seen: list[str] = []
        pending = [sha]
        while pending:
            pending.sort(key=lambda s: self.commits[s].date, reverse=True)
            current = pending.pop(0)
            if current in seen:
                continue
            seen.append(current)
            pending.extend(p for p in self.commits[current].parents if p not in seen)
        return seen

    def merge_base(self, a: str, b: str) -> str | None:
        mine = set(self.ancestors(a))
        return next((sha for sha in self.ancestors(b) if sha in mine), None)

    def changes(self, old: str | None, new: str) -> dict[str, str | None]:
        """Paths whose blob differs from `old` to `new` (None: deleted in `new`)."""
        before = self.commits[old].tree if old else {}
        after = self.commits[new].tree
        return {path: after.get(path) for path in before.keys() | after.keys()
                if before.get(path) != after.get(path)}

    def conflicts(self, head: str, base: str) -> list[str]:
        """Paths both sides changed differently since their merge base."""
        root = self.merge_base(head, base)
        ours, theirs = self.changes(root, head), self.changes(root, base)
        return sorted(p for p in ours.keys() & theirs.keys() if ours[p] != theirs[p])

    def behind(self, head: str, base: str) -> bool:
        """The base has commits the head does not."""
        return base not in self.ancestors(head)

    def merged_tree(self, head: str, base: str) -> dict[str, str]:
        """The base's tree with the head's changes since the merge base applied (no conflicts)."""
        tree = dict(self.commits[base].tree)
        for path, sha in self.changes(self.merge_base(head, base), head).items():
            if sha is None:
                tree.pop(path, None)
            else:
                tree[path] = sha
        return tree
