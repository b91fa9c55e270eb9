"""Pull requests: list, get, create, update, files, reviews, review comments, requested reviewers,
merge (SHA guard, branch protection, merge methods, conflicts), update-branch; and what a head
commit carries: commit statuses and check runs.

GitHub behaviour mirrored here (docs.github.com, "Pulls" and "Merging a pull request", plus its
answers as clients report them): a pull request shares the issue number space; `head` and `base`
are branches of the same repository; a second open pull request for the same head and base is 422
"A pull request already exists for <owner>:<head>."; a head with no commits beyond the base is 422
"No commits between <base> and <head>". The merge refuses with 409 "Head branch was modified.
Review and try the merge again." when `sha` is not the head's tip, and with 405 for a merge method
the repository disallows ("Merge commits are not allowed on this repository."), a draft ("Pull
Request is still a draft"), the base branch's protection ('Required status check "ci" is
expected.', "At least 1 approving review is required by reviewers with write access.", several
joined by a space) and conflicts or a closed pull request ("Pull Request is not mergeable").
Reviews by the author may not approve or request changes (422). `update-branch` merges the base
into the head (422 "expected head sha didn't match current head ref.", "There are no new commits
on the base branch.", "merge conflict between base and head"); the fake answers it at once.
"""

from __future__ import annotations

from typing import Any

from fakegithub import git_objects
from fakegithub.git_state import Pull, RepoGit, Review, ReviewComment
from fakegithub.handlers import Ctx, Reply, _body, _can_push, _page, _repo, _require_push, handles
from fakegithub.state import ApiError, Issue, Repo, invalid, not_found

MERGE_WORDS = {"merge": "Merge commits", "squash": "Squash merges", "rebase": "Rebase merges"}


def repo_git(ctx: Ctx, repo: Repo) -> RepoGit:
    return ctx.state.git.setdefault(repo.id, RepoGit())


def _simple_error(ctx: Ctx, status: int, message: str, errors: list[str] | None = None) -> ApiError:
    """A validation-error-simple answer: `errors` is a list of sentences."""
    err = ApiError(status, message, docs=ctx.docs)
    if errors is not None:
        err.body["errors"] = errors
    return err


def _custom(ctx: Ctx, message: str) -> ApiError:
    return ApiError(422, "Validation Failed", docs=ctx.docs,
                    errors=[{"resource": "PullRequest", "code": "custom", "message": message}])


def _pull(ctx: Ctx, repo: Repo) -> tuple[Issue, Pull]:
    git = repo_git(ctx, repo)
    number = int(ctx.params["pull_number"])
    item = repo.issues.get(number)
    if item is None or not item.is_pull_request or item.deleted or number not in git.pulls:
        raise not_found(ctx.docs)
    return item, git.pulls[number]


def _render(ctx: Ctx, repo: Repo, item: Issue, pull: Pull, *, full: bool) -> dict[str, Any]:
    return git_objects.pull_request(ctx.api, ctx.state, repo, repo_git(ctx, repo), item, pull,
                                    ctx.actor, full=full)


def _pulls(repo: Repo, git: RepoGit) -> list[tuple[Issue, Pull]]:
    return [(repo.issues[n], p) for n, p in git.pulls.items()
            if n in repo.issues and not repo.issues[n].deleted]


@handles("pulls/list")
def list_pulls(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    git = repo_git(ctx, repo)
    q = ctx.query
    wanted = q.get("state", "open")
    rows = [(i, p) for i, p in _pulls(repo, git) if wanted == "all" or i.state == wanted]
    if head := q.get("head"):
        owner, _, branch = head.rpartition(":")
        rows = [(i, p) for i, p in rows if p.head == branch
                and (not owner or owner.casefold() == repo.owner.casefold())]
    if base := q.get("base"):
        rows = [(i, p) for i, p in rows if p.base == base]
    sort = q.get("sort", "created")
    key = {"updated": lambda r: (r[0].updated_at, r[0].number),
           "popularity": lambda r: (len(r[0].comments), r[0].number)}.get(
        sort, lambda r: (r[0].created_at, r[0].number))
    default = "desc" if sort == "created" else "asc"
    rows.sort(key=key, reverse=q.get("direction", default) == "desc")
    chunk, headers = _page(ctx, rows)
    return Reply(200, [_render(ctx, repo, i, p, full=False) for i, p in chunk], headers)


@handles("pulls/get")
def get_pull(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    return Reply(200, _render(ctx, repo, item, pull, full=True))


@handles("pulls/create")
def create_pull(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    git = repo_git(ctx, repo)
    body = _body(ctx)
    title = str(body.get("title") or "").strip()
    if not title:
        raise invalid("PullRequest", "title", None, ctx.docs, code="missing_field")
    head = str(body.get("head") or "")
    owner, _, head = head.rpartition(":")
    if owner and owner.casefold() != repo.owner.casefold():
        raise invalid("PullRequest", "head", None, ctx.docs)
    base = str(body.get("base") or "")
    if head not in git.branches:
        raise invalid("PullRequest", "head", None, ctx.docs)
    if base not in git.branches:
        raise invalid("PullRequest", "base", None, ctx.docs)
    if any(p.head == head and p.base == base and i.state == "open" for i, p in _pulls(repo, git)):
        raise _custom(ctx, f"A pull request already exists for {repo.owner}:{head}.")
    if git.branches[head] in git.ancestors(git.branches[base]):
        raise _custom(ctx, f"No commits between {base} and {head}")
    state = ctx.state
    now = state.stamp()
    number = repo.next_number
    repo.next_number += 1
    item = Issue(id=state.next_id("issue"), number=number, title=title, body=body.get("body"),
                 author=state.user(ctx.actor).login, created_at=now, updated_at=now,
                 is_pull_request=True, draft=bool(body.get("draft")))
    repo.issues[number] = item
    git.pulls[number] = Pull(number, head, base, git.branches[head],
                             maintainer_can_modify=bool(body.get("maintainer_can_modify")))
    rendered = _render(ctx, repo, item, git.pulls[number], full=True)
    return Reply(201, rendered, {"location": rendered["url"]})


@handles("pulls/update")
def update_pull(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    if not _can_push(ctx, repo) and item.author.casefold() != ctx.actor.casefold():
        raise ApiError(403, "Must have push access to this repository.", docs=ctx.docs)
    git = repo_git(ctx, repo)
    body = _body(ctx)
    changed = False
    if "title" in body:
        title = str(body["title"]).strip()
        if not title:
            raise invalid("PullRequest", "title", None, ctx.docs, code="missing_field")
        changed |= title != item.title
        item.title = title
    if "body" in body:
        changed |= body["body"] != item.body
        item.body = body["body"]
    if "base" in body and body["base"] != pull.base:
        if item.merged_at is not None or body["base"] not in git.branches:
            raise invalid("PullRequest", "base", None, ctx.docs)
        pull.base, changed = str(body["base"]), True
    if "maintainer_can_modify" in body:
        changed |= bool(body["maintainer_can_modify"]) != pull.maintainer_can_modify
        pull.maintainer_can_modify = bool(body["maintainer_can_modify"])
    wanted = body.get("state")
    if wanted in ("open", "closed") and wanted != item.state:
        if item.merged_at is not None:
            raise _custom(ctx, "Cannot change the state of a merged pull request")
        if wanted == "open" and pull.head not in git.branches:
            raise _custom(ctx, "Cannot reopen a pull request whose head branch was deleted")
        when = ctx.state.stamp()
        item.state = wanted
        item.closed_at, item.closed_by = (when, ctx.actor) if wanted == "closed" else (None, None)
        changed = True
    if changed:
        item.updated_at = ctx.state.stamp()
    return Reply(200, _render(ctx, repo, item, pull, full=True))


@handles("pulls/list-files")
def list_files(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _, pull = _pull(ctx, repo)
    git = repo_git(ctx, repo)
    root = git.merge_base(pull.head_sha, git.branches.get(pull.base, pull.head_sha))
    entries = git_objects.diff_entries(ctx.api, repo, git, root, pull.head_sha)
    chunk, headers = _page(ctx, entries, cap=3000)
    return Reply(200, chunk, headers)


# reviews ------------------------------------------------------------------------------------------


@handles("pulls/list-reviews")
def list_reviews(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    shown = [r for r in pull.reviews if r.state != "PENDING" or r.author.casefold() == ctx.actor.casefold()]
    chunk, headers = _page(ctx, shown)
    return Reply(200, [git_objects.review(ctx.api, ctx.state, repo, item.number, r) for r in chunk], headers)


def _hunk_lines(git: RepoGit, pull: Pull, path: str) -> set[int]:
    """Lines of the head's version of `path` that the pull request added or changed."""
    root = git.merge_base(pull.head_sha, git.branches.get(pull.base, pull.head_sha))
    new = git.commits[pull.head_sha].tree.get(path)
    old = git.commits[root].tree.get(path) if root else None
    if new is None or new == old:
        return set()
    before = set(git.blobs.get(old or "", b"").decode("utf-8", "replace").splitlines())
    after = git.blobs[new].decode("utf-8", "replace").splitlines()
    return {n for n, line in enumerate(after, 1) if line not in before}


@handles("pulls/create-review")
def create_review(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    git = repo_git(ctx, repo)
    body = _body(ctx)
    event = body.get("event")
    text = str(body.get("body") or "")
    if event in ("REQUEST_CHANGES", "COMMENT") and not text.strip():
        raise _simple_error(ctx, 422, "Unprocessable Entity",
                            [f"Review body is required when the event is {event}"])
    if event in ("APPROVE", "REQUEST_CHANGES") and item.author.casefold() == ctx.actor.casefold():
        verb = "approve" if event == "APPROVE" else "request changes on"
        raise _simple_error(ctx, 422, "Unprocessable Entity", [f"Can not {verb} your own pull request"])
    commit_id = str(body.get("commit_id") or pull.head_sha)
    if commit_id not in git.commits:
        raise _simple_error(ctx, 422, "Unprocessable Entity", ["Commit ID is not part of the pull request"])
    comments = []
    for entry in body.get("comments") or []:
        lines = _hunk_lines(git, pull, str(entry.get("path")))
        line = entry.get("line")
        if not lines or (line is not None and line not in lines):
            raise _simple_error(ctx, 422, "Unprocessable Entity",
                                ["Pull request review thread line must be part of the diff"])
        comments.append(entry)
    state = ctx.state
    now = state.stamp()
    verdict = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED",
               "COMMENT": "COMMENTED"}.get(str(event), "PENDING")
    review = Review(state.next_id("review"), state.user(ctx.actor).login, verdict, text,  # type: ignore[arg-type]
                    commit_id, None if verdict == "PENDING" else now)
    pull.reviews.append(review)
    for entry in comments:
        pull.review_comments.append(ReviewComment(
            state.next_id("review_comment"), review.id, review.author, str(entry["path"]),
            entry.get("line"), str(entry.get("side") or "RIGHT"), str(entry["body"]), commit_id,
            f"@@ {entry['path']} @@", now))
    if verdict != "PENDING":
        pull.requested_users = [u for u in pull.requested_users if u.casefold() != ctx.actor.casefold()]
        item.updated_at = now
    return Reply(200, git_objects.review(ctx.api, state, repo, item.number, review))


@handles("pulls/list-review-comments")
def list_review_comments(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    chunk, headers = _page(ctx, pull.review_comments)
    return Reply(200, [git_objects.review_comment(ctx.api, ctx.state, repo, item.number, c)
                       for c in chunk], headers)


# requested reviewers -------------------------------------------------------------------------------


@handles("pulls/request-reviewers")
def request_reviewers(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    _require_push(ctx, repo)
    body = _body(ctx)
    users = [str(u) for u in body.get("reviewers") or []]
    teams = [str(t) for t in body.get("team_reviewers") or []]
    if any(u.casefold() == item.author.casefold() for u in users):
        raise _simple_error(ctx, 422, "Review cannot be requested from pull request author.")
    known = [ctx.state.find_user(u) for u in users]
    git = repo_git(ctx, repo)
    if any(u is None or not ctx.state.is_collaborator(repo, u.login) for u in known) or any(
            t not in git.teams for t in teams):
        raise _simple_error(ctx, 422, "Reviews may only be requested from collaborators. One or more "
                            "of the users or teams you specified is not a collaborator of the "
                            f"{repo.full_name} repository.")
    for user in known:
        assert user is not None
        if user.login.casefold() not in {u.casefold() for u in pull.requested_users}:
            pull.requested_users.append(user.login)
    pull.requested_teams += [t for t in teams if t not in pull.requested_teams]
    item.updated_at = ctx.state.stamp()
    return Reply(201, _render(ctx, repo, item, pull, full=False))


@handles("pulls/remove-requested-reviewers")
def remove_requested_reviewers(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    _require_push(ctx, repo)
    body = _body(ctx)
    gone = {str(u).casefold() for u in body.get("reviewers") or []}
    teams = {str(t) for t in body.get("team_reviewers") or []}
    before = (list(pull.requested_users), list(pull.requested_teams))
    pull.requested_users = [u for u in pull.requested_users if u.casefold() not in gone]
    pull.requested_teams = [t for t in pull.requested_teams if t not in teams]
    if before != (pull.requested_users, pull.requested_teams):
        item.updated_at = ctx.state.stamp()
    return Reply(200, _render(ctx, repo, item, pull, full=False))


# merging ------------------------------------------------------------------------------------------


def _merge_refusal(ctx: Ctx, repo: Repo, git: RepoGit, item: Issue, pull: Pull, body: dict[str, Any]) -> None:
    if item.state != "open" or pull.base not in git.branches:
        raise ApiError(405, "Pull Request is not mergeable", docs=ctx.docs, with_status=False)
    sha = body.get("sha")
    if sha is not None and sha != pull.head_sha:
        raise ApiError(409, "Head branch was modified. Review and try the merge again.", docs=ctx.docs,
                       with_status=False)
    method = body.get("merge_method") or "merge"
    if method not in git.merge_methods:
        raise ApiError(405, f"{MERGE_WORDS[method]} are not allowed on this repository.", docs=ctx.docs,
                       with_status=False)
    if item.draft:
        raise ApiError(405, "Pull Request is still a draft", docs=ctx.docs, with_status=False)
    blockers = git_objects.merge_blockers(git, pull, ctx.state, repo)
    if blockers:
        raise ApiError(405, " ".join(blockers), docs=ctx.docs, with_status=False)
    if git.conflicts(pull.head_sha, git.branches[pull.base]):
        raise ApiError(405, "Pull Request is not mergeable", docs=ctx.docs, with_status=False)


@handles("pulls/merge")
def merge_pull(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    _require_push(ctx, repo)
    git = repo_git(ctx, repo)
    body = _body(ctx)
    _merge_refusal(ctx, repo, git, item, pull, body)
    method = body.get("merge_method") or "merge"
    base_sha = git.branches[pull.base]
    tree = git.merged_tree(pull.head_sha, base_sha)
    now = ctx.state.stamp()
    title = body.get("commit_title") or (
        f"Merge pull request #{item.number} from {repo.owner}/{pull.head}" if method == "merge"
        else f"{item.title} (#{item.number})")
    message = title + (f"\n\n{body['commit_message']}" if body.get("commit_message") else "")
    parents = [base_sha, pull.head_sha] if method == "merge" else [base_sha]
    made = git.commit(tree, parents, message, ctx.actor, now)
    git.branches[pull.base] = made.sha
    pull.merge_commit_sha, pull.merged_by = made.sha, ctx.state.user(ctx.actor).login
    item.state, item.merged_at, item.closed_at, item.closed_by = "closed", now, now, ctx.actor
    item.updated_at = now
    return Reply(200, {"sha": made.sha, "merged": True, "message": "Pull Request successfully merged"})


@handles("pulls/update-branch")
def update_branch(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item, pull = _pull(ctx, repo)
    _require_push(ctx, repo)
    git = repo_git(ctx, repo)
    expected = _body(ctx).get("expected_head_sha")
    if expected is not None and expected != pull.head_sha:
        raise _simple_error(ctx, 422, "expected head sha didn't match current head ref.")
    base_sha = git.branches.get(pull.base)
    if item.state != "open" or base_sha is None or pull.head not in git.branches:
        raise _simple_error(ctx, 422, "Pull request is not open")
    if not git.behind(pull.head_sha, base_sha):
        raise _simple_error(ctx, 422, "There are no new commits on the base branch.")
    if git.conflicts(pull.head_sha, base_sha):
        raise _simple_error(ctx, 422, "merge conflict between base and head")
    tree = git.merged_tree(base_sha, pull.head_sha)
    made = git.commit(tree, [pull.head_sha, base_sha], f"Merge branch '{pull.base}' into {pull.head}",
                      ctx.actor, ctx.state.stamp())
    git.branches[pull.head] = pull.head_sha = made.sha
    item.updated_at = made.date
    return Reply(202, {"message": "Updating pull request branch.",
                       "url": f"https://github.com/repos/{repo.full_name}/pulls/{item.number}"})


# what a commit carries ---------------------------------------------------------------------------


def _commit_sha(ctx: Ctx, repo: Repo) -> str:
    found = repo_git(ctx, repo).resolve(ctx.params["ref"])
    if found is None:
        raise ApiError(422, f"No commit found for SHA: {ctx.params['ref']}", docs=ctx.docs)
    return found.sha


@handles("repos/get-combined-status-for-ref")
def combined_status(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    sha = _commit_sha(ctx, repo)
    statuses = repo_git(ctx, repo).statuses.get(sha, [])
    return Reply(200, git_objects.combined_status(ctx.api, ctx.state, repo, sha, statuses, ctx.actor))


@handles("checks/list-for-ref")
def list_check_runs(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    sha = _commit_sha(ctx, repo)
    runs = list(repo_git(ctx, repo).check_runs.get(sha, []))
    if name := ctx.query.get("check_name"):
        runs = [r for r in runs if r.name == name]
    if status := ctx.query.get("status"):
        runs = [r for r in runs if r.status == status]
    if ctx.query.get("filter", "latest") == "latest":
        latest = {r.name: r for r in runs}
        runs = list(latest.values())
    chunk, headers = _page(ctx, runs)
    return Reply(200, {"total_count": len(runs),
                       "check_runs": [git_objects.check_run(ctx.api, repo, sha, r) for r in chunk]},
                 headers)
