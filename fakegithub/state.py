"""The fake's world: users, tokens, repositories, labels, milestones, issues, pull requests, comments.

Plain dataclasses plus lookups and timestamp/id allocation. HTTP semantics live in `handlers`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal

from fakegithub.clock import Clock, due_on, parse_time, system_clock
from fakegithub.git_state import RepoGit

DOCS = "https://docs.github.com/rest"
ALL = "*"


class ApiError(Exception):
    """An HTTP error response GitHub would send: status, JSON body, extra headers."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        docs: str = DOCS,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
        with_status: bool = True,
    ) -> None:
        super().__init__(f"{status} {message}")
        self.status = status
        self.body: dict[str, Any] = {"message": message, "documentation_url": docs}
        if errors is not None:
            self.body["errors"] = errors
        if with_status:
            self.body["status"] = str(status)
        self.headers = dict(headers or {})


def not_found(docs: str = DOCS) -> ApiError:
    return ApiError(404, "Not Found", docs=docs)


def invalid(resource: str, field_name: str, value: Any, docs: str = DOCS, code: str = "invalid") -> ApiError:
    error: dict[str, Any] = {"resource": resource, "field": field_name, "code": code}
    if value is not None:  # the spec's `value` oneOf matches null in every branch: omit it
        error["value"] = value
    return ApiError(422, "Validation Failed", docs=docs, errors=[error])


@dataclass
class User:
    login: str
    id: int
    type: Literal["User", "Organization", "Bot"] = "User"
    name: str | None = None
    created_at: datetime | None = None


@dataclass
class RateBucket:
    limit: int
    remaining: int
    reset: datetime

    @property
    def used(self) -> int:
        return max(0, self.limit - self.remaining)


@dataclass
class Token:
    token: str
    login: str
    scopes: tuple[str, ...]
    buckets: dict[str, RateBucket] = field(default_factory=dict)
    installation: bool = False  # a GitHub App installation token: acts as `<app>[bot]`


@dataclass
class Label:
    id: int
    name: str
    color: str
    description: str | None
    default: bool = False


@dataclass
class Milestone:
    id: int
    number: int
    title: str
    description: str | None
    state: Literal["open", "closed"]
    creator: str
    created_at: datetime
    updated_at: datetime
    closed_at: datetime | None = None
    due_on: datetime | None = None


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    author: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Issue:
    """An issue or (with `is_pull_request`) a pull request; they share the number space."""

    id: int
    number: int
    title: str
    body: str | None
    author: str
    created_at: datetime
    updated_at: datetime
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    label_ids: list[int] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    milestone: int | None = None
    locked: bool = False
    lock_reason: str | None = None
    closed_at: datetime | None = None
    closed_by: str | None = None
    comments: list[Comment] = field(default_factory=list)
    is_pull_request: bool = False
    draft: bool = False
    merged_at: datetime | None = None
    deleted: bool = False


def label_key(name: str) -> str:
    """When two label names are the same label: everywhere the fake compares them (lookup by name,
    uniqueness, the listing's `labels` filter, search's `label:`), one rule.

    GitHub compares label names case-insensitively; beyond ASCII its rule is undocumented. The fake
    uses Unicode full case folding (`straße` is the label `STRASSE`), the widest plausible reading,
    so tests exercise the server's path for names it does not fold itself (ghmcp_runtime/engine/catalog.py
    asks GitHub's lookup about those)."""
    return name.casefold()


@dataclass
class Repo:
    id: int
    owner: str
    name: str
    private: bool
    created_at: datetime
    updated_at: datetime
    description: str | None = None
    collaborators: set[str] = field(default_factory=set)
    read_only: set[str] = field(default_factory=set)  # case-folded collaborators with read access
    labels: dict[int, Label] = field(default_factory=dict)  # by id, in creation order
    milestones: dict[int, Milestone] = field(default_factory=dict)  # by number
    issues: dict[int, Issue] = field(default_factory=dict)  # by number
    next_number: int = 1
    next_milestone: int = 1

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def find_label(self, name: str) -> Label | None:
        folded = label_key(name)
        return next((lb for lb in self.labels.values() if label_key(lb.name) == folded), None)

    def label_names(self, issue: Issue) -> list[str]:
        return [self.labels[i].name for i in issue.label_ids if i in self.labels]

    def live_issues(self) -> list[Issue]:
        return [i for i in self.issues.values() if not i.deleted]

    def find_milestone_by_title(self, title: str) -> Milestone | None:
        folded = title.casefold()
        return next((m for m in self.milestones.values() if m.title.casefold() == folded), None)

    def milestone_issues(self, number: int) -> list[Issue]:
        """Live issues and pull requests carrying the milestone (GitHub counts both)."""
        return [i for i in self.live_issues() if i.milestone == number]


class State:
    """All mutable data of one fake; every access from handlers happens under the fake's lock."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or system_clock
        self.users: dict[str, User] = {}  # by login, case-folded
        self.tokens: dict[str, Token] = {}
        self.repos: dict[tuple[str, str], Repo] = {}  # by (owner, name), case-folded
        self.global_collaborators: set[str] = set()  # case-folded logins
        # the sub-issue tree and blocked-by dependencies, by issue id (fakegithub/sub_issue_handlers.py)
        self.sub_issues: dict[int, list[int]] = {}  # parent id -> its sub-issues' ids, in order
        self.parent_of: dict[int, int] = {}  # sub-issue id -> parent id
        self.blocked_by: dict[int, list[int]] = {}  # issue id -> ids of the issues blocking it
        self.git: dict[int, RepoGit] = {}  # repository id -> its git data (fakegithub/git_state.py)
        self._ids: dict[str, int] = {}
        self._last_stamp: datetime | None = None

    # ids and time ------------------------------------------------------------------------

    def next_id(self, kind: str) -> int:
        base = {"user": 1, "repo": 1_296_269, "issue": 1_000_000, "comment": 2_000_000,
                "label": 208_045_946, "milestone": 1_002_604}.get(kind, 1)
        value = self._ids.get(kind, base - 1) + 1
        self._ids[kind] = value
        return value

    def now(self) -> datetime:
        return self.clock().replace(microsecond=0)

    def shown_now(self) -> datetime:
        """The time answers carry in `Date`: the clock, or the last stamp if stamps ran ahead of
        it (many mutations in one second), so no answer predates what it shows was made."""
        now = self.now()
        return max(now, self._last_stamp) if self._last_stamp is not None else now

    def stamp(self) -> datetime:
        """A mutation timestamp: the clock (whole seconds), strictly after the previous stamp."""
        when = self.now()
        if self._last_stamp is not None and when <= self._last_stamp:
            when = self._last_stamp + timedelta(seconds=1)
        self._last_stamp = when
        return when

    # users and permissions -----------------------------------------------------------------

    def user(self, login: str, *, kind: Literal["User", "Organization", "Bot"] = "User") -> User:
        """The user with this login, created on first mention."""
        key = login.casefold()
        if key not in self.users:
            self.users[key] = User(login, self.next_id("user"), kind, created_at=self.now())
        return self.users[key]

    def find_user(self, login: str) -> User | None:
        return self.users.get(login.casefold())

    def is_collaborator(self, repo: Repo, login: str) -> bool:
        key = login.casefold()
        return (
            key == repo.owner.casefold()
            or key in self.global_collaborators
            or key in {c.casefold() for c in repo.collaborators}
        )

    def can_push(self, repo: Repo, login: str) -> bool:
        return self.is_collaborator(repo, login) and login.casefold() not in repo.read_only

    def permission(self, repo: Repo, login: str) -> str:
        """GitHub's legacy base role: admin (owner), write, read (read-only collaborators, and
        anyone on a public repository), or none."""
        if login.casefold() == repo.owner.casefold():
            return "admin"
        if self.can_push(repo, login):
            return "write"
        return "read" if self.is_collaborator(repo, login) or not repo.private else "none"

    def can_see(self, repo: Repo, login: str | None) -> bool:
        return not repo.private or (login is not None and self.is_collaborator(repo, login))

    def grant(self, login: str, collaborator_on: Iterable[str] | str) -> None:
        """Make `login` a collaborator: `"*"` = on every repository (also future ones)."""
        if isinstance(collaborator_on, str):
            if collaborator_on == ALL:
                self.global_collaborators.add(login.casefold())
                return
            collaborator_on = [collaborator_on]
        for full_name in collaborator_on:
            owner, _, name = full_name.partition("/")
            self.repo(owner, name).collaborators.add(login)

    # repositories ------------------------------------------------------------------------------

    def repo(self, owner: str, name: str, *, private: bool = False,
             owner_type: Literal["User", "Organization"] = "User") -> Repo:
        """The repository, created (with its owner) on first mention."""
        key = (owner.casefold(), name.casefold())
        if key not in self.repos:
            self.user(owner, kind=owner_type)
            now = self.now()
            self.repos[key] = Repo(self.next_id("repo"), owner, name, private, now, now)
        return self.repos[key]

    def find_repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get((owner.casefold(), name.casefold()))

    def label(self, repo: Repo, name: str, color: str = "ededed", description: str | None = None) -> Label:
        """The label with this name (case-insensitive), created if missing (like GitHub does)."""
        found = repo.find_label(name)
        if found is None:
            found = Label(self.next_id("label"), name, color.lstrip("#").lower(), description)
            repo.labels[found.id] = found
        return found

    def resolve_time(self, value: str | datetime | None) -> datetime | None:
        return None if value is None else parse_time(value).replace(microsecond=0)

    def milestone(self, repo: Repo, title: str, creator: str, *, description: str | None = None,
                  state: Literal["open", "closed"] = "open",
                  due: str | date | datetime | None = None) -> Milestone:
        """A new milestone with the next number (numbers of deleted milestones are not reused)."""
        now = self.stamp()
        number = repo.next_milestone
        repo.next_milestone += 1
        ms = Milestone(
            id=self.next_id("milestone"), number=number, title=title, description=description,
            state=state, creator=self.user(creator).login, created_at=now, updated_at=now,
            closed_at=now if state == "closed" else None,
            due_on=None if due is None else due_on(due),
        )
        repo.milestones[number] = ms
        return ms
