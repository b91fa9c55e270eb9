"""`FakeGitHub`: GitHub's world on the shared fake machinery (`fakegithub.core`) — seed and
query helpers and a client with GitHub's headers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import Any, Literal

import httpx

from fakegithub import control
from fakegithub.app import ANONYMOUS_LIMIT, DEFAULT_LIMITS, Pipeline
from fakegithub.clock import Clock
from fakegithub.core import TIMELINE_LIMIT, FakeForge, RecordedRequest, TimedRequest, critical_path
from fakegithub.git_seed import FileContent, GitSeeding
from fakegithub.routing import Router
from fakegithub.state import (
    ALL,
    Comment,
    Issue,
    Label,
    Milestone,
    RateBucket,
    Repo,
    State,
    Token,
    User,
)
from fakegithub.validation import Contract, contract

__all__ = ["TIMELINE_LIMIT", "FakeGitHub", "RecordedRequest", "TimedRequest", "critical_path"]


class FakeGitHub(GitSeeding, FakeForge):
    """A stateful GitHub REST fake whose requests and responses are checked against the pinned spec.

    Seed with `add_*`, drive over `asgi_transport()` or `with serve() as base_url:`, and assert
    `violations == []` at the end (the pytest fixture in tests/fake/conftest.py does that).
    """

    state: State

    def __init__(self, *, clock: Clock | None = None, spec: Contract | None = None) -> None:
        checked = spec or contract()
        state = State(clock)
        self.anonymous_bucket = RateBucket(ANONYMOUS_LIMIT, ANONYMOUS_LIMIT,
                                           state.now() + timedelta(hours=1))
        super().__init__(state=state, contract=checked, router=Router(checked.operations.values()),
                         pipeline=Pipeline, routes=control.routes(self))

    def fresh_state(self, clock: Clock) -> State:
        return State(clock)

    # seeding ---------------------------------------------------------------------------------

    def add_repo(self, owner: str, name: str, private: bool = False, *,
                 description: str | None = None,
                 owner_type: Literal["User", "Organization"] = "User") -> Repo:
        with self.lock:
            repo = self.state.repo(owner, name, private=private, owner_type=owner_type)
            repo.private = private
            if description is not None:
                repo.description = description
            return repo

    def add_user(self, login: str, *, name: str | None = None,
                 collaborator_on: Iterable[str] | str = ALL) -> User:
        """A user; by default a collaborator everywhere (assignable, may label/lock/...).
        Pass `collaborator_on=()` for an outsider or `["owner/repo", ...]` for specific repos."""
        with self.lock:
            user = self.state.user(login)
            if name is not None:
                user.name = name
            self.state.grant(user.login, collaborator_on)
            return user

    def grant(self, login: str, collaborator_on: Iterable[str] | str = ALL) -> None:
        """Make an existing or new user a collaborator on `"owner/repo"`, a list of them, or `"*"`."""
        with self.lock:
            self.state.grant(self.state.user(login).login, collaborator_on)

    def add_collaborator(self, owner: str, repo: str, login: str, *,
                         permission: Literal["write", "read"] = "write") -> None:
        """A collaborator on one repository; `read` sees it (private too) but cannot push."""
        with self.lock:
            self.state.user(login)
            record = self.state.repo(owner, repo)
            record.collaborators.add(login)
            if permission == "read":
                record.read_only.add(login.casefold())
            else:
                record.read_only.discard(login.casefold())

    def add_token(self, token: str, login: str, scopes: Sequence[str] = ("repo",), *,
                  collaborator_on: Iterable[str] | str = ALL) -> Token:
        """A token for `login` (created if needed); its user is a collaborator per `collaborator_on`."""
        with self.lock:
            self.add_user(login, collaborator_on=collaborator_on)
            record = Token(token, self.state.user(login).login, tuple(scopes))
            self.state.tokens[token] = record
            return record

    def add_installation_token(self, token: str, app_slug: str, *,
                               collaborator_on: Iterable[str] | str = ALL) -> Token:
        """A GitHub App installation token: it acts as the bot user `<app_slug>[bot]` (the author
        of what it creates), has no OAuth scopes, and GET /user refuses it with 403."""
        with self.lock:
            bot = self.state.user(f"{app_slug}[bot]", kind="Bot")
            self.state.grant(bot.login, collaborator_on)
            record = Token(token, bot.login, (), installation=True)
            self.state.tokens[token] = record
            return record

    def set_rate_limit(self, token: str, limit: int | None = None, remaining: int | None = None, *,
                       resource: Literal["core", "search"] = "core",
                       reset: datetime | str | None = None) -> RateBucket:
        """Set a token's budget for a resource; `reset` defaults to one hour from the clock."""
        with self.lock:
            record = self.state.tokens[token]
            bucket = record.buckets.get(resource)
            default = DEFAULT_LIMITS.get(resource, 5000)
            if bucket is None:
                bucket = RateBucket(default, default, self.state.now() + timedelta(hours=1))
                record.buckets[resource] = bucket
            if limit is not None:
                bucket.limit = limit
                bucket.remaining = min(bucket.remaining, limit)
            if remaining is not None:
                bucket.remaining = remaining
            if reset is not None:
                resolved = self.state.resolve_time(reset)
                assert resolved is not None
                bucket.reset = resolved
            return bucket

    def add_label(self, owner: str, repo: str, name: str, color: str = "ededed",
                  description: str | None = None, *, default: bool = False) -> Label:
        with self.lock:
            r = self.state.repo(owner, repo)
            if r.find_label(name) is not None:
                raise ValueError(f"label {name!r} already exists in {r.full_name}")
            lb = self.state.label(r, name, color, description)
            lb.default = default
            return lb

    def add_milestone(self, owner: str, repo: str, title: str, *, description: str | None = None,
                      state: Literal["open", "closed"] = "open",
                      due_on: date | datetime | str | None = None, creator: str | None = None) -> int:
        """Seed a milestone (no permission or duplicate checks); returns its number. `due_on` is
        stored as GitHub stores it: midnight US Pacific of that day (a date or `YYYY-MM-DD` is the
        day itself; an instant is first converted to Pacific time)."""
        with self.lock:
            r = self.state.repo(owner, repo)
            ms = self.state.milestone(r, title, creator or owner, description=description,
                                      state=state, due=due_on)
            return ms.number

    def add_issue(
        self,
        owner: str,
        repo: str,
        title: str,
        body: str | None = None,
        *,
        labels: Iterable[str] = (),
        assignees: Iterable[str] = (),
        milestone: int | str | None = None,
        state: Literal["open", "closed"] = "open",
        state_reason: str | None = None,
        author: str = "octocat",
        locked: bool = False,
        lock_reason: str | None = None,
        created_at: datetime | str | None = None,
        updated_at: datetime | str | None = None,
        closed_at: datetime | str | None = None,
    ) -> int:
        """Seed an issue directly (no permission checks; unknown labels/users are created).
        `milestone` is a number or a title. Returns the issue number."""
        return self._add_item(owner, repo, title, body, labels=labels, assignees=assignees,
                              milestone=milestone, state=state, state_reason=state_reason,
                              author=author, locked=locked, lock_reason=lock_reason,
                              created_at=created_at, updated_at=updated_at, closed_at=closed_at)

    def add_pull_request(
        self,
        owner: str,
        repo: str,
        title: str,
        body: str | None = None,
        *,
        draft: bool = False,
        merged: bool = False,
        head: str | None = None,
        base: str | None = None,
        files: dict[str, FileContent] | None = None,
        **kwargs: Any,
    ) -> int:
        """Seed a pull request (shares numbers with issues; lists/search return it with
        `pull_request`). `merged=True` implies closed. Its head branch (default `pr-<number>`,
        made from `base` with one commit writing `files`) and base (default: the default branch)
        are created as needed (`attach_pull`). Other arguments as for `add_issue`."""
        if merged:
            kwargs["state"] = "closed"
        number = self._add_item(owner, repo, title, body, **kwargs)
        with self.lock:
            item = self.state.repo(owner, repo).issues[number]
            item.is_pull_request = True
            item.draft = draft
            item.state_reason = None
            if merged:
                item.merged_at = item.closed_at
            self.attach_pull(owner, repo, number, head=head, base=base, files=files)
        return number

    def _add_item(self, owner: str, repo: str, title: str, body: str | None, *,
                  labels: Iterable[str] = (), assignees: Iterable[str] = (),
                  milestone: int | str | None = None, state: Literal["open", "closed"] = "open",
                  state_reason: str | None = None, author: str = "octocat", locked: bool = False,
                  lock_reason: str | None = None, created_at: datetime | str | None = None,
                  updated_at: datetime | str | None = None,
                  closed_at: datetime | str | None = None) -> int:
        with self.lock:
            s = self.state
            r = s.repo(owner, repo)
            created = s.resolve_time(created_at) or s.stamp()
            updated = s.resolve_time(updated_at) or created
            ms: int | None = None
            if isinstance(milestone, str):
                found = r.find_milestone_by_title(milestone)
                ms = found.number if found else self.add_milestone(owner, repo, milestone)
            elif milestone is not None:
                if milestone not in r.milestones:
                    raise ValueError(f"no milestone #{milestone} in {r.full_name}")
                ms = milestone
            number = r.next_number
            r.next_number += 1
            closed = state == "closed"
            item = Issue(
                id=s.next_id("issue"), number=number, title=title, body=body,
                author=s.user(author).login, created_at=created, updated_at=updated, state=state,
                state_reason=(state_reason or "completed") if closed else state_reason,
                label_ids=[s.label(r, name).id for name in labels],
                assignees=[s.user(a).login for a in assignees], milestone=ms, locked=locked,
                lock_reason=lock_reason if locked else None,
                closed_at=(s.resolve_time(closed_at) or updated) if closed else None,
                closed_by=s.user(author).login if closed else None,
            )
            r.issues[number] = item
            return number

    def add_comment(self, owner: str, repo: str, number: int, body: str, *,
                    author: str = "octocat", created_at: datetime | str | None = None) -> int:
        """Seed a comment (bumps the issue's `updated_at` to the comment time). Returns its id."""
        with self.lock:
            s = self.state
            item = self._item(owner, repo, number)
            when = s.resolve_time(created_at) or s.stamp()
            comment = Comment(s.next_id("comment"), number, body, s.user(author).login, when, when)
            item.comments.append(comment)
            item.updated_at = max(item.updated_at, when)
            return comment.id

    def delete_issue(self, owner: str, repo: str, number: int) -> None:
        """Mark an issue deleted: it answers 410 Gone and leaves lists and search."""
        with self.lock:
            self._item(owner, repo, number).deleted = True

    # queries -----------------------------------------------------------------------------------

    def _repo(self, owner: str, repo: str) -> Repo:
        found = self.state.find_repo(owner, repo)
        if found is None:
            raise KeyError(f"no repository {owner}/{repo} in the fake")
        return found

    def _item(self, owner: str, repo: str, number: int) -> Issue:
        item = self._repo(owner, repo).issues.get(number)
        if item is None:
            raise KeyError(f"no issue #{number} in {owner}/{repo}")
        return item

    def issues(self, owner: str, repo: str, *, pull_requests: bool = True) -> list[Issue]:
        """Live (not deleted) issues, by number; pull requests too unless `pull_requests=False`."""
        with self.lock:
            items = sorted(self._repo(owner, repo).live_issues(), key=lambda i: i.number)
            return [i for i in items if pull_requests or not i.is_pull_request]

    def get_issue(self, owner: str, repo: str, number: int) -> Issue:
        with self.lock:
            return self._item(owner, repo, number)

    def add_sub_issue(self, owner: str, repo: str, parent: int, child: int, *,
                      child_in: str | None = None) -> None:
        """Seed a sub-issue link (no checks): `child` goes last under `parent` (numbers);
        `child_in` ("owner/repo"): the child is an issue of that repository, as GitHub allows."""
        with self.lock:
            p, c = self._item(owner, repo, parent), self._item(*self._where(owner, repo, child_in), child)
            self.state.sub_issues.setdefault(p.id, []).append(c.id)
            self.state.parent_of[c.id] = p.id

    def add_blocker(self, owner: str, repo: str, number: int, blocked_by: int, *,
                    blocker_in: str | None = None) -> None:
        """Seed a dependency (no checks): issue `number` is blocked by `blocked_by` (an issue
        of `blocker_in`, "owner/repo", when given)."""
        with self.lock:
            item = self._item(owner, repo, number)
            blocker = self._item(*self._where(owner, repo, blocker_in), blocked_by)
            self.state.blocked_by.setdefault(item.id, []).append(blocker.id)

    @staticmethod
    def _where(owner: str, repo: str, other: str | None) -> tuple[str, str]:
        if other is None:
            return owner, repo
        other_owner, _, other_repo = other.partition("/")
        return other_owner, other_repo

    def sub_issue_numbers(self, owner: str, repo: str, parent: int) -> list[int]:
        """The numbers of a parent's sub-issues in this repository, in their order."""
        with self.lock:
            by_id = {i.id: i.number for i in self._repo(owner, repo).issues.values()}
            return [by_id[i] for i in self.state.sub_issues.get(self._item(owner, repo, parent).id, [])
                    if i in by_id]

    def blocker_numbers(self, owner: str, repo: str, number: int) -> list[int]:
        """The numbers of the issues (of this repository) blocking issue `number`."""
        with self.lock:
            by_id = {i.id: i.number for i in self._repo(owner, repo).issues.values()}
            return [by_id[i] for i in self.state.blocked_by.get(self._item(owner, repo, number).id, [])
                    if i in by_id]

    def labels(self, owner: str, repo: str) -> list[Label]:
        with self.lock:
            return list(self._repo(owner, repo).labels.values())

    def label_names(self, owner: str, repo: str, number: int | None = None) -> list[str]:
        """Names of the repository's labels, or of one issue's labels."""
        with self.lock:
            r = self._repo(owner, repo)
            if number is None:
                return [lb.name for lb in r.labels.values()]
            return r.label_names(self._item(owner, repo, number))

    def comments(self, owner: str, repo: str, number: int) -> list[Comment]:
        with self.lock:
            return list(self._item(owner, repo, number).comments)

    def milestones(self, owner: str, repo: str) -> list[Milestone]:
        with self.lock:
            return list(self._repo(owner, repo).milestones.values())

    def client(self, token: str | None = None, *, base_url: str = "http://fake-github.test",
               timeout: float = 5.0) -> httpx.AsyncClient:
        """An AsyncClient wired to `asgi_transport()` (with GitHub's usual headers)."""
        headers = {"accept": "application/vnd.github+json", "x-github-api-version": "2022-11-28"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        return httpx.AsyncClient(transport=self.asgi_transport(), base_url=base_url,
                                 headers=headers, timeout=timeout)

