"""Seed and query helpers for a repository's git data and pull requests (mixed into `FakeGitHub`).

A repository has no git data until a helper touches it; the first one creates the default branch
`main` with one commit holding `README.md`."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal

from fakegithub.git_state import CheckRun, Commit, Protection, Pull, RepoGit, Review, Status
from fakegithub.state import Repo, State

FileContent = str | bytes | None  # None deletes the path


class GitSeeding:
    lock: threading.RLock
    state: State

    def _git(self, owner: str, repo: str) -> tuple[Repo, RepoGit]:
        record = self.state.repo(owner, repo)
        git = self.state.git.get(record.id)
        if git is None:
            git = self.state.git[record.id] = RepoGit()
            readme = git.put_blob(f"# {record.name}\n".encode())
            first = git.commit({"README.md": readme}, [], "Initial commit", record.owner, self.state.stamp())
            git.branches[git.default_branch] = first.sha
        return record, git

    def add_commit(self, owner: str, repo: str, branch: str, files: Mapping[str, FileContent], *,
                   message: str = "Update files", author: str = "octocat",
                   when: datetime | str | None = None) -> str:
        """A commit on `branch` (created from the default branch if missing) that writes `files`
        (text or bytes; None deletes); an open pull request from the branch follows it. Returns
        the commit's sha."""
        with self.lock:
            record, git = self._git(owner, repo)
            if branch not in git.branches:
                git.branches[branch] = git.branches[git.default_branch]
            tip = git.commits[git.branches[branch]]
            tree = dict(tip.tree)
            for path, content in files.items():
                if content is None:
                    tree.pop(path, None)
                else:
                    tree[path] = git.put_blob(content.encode() if isinstance(content, str) else content)
            stamp = self.state.resolve_time(when) or self.state.stamp()
            made = git.commit(tree, [tip.sha], message, self.state.user(author).login, stamp)
            git.branches[branch] = made.sha
            for pull in git.pulls.values():
                if pull.head == branch and record.issues[pull.number].state == "open":
                    pull.head_sha = made.sha
            return made.sha

    def add_branch(self, owner: str, repo: str, name: str, *, source: str | None = None) -> str:
        """A branch at `source` (a branch or sha; default: the default branch). Returns its sha."""
        with self.lock:
            _, git = self._git(owner, repo)
            found = git.resolve(source or git.default_branch)
            if found is None:
                raise KeyError(f"no ref {source!r} in {owner}/{repo}")
            git.branches[name] = found.sha
            return found.sha

    def protect_branch(self, owner: str, repo: str, branch: str, *, required_checks: Iterable[str] = (),
                       required_reviews: int = 0) -> None:
        with self.lock:
            _, git = self._git(owner, repo)
            git.protection[branch] = Protection(list(required_checks), required_reviews)

    def set_merge_methods(self, owner: str, repo: str, methods: Iterable[str]) -> None:
        """The merge methods the repository allows (merge, squash, rebase)."""
        with self.lock:
            self._git(owner, repo)[1].merge_methods = set(methods)

    def add_team(self, owner: str, repo: str, slug: str) -> None:
        """A team that may be requested as a reviewer on the repository."""
        with self.lock:
            self._git(owner, repo)[1].teams.add(slug)

    def add_status(self, owner: str, repo: str, ref: str, context: str,
                   state: Literal["error", "failure", "pending", "success"] = "success",
                   description: str | None = None) -> None:
        with self.lock:
            _, git = self._git(owner, repo)
            sha = self._sha(git, ref)
            git.statuses.setdefault(sha, []).append(
                Status(self.state.next_id("status"), context, state, description, self.state.stamp()))

    def add_check_run(self, owner: str, repo: str, ref: str, name: str, *,
                      status: Literal["queued", "in_progress", "completed"] = "completed",
                      conclusion: str | None = "success") -> None:
        with self.lock:
            _, git = self._git(owner, repo)
            sha = self._sha(git, ref)
            now = self.state.stamp()
            done = status == "completed"
            git.check_runs.setdefault(sha, []).append(CheckRun(
                self.state.next_id("check_run"), name, status, conclusion if done else None, now,
                now if done else None))

    @staticmethod
    def _sha(git: RepoGit, ref: str) -> str:
        found = git.resolve(ref)
        if found is None:
            raise KeyError(f"no ref {ref!r}")
        return found.sha

    def attach_pull(self, owner: str, repo: str, number: int, *, head: str | None = None,
                    base: str | None = None, files: Mapping[str, FileContent] | None = None) -> Pull:
        """The git side of pull request `number`: `head` (default `pr-<number>`, created from the
        base with one commit writing `files`, default `pr-<number>.txt`) into `base` (default: the
        default branch)."""
        with self.lock:
            record, git = self._git(owner, repo)
            base = base or git.default_branch
            head = head or f"pr-{number}"
            if head not in git.branches:
                git.branches[head] = git.branches[base]
                self.add_commit(owner, repo, head, files or {f"pr-{number}.txt": f"change {number}\n"},
                                message=f"Change for #{number}", author=record.issues[number].author)
            pull = Pull(number, head, base, git.branches[head])
            git.pulls[number] = pull
            return pull

    def add_review(self, owner: str, repo: str, number: int, author: str,
                   state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED"] = "APPROVED",
                   body: str = "") -> int:
        with self.lock:
            _, git = self._git(owner, repo)
            pull = git.pulls[number]
            review = Review(self.state.next_id("review"), self.state.user(author).login, state, body,
                            pull.head_sha, self.state.stamp())
            pull.reviews.append(review)
            return review.id

    # queries ----------------------------------------------------------------------------------------

    def pull(self, owner: str, repo: str, number: int) -> Pull:
        with self.lock:
            return self._git(owner, repo)[1].pulls[number]

    def branch_sha(self, owner: str, repo: str, branch: str) -> str:
        with self.lock:
            return self._git(owner, repo)[1].branches[branch]

    def branches(self, owner: str, repo: str) -> dict[str, str]:
        with self.lock:
            return dict(self._git(owner, repo)[1].branches)

    def commit_at(self, owner: str, repo: str, ref: str) -> Commit:
        with self.lock:
            _, git = self._git(owner, repo)
            return git.commits[self._sha(git, ref)]

    def file_bytes(self, owner: str, repo: str, path: str, ref: str | None = None) -> bytes | None:
        """A file's content at `ref` (default: the default branch), None when absent."""
        with self.lock:
            _, git = self._git(owner, repo)
            sha = git.commits[self._sha(git, ref or git.default_branch)].tree.get(path)
            return None if sha is None else git.blobs[sha]
