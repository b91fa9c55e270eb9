"""The Forgejo fake's world: users, organisations, repositories, repository and organisation
labels, milestones, issues and pull requests (with labels, assignees, a milestone, comments and
dependencies), and scoped access tokens.

Plain dataclasses plus the permission rules the endpoints check (Forgejo v11.0.1,
`routers/api/v1/api.go`): repository labels and issue metadata need write access to issues or
pulls, organisation labels need organisation ownership; private repositories and organisations
are 404 to outsiders.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from fakegithub.clock import Clock, system_clock

# Forgejo's token scope categories and which endpoint group needs which (api.go)
SCOPE_ISSUE, SCOPE_ORG, SCOPE_REPO, SCOPE_USER = "issue", "organization", "repository", "user"
ALL_SCOPES = ("write:issue", "write:organization", "write:repository", "write:user")


AccessMode = Literal["none", "read", "write", "admin", "owner"]
MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_][A-Za-z0-9_.-]*)")


class ApiError(Exception):
    """An error answer as Forgejo's `ctx.Error` writes it: `{message, url}`."""

    def __init__(self, status: int, message: str, *, errors: list[str] | None = None) -> None:
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.errors = errors  # 404s carry `errors: []`


def not_found() -> ApiError:
    return ApiError(404, "The target couldn't be found.", errors=[])


@dataclass
class User:
    login: str
    id: int
    full_name: str = ""
    created: datetime | None = None


@dataclass
class Org:
    name: str
    id: int
    visibility: Literal["public", "limited", "private"] = "public"
    owners: set[str] = field(default_factory=set)  # case-folded logins
    members: set[str] = field(default_factory=set)  # case-folded logins (owners are members too)


@dataclass
class Label:
    id: int
    name: str
    color: str  # "#rrggbb", as Forgejo stores it (answers drop the "#")
    description: str = ""
    exclusive: bool = False
    is_archived: bool = False
    repo: tuple[str, str] | None = None  # case-folded (owner, name); None for an org label
    org: str | None = None  # case-folded org name


@dataclass
class Comment:
    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Milestone:
    id: int
    title: str
    created_at: datetime
    updated_at: datetime
    description: str = ""
    state: Literal["open", "closed"] = "open"
    closed_at: datetime | None = None


@dataclass
class Issue:
    id: int
    number: int
    title: str
    author: str
    created_at: datetime
    updated_at: datetime
    state: Literal["open", "closed"] = "open"
    label_ids: list[int] = field(default_factory=list)
    is_pull: bool = False
    body: str = ""
    assignees: list[str] = field(default_factory=list)  # logins, in assignment order
    milestone_id: int = 0  # 0: none (as Forgejo stores it)
    comments: list[Comment] = field(default_factory=list)  # type "comment" only, oldest first
    closed_at: datetime | None = None
    is_locked: bool = False
    depends_on: list[int] = field(default_factory=list)  # numbers of issues that block closing it
    mentioned: set[str] = field(default_factory=set)  # case-folded logins (issue_user.is_mentioned)


@dataclass
class Repo:
    id: int
    owner: str
    name: str
    private: bool
    created_at: datetime
    owner_is_org: bool = False
    # case-folded login -> "read", "write" or "admin" (owners and org owners need no entry)
    collaborators: dict[str, Literal["read", "write", "admin"]] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)  # by number (issues and pulls share it)
    milestones: dict[int, Milestone] = field(default_factory=dict)  # by id
    next_number: int = 1

    @property
    def key(self) -> tuple[str, str]:
        return (self.owner.casefold(), self.name.casefold())

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class Token:
    token: str
    login: str
    scopes: tuple[str, ...]  # e.g. ("write:issue", "read:organization"), or "all"

    def allows(self, category: str, write: bool) -> bool:
        if "all" in self.scopes:
            return True
        wanted = {f"write:{category}"} if write else {f"read:{category}", f"write:{category}"}
        return bool(wanted & set(self.scopes))


class State:
    """All mutable data of one fake; handlers use it under the fake's lock."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or system_clock
        self.users: dict[str, User] = {}
        self.orgs: dict[str, Org] = {}
        self.repos: dict[tuple[str, str], Repo] = {}
        self.labels: dict[int, Label] = {}  # every label, by id, in creation order
        self.tokens: dict[str, Token] = {}
        self.admins: set[str] = set()
        self._ids: dict[str, int] = {}

    def next_id(self, kind: str) -> int:
        value = self._ids.get(kind, 0) + 1
        self._ids[kind] = value
        return value

    def now(self) -> datetime:
        return self.clock().replace(microsecond=0)

    def touch(self, issue: Issue) -> datetime:
        """A change of `issue`: its `updated_at` moves, at least a second (timestamps are whole
        seconds, and a change must show)."""
        now = self.now()
        if now <= issue.updated_at:
            now = issue.updated_at + timedelta(seconds=1)
        issue.updated_at = now
        return now

    # accounts --------------------------------------------------------------------------------

    def user(self, login: str) -> User:
        key = login.casefold()
        if key not in self.users:
            self.users[key] = User(login, self.next_id("user"), created=self.now())
        return self.users[key]

    def org(self, name: str) -> Org | None:
        return self.orgs.get(name.casefold())

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get((owner.casefold(), name.casefold()))

    def find_account(self, name: str) -> User | Org | None:
        return self.users.get(name.casefold()) or self.orgs.get(name.casefold())

    # permissions (what the token's user may see and do) ----------------------------------------

    def is_admin(self, login: str) -> bool:
        return login.casefold() in self.admins

    def org_member(self, org: Org, login: str) -> bool:
        return login.casefold() in org.members | org.owners or self.is_admin(login)

    def org_owner(self, org: Org, login: str) -> bool:
        return login.casefold() in org.owners or self.is_admin(login)

    def can_see_org(self, org: Org, login: str) -> bool:
        """Public and limited organisations are visible to every signed-in user."""
        return org.visibility != "private" or self.org_member(org, login)

    def access_mode(self, repo: Repo, login: str) -> AccessMode:
        """`GetUserRepoPermission`'s access mode: site admins, the repository's owner and its
        organisation's owners have `owner`; a collaborator the mode granted; anyone else `read`
        of a repository they can see, else `none`."""
        key = login.casefold()
        if self.is_admin(login) or key == repo.owner.casefold():
            return "owner"
        org = self.org(repo.owner) if repo.owner_is_org else None
        if org is not None and self.org_owner(org, login):
            return "owner"
        granted = repo.collaborators.get(key)
        if granted is not None:
            return granted
        if repo.private or (org is not None and not self.can_see_org(org, login)):
            return "none"
        return "read"

    def access(self, repo: Repo, login: str) -> Literal["none", "read", "write"]:
        mode = self.access_mode(repo, login)
        return "write" if mode in ("write", "admin", "owner") else "read" if mode == "read" else "none"

    def assignees(self, repo: Repo) -> list[User]:
        """`GetRepoAssignees`: the accounts with write access (the owner, its organisation's
        owners, collaborators with write or admin), in name order."""
        logins = {repo.owner.casefold()} if not repo.owner_is_org else set()
        org = self.org(repo.owner) if repo.owner_is_org else None
        if org is not None:
            logins |= org.owners
        logins |= {k for k, mode in repo.collaborators.items() if mode in ("write", "admin")}
        return sorted((self.users[k] for k in logins if k in self.users), key=lambda u: u.login.casefold())

    def mention(self, repo: Repo, issue: Issue, doer: str, text: str) -> None:
        """`FindAndUpdateIssueMentions`: the accounts `@`-mentioned in a new issue's body or a new
        comment who can read the repository, never the writer; recorded once, never taken back
        (editing the text later changes nothing)."""
        for login in MENTION.findall(text):
            key = login.casefold()
            if key != doer.casefold() and key in self.users and self.access(repo, login) != "none":
                issue.mentioned.add(key)

    def can_be_assigned(self, repo: Repo, login: str) -> bool:
        return any(u.login.casefold() == login.casefold() for u in self.assignees(repo))

    # labels ----------------------------------------------------------------------------------

    def repo_labels(self, repo: Repo) -> list[Label]:
        return [lb for lb in self.labels.values() if lb.repo == repo.key]

    def org_labels(self, org: Org) -> list[Label]:
        return [lb for lb in self.labels.values() if lb.org == org.name.casefold()]

    def issue_labels(self, issue: Issue) -> list[Label]:
        return [self.labels[i] for i in issue.label_ids if i in self.labels]

    def delete_label(self, label: Label) -> None:
        """Forgejo deletes the label and strips it from every issue and pull request."""
        del self.labels[label.id]
        for repo in self.repos.values():
            for issue in repo.issues.values():
                if label.id in issue.label_ids:
                    issue.label_ids.remove(label.id)
