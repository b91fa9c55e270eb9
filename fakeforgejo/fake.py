"""`FakeForgejo`: seed helpers and queries over the shared fake machinery (`fakegithub.core`)."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import httpx

from fakeforgejo.pipeline import API_PREFIX, Pipeline
from fakeforgejo.state import (
    ALL_SCOPES,
    Comment,
    Issue,
    Label,
    Milestone,
    Org,
    Repo,
    State,
    Token,
    User,
)
from fakegithub.clock import Clock
from fakegithub.core import FakeForge
from fakegithub.routing import Router
from fakegithub.validation import Contract

SPEC_HOST = "https://forgejo.test"

# Every operation the fake implements, in the description's own ids.
OPERATIONS: tuple[str, ...] = (
    "userGetCurrent", "repoGet", "orgGet", "orgListRepos",
    "issueListLabels", "issueGetLabel", "issueCreateLabel", "issueEditLabel", "issueDeleteLabel",
    "orgListLabels", "orgGetLabel", "orgCreateLabel", "orgEditLabel", "orgDeleteLabel",
    "issueListIssues", "issueSearchIssues", "repoGetRepoPermissions",
    "issueGetIssue", "issueCreateIssue", "issueEditIssue", "issueAddLabel", "issueRemoveLabel",
    "issueGetComments", "issueCreateComment", "issueGetMilestonesList", "issueGetMilestone",
    "repoGetAssignees", "userGet",
)

_lock = threading.Lock()
_contract: Contract | None = None


def contract() -> Contract:
    """The process-wide contract: the pinned Forgejo description with the spec patches of every
    Forgejo override file, trimmed to the fake's operations, served at SPEC_HOST/api/v1."""
    global _contract
    with _lock:
        if _contract is None:
            from generator.api import forge_spec_document

            document = forge_spec_document("forgejo")
            document["servers"] = [{"url": SPEC_HOST + API_PREFIX}]
            _contract = Contract(document, OPERATIONS, host=SPEC_HOST,
                                 docs="https://forgejo.org/docs/latest/user/api-usage/")
        return _contract


class FakeForgejo(FakeForge):
    """A stateful Forgejo REST fake whose requests and responses are checked against the pinned
    Forgejo description. Seed with `add_*`, drive over `asgi_transport()` (base URL
    `http://forgejo.test/api/v1`) or `with serve() as base_url:` (append `/api/v1`)."""

    state: State

    def __init__(self, *, clock: Clock | None = None, spec: Contract | None = None) -> None:
        checked = spec or contract()
        super().__init__(state=State(clock), contract=checked,
                         router=Router(checked.operations.values(), prefix=API_PREFIX),
                         pipeline=Pipeline)

    def fresh_state(self, clock: Clock) -> State:
        return State(clock)

    # seeding ---------------------------------------------------------------------------------

    def add_user(self, login: str, *, full_name: str = "", admin: bool = False) -> User:
        with self.lock:
            user = self.state.user(login)
            user.full_name = full_name or user.full_name
            if admin:
                self.state.admins.add(login.casefold())
            return user

    def add_org(self, name: str, *, visibility: Literal["public", "limited", "private"] = "public",
                owners: Iterable[str] = (), members: Iterable[str] = ()) -> Org:
        with self.lock:
            key = name.casefold()
            if key in self.state.orgs or key in self.state.users:
                raise ValueError(f"account {name!r} already exists")
            org = self.state.orgs[key] = Org(name, 1000 + self.state.next_id("org"), visibility)
            for login in owners:
                self.state.user(login)
                org.owners.add(login.casefold())
            for login in members:
                self.state.user(login)
                org.members.add(login.casefold())
            return org

    def add_repo(self, owner: str, name: str, *, private: bool = False,
                 collaborators: dict[str, Literal["read", "write", "admin"]] | None = None) -> Repo:
        """A repository of a user (created on first mention) or of an existing organisation."""
        with self.lock:
            is_org = self.state.org(owner) is not None
            if not is_org:
                self.state.user(owner)
            if self.state.repo(owner, name) is not None:
                raise ValueError(f"repository {owner}/{name} already exists")
            repo = Repo(self.state.next_id("repo"), owner, name, private, self.state.now(),
                        owner_is_org=is_org,
                        collaborators={k.casefold(): v for k, v in (collaborators or {}).items()})
            self.state.repos[repo.key] = repo
            return repo

    def add_token(self, token: str, login: str, scopes: Sequence[str] = ALL_SCOPES) -> Token:
        with self.lock:
            self.state.user(login)
            record = self.state.tokens[token] = Token(token, self.state.user(login).login, tuple(scopes))
            return record

    def add_label(self, name: str, color: str = "#ededed", description: str = "", *,
                  repo: str | None = None, org: str | None = None, archived: bool = False,
                  exclusive: bool = False) -> Label:
        """A label of `repo` ("owner/name") or of `org` (names need not be unique, as in Forgejo)."""
        from fakeforgejo.handlers import normalize_color

        with self.lock:
            owner: dict[str, Any] = {}
            if repo is not None:
                found = self.state.repo(*repo.split("/", 1))
                if found is None:
                    raise KeyError(f"no repository {repo}")
                owner["repo"] = found.key
            elif org is not None:
                if self.state.org(org) is None:
                    raise KeyError(f"no organisation {org}")
                owner["org"] = org.casefold()
            else:
                raise ValueError("a label belongs to a repo or an org")
            label = Label(self.state.next_id("label"), name, normalize_color(color), description,
                          exclusive, archived, **owner)
            self.state.labels[label.id] = label
            return label

    def add_issue(self, repo: str, title: str, *, labels: Iterable[Label] = (), pull: bool = False,
                  state: Literal["open", "closed"] = "open", author: str | None = None,
                  body: str = "", assignees: Iterable[str] = (), milestone: Milestone | None = None,
                  locked: bool = False) -> Issue:
        with self.lock:
            found = self._repo(repo)
            now = self.state.now()
            issue = Issue(self.state.next_id("issue"), found.next_number, title,
                          self.state.user(author or found.owner).login, now, now, state,
                          [lb.id for lb in labels], pull, body,
                          assignees=[self.state.user(a).login for a in assignees],
                          milestone_id=milestone.id if milestone else 0,
                          closed_at=now if state == "closed" else None, is_locked=locked)
            found.next_number += 1
            found.issues[issue.number] = issue
            self.state.mention(found, issue, issue.author, body)
            return issue

    def add_milestone(self, repo: str, title: str, *, description: str = "",
                      state: Literal["open", "closed"] = "open") -> Milestone:
        """A milestone of `repo`; ids are instance-wide, as in Forgejo."""
        with self.lock:
            found = self._repo(repo)
            now = self.state.now()
            made = Milestone(self.state.next_id("milestone"), title, now, now, description, state,
                             now if state == "closed" else None)
            found.milestones[made.id] = made
            return made

    def add_comment(self, repo: str, number: int, body: str, *, author: str) -> Comment:
        with self.lock:
            issue = self._repo(repo).issues[number]
            now = self.state.touch(issue)
            made = Comment(self.state.next_id("comment"), self.state.user(author).login, body, now, now)
            issue.comments.append(made)
            self.state.mention(self._repo(repo), issue, made.author, body)
            return made

    def add_dependency(self, repo: str, number: int, *, depends_on: int) -> None:
        """Issue `number` cannot be closed while `depends_on` is open (Forgejo answers 412)."""
        with self.lock:
            self._repo(repo).issues[number].depends_on.append(depends_on)

    def _repo(self, repo: str) -> Repo:
        found = self.state.repo(*repo.split("/", 1))
        if found is None:
            raise KeyError(f"no repository {repo}")
        return found

    def add_pull_request(self, repo: str, title: str, **kwargs: Any) -> Issue:
        return self.add_issue(repo, title, pull=True, **kwargs)

    def client(self, token: str | None = None, *, timeout: float = 5.0) -> httpx.AsyncClient:
        """An AsyncClient on `asgi_transport()` at https://forgejo.test (paths start /api/v1)."""
        headers = {"authorization": f"token {token}"} if token else {}
        return httpx.AsyncClient(transport=self.asgi_transport(), base_url=SPEC_HOST,
                                 headers=headers, timeout=timeout)

    # queries -----------------------------------------------------------------------------------

    def label(self, label_id: int) -> Label | None:
        with self.lock:
            return self.state.labels.get(label_id)

    def labels_of(self, *, repo: str | None = None, org: str | None = None) -> list[Label]:
        with self.lock:
            if repo is not None:
                found = self.state.repo(*repo.split("/", 1))
                return self.state.repo_labels(found) if found else []
            found_org = self.state.org(org or "")
            return self.state.org_labels(found_org) if found_org else []

    def issue(self, repo: str, number: int) -> Issue:
        """The issue as the fake holds it (a copy: read it, do not change it)."""
        with self.lock:
            return copy.deepcopy(self._repo(repo).issues[number])

    def issue_label_ids(self, repo: str, number: int) -> list[int]:
        with self.lock:
            found = self.state.repo(*repo.split("/", 1))
            assert found is not None
            return list(found.issues[number].label_ids)

