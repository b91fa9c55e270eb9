"""Repository content: branches, git refs, commits, file and directory contents, file writes, code
search.

GitHub behaviour mirrored here: a `{ref}` is a branch, `HEAD` or a commit SHA (an unknown one is 422
"No commit found for SHA: <ref>"); contents at a path the ref does not hold are 404, a file above
1 MB is answered without content (`encoding: none`); a file write needs push access, the blob
`sha` of the file it replaces (missing: 422 `"sha" wasn't supplied`; another one: 409 "<path> does
not match <sha>"), base64 `content` (422 otherwise) and an existing branch (404 "Branch <b> not
found"); a ref that exists is 422 "Reference already exists"; commits list newest first. Code
search reads the default branch of every repository the token can see: words (case-insensitive
substrings of the file's text) and `repo:`, `user:`/`org:`, `path:`, `filename:`, `extension:`,
`in:file|path`; anything else is 422.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime

from fakegithub import git_objects
from fakegithub.clock import parse_time
from fakegithub.git_state import Commit, RepoGit
from fakegithub.handlers import Ctx, Reply, _body, _page, _repo, _require_push, handles
from fakegithub.paging import page_args
from fakegithub.pull_handlers import repo_git
from fakegithub.state import ApiError, Repo, not_found

CODE_QUALIFIERS = frozenset({"repo", "user", "org", "path", "filename", "extension", "in"})


def _ref(ctx: Ctx, git: RepoGit, ref: str) -> Commit:
    found = git.resolve(ref)
    if found is None:
        raise ApiError(422, f"No commit found for SHA: {ref}", docs=ctx.docs)
    return found


def _nonempty(ctx: Ctx, git: RepoGit) -> None:
    if not git.branches:
        raise ApiError(409, "Git Repository is empty.", docs=ctx.docs)


@handles("repos/list-branches")
def list_branches(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    git = repo_git(ctx, repo)
    names = sorted(git.branches)
    if (protected := ctx.query.get("protected")) is not None:
        names = [n for n in names if (n in git.protection) == (protected == "true")]
    chunk, headers = _page(ctx, names)
    return Reply(200, [git_objects.short_branch(ctx.api, repo, git, n) for n in chunk], headers)


@handles("git/create-ref")
def create_ref(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    git = repo_git(ctx, repo)
    body = _body(ctx)
    ref, sha = str(body.get("ref", "")), str(body.get("sha", ""))
    if not ref.startswith("refs/") or ref.count("/") < 2:
        raise ApiError(422, "Reference name must start with 'refs/' and have at least two slashes.",
                       docs=ctx.docs)
    if not ref.startswith("refs/heads/"):
        raise ApiError(422, "Reference update failed", docs=ctx.docs)
    name = ref.removeprefix("refs/heads/")
    if name in git.branches:
        raise ApiError(422, "Reference already exists", docs=ctx.docs)
    if sha not in git.commits:
        raise ApiError(422, "Object does not exist", docs=ctx.docs)
    git.branches[name] = sha
    rendered = git_objects.git_ref(ctx.api, repo, name, sha)
    return Reply(201, rendered, {"location": rendered["url"]})


# commits ------------------------------------------------------------------------------------------


def _matches_author(ctx: Ctx, c: Commit, who: str) -> bool:
    who = who.casefold()
    return c.author.casefold() == who or f"{c.author}@users.noreply.github.com".casefold() == who


def _time_arg(ctx: Ctx, name: str) -> datetime | None:
    raw = ctx.query.get(name)
    if not raw:
        return None
    try:
        return parse_time(raw)
    except ValueError as exc:
        raise ApiError(422, f"Invalid value for `{name}`", docs=ctx.docs) from exc


@handles("repos/list-commits")
def list_commits(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    git = repo_git(ctx, repo)
    _nonempty(ctx, git)
    start = git.resolve(ctx.query.get("sha") or git.default_branch)
    if start is None:
        raise not_found(ctx.docs)
    commits = [git.commits[s] for s in git.ancestors(start.sha)]
    if path := ctx.query.get("path"):
        path = path.strip("/")
        commits = [c for c in commits if any(p == path or p.startswith(path + "/")
                                             for p in git.changes(c.parents[0] if c.parents else None, c.sha))]
    if author := ctx.query.get("author"):
        commits = [c for c in commits if _matches_author(ctx, c, author)]
    if (since := _time_arg(ctx, "since")) is not None:
        commits = [c for c in commits if c.date >= since]
    if (until := _time_arg(ctx, "until")) is not None:
        commits = [c for c in commits if c.date <= until]
    chunk, headers = _page(ctx, commits)
    return Reply(200, [git_objects.commit(ctx.api, ctx.state, repo, git, c) for c in chunk], headers)


@handles("repos/get-commit")
def get_commit(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    git = repo_git(ctx, repo)
    _nonempty(ctx, git)
    c = _ref(ctx, git, ctx.params["ref"])
    files = git_objects.diff_entries(ctx.api, repo, git, c.parents[0] if c.parents else None, c.sha)
    chunk, headers = _page(ctx, files, cap=3000)
    return Reply(200, git_objects.commit(ctx.api, ctx.state, repo, git, c, files=chunk), headers)


# contents -----------------------------------------------------------------------------------------


@handles("repos/get-content")
def get_content(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    git = repo_git(ctx, repo)
    ref = ctx.query.get("ref") or git.default_branch
    if not git.branches:
        raise ApiError(404, "This repository is empty.", docs=ctx.docs)
    c = git.resolve(ref)
    if c is None:
        raise ApiError(404, f"No commit found for the ref {ref}", docs=ctx.docs)
    path = ctx.params["path"].strip("/")
    if path in c.tree:
        return Reply(200, git_objects.content_file(ctx.api, repo, git, path, c.tree[path], ref))
    if path == "" or any(p.startswith(path + "/") for p in c.tree):
        return Reply(200, git_objects.directory_entries(ctx.api, repo, git, c.tree, path, ref))
    raise not_found(ctx.docs)


@handles("repos/create-or-update-file-contents")
def put_content(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    git = repo_git(ctx, repo)
    body = _body(ctx)
    path = ctx.params["path"].strip("/")
    branch = str(body.get("branch") or git.default_branch)
    if branch not in git.branches:
        raise ApiError(404, f"Branch {branch} not found", docs=ctx.docs)
    try:
        data = base64.b64decode(str(body.get("content", "")), validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(422, "content is not valid Base64", docs=ctx.docs) from None
    tip = git.commits[git.branches[branch]]
    if any(p.startswith(path + "/") for p in tip.tree):
        raise ApiError(422, f"{path} is a directory", docs=ctx.docs)
    current = tip.tree.get(path)
    sha = body.get("sha")
    if current is not None and sha is None:
        raise ApiError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.', docs=ctx.docs)
    if sha is not None and sha != current:
        raise ApiError(409, f"{path} does not match {sha}", docs=ctx.docs)
    tree = {**tip.tree, path: git.put_blob(data)}
    made = git.commit(tree, [tip.sha], str(body.get("message", "")), ctx.actor, ctx.state.stamp())
    git.branches[branch] = made.sha
    for pull in git.pulls.values():  # an open pull request follows its head branch
        if pull.head == branch and repo.issues[pull.number].state == "open":
            pull.head_sha = made.sha
    repo.updated_at = made.date
    status = 201 if current is None else 200
    return Reply(status, git_objects.file_commit(ctx.api, ctx.state, repo, git, path, made, branch))


# code search ---------------------------------------------------------------------------------------


def _code_query(ctx: Ctx, q: str) -> tuple[list[str], dict[str, list[str]]]:
    words: list[str] = []
    qualifiers: dict[str, list[str]] = {}
    for token in re.findall(r'"[^"]*"|\S+', q):
        key, colon, value = token.partition(":")
        if colon and not token.startswith('"'):
            if key not in CODE_QUALIFIERS:
                raise ApiError(422, "Validation Failed", docs=ctx.docs, errors=[
                    {"message": f"The qualifier `{key}` is not supported by the fake's code search.",
                     "resource": "Search", "field": "q", "code": "invalid"}])
            qualifiers.setdefault(key, []).append(value.strip('"'))
        else:
            words.append(token.strip('"').casefold())
    return words, qualifiers


def _in_scope(repo: Repo, qualifiers: dict[str, list[str]]) -> bool:
    names = qualifiers.get("repo")
    owners = qualifiers.get("user", []) + qualifiers.get("org", [])
    if names and repo.full_name.casefold() not in {n.casefold() for n in names}:
        return False
    return not owners or repo.owner.casefold() in {o.casefold() for o in owners}


def _file_matches(path: str, text: str, words: list[str], qualifiers: dict[str, list[str]]) -> bool:
    name = path.rsplit("/", 1)[-1]
    if any(not (path.startswith(p.strip("/")) or p.strip("/") in path) for p in qualifiers.get("path", [])):
        return False
    if any(name != f for f in qualifiers.get("filename", [])):
        return False
    if any(not name.endswith("." + e.lstrip(".")) for e in qualifiers.get("extension", [])):
        return False
    where = set(",".join(qualifiers.get("in", ["file"])).split(","))
    haystack = ((text.casefold() if "file" in where else "")
                + "\n" + (path.casefold() if "path" in where else ""))
    return all(word in haystack for word in words)


@handles("search/code")
def search_code(ctx: Ctx) -> Reply:
    words, qualifiers = _code_query(ctx, ctx.query.get("q", ""))
    if not words and not qualifiers.get("filename") and not qualifiers.get("path"):
        raise ApiError(422, "Validation Failed", docs=ctx.docs, errors=[
            {"message": "Must include at least one search term.", "resource": "Search", "field": "q",
             "code": "missing"}])
    state = ctx.state
    hits = []
    for repo in sorted(state.repos.values(), key=lambda r: r.full_name.casefold()):
        if not state.can_see(repo, ctx.actor) or (repo.private and "repo" not in ctx.token.scopes):
            continue
        if not _in_scope(repo, qualifiers):
            continue
        git = state.git.get(repo.id)
        if git is None or git.default_branch not in git.branches:
            continue
        tree = git.commits[git.branches[git.default_branch]].tree
        for path, sha in sorted(tree.items()):
            text = git.blobs[sha].decode("utf-8", "replace")
            if _file_matches(path, text, words, qualifiers):
                hits.append((repo, git, path, sha))
    page, per_page = page_args(ctx.query)
    if page * per_page > 1000:
        raise ApiError(422, "Cannot access beyond the first 1000 results.", docs=ctx.docs)
    chunk, headers = _page(ctx, hits, cap=1000)
    items = [git_objects.code_hit(ctx.api, state, r, g, p, s, ctx.actor) for r, g, p, s in chunk]
    return Reply(200, {"total_count": len(hits), "incomplete_results": False, "items": items}, headers)
