"""Render the fake's git data and pull requests as the spec's JSON objects: commit, short-branch,
git-ref, content-file/-directory, file-commit, diff-entry, commit statuses, check runs,
pull-request(-simple), reviews, review comments, code-search results."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from fakegithub import objects
from fakegithub.clock import iso
from fakegithub.git_state import (
    CheckRun,
    Commit,
    Pull,
    RepoGit,
    Review,
    ReviewComment,
    Status,
    tree_sha,
)
from fakegithub.objects import WEB, JSONDict, node_id, repo_api, simple_user, user_ref
from fakegithub.state import Issue, Repo, State

LARGE_FILE = 1024 * 1024  # GitHub's contents API answers files above 1 MB without content


def _email(login: str) -> str:
    return f"{login}@users.noreply.github.com"


def git_user(login: str, when: Any) -> JSONDict:
    return {"name": login, "email": _email(login), "date": iso(when)}


def verification() -> JSONDict:
    return {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
            "verified_at": None}


def commit(api: str, state: State, repo: Repo, git: RepoGit, c: Commit, *,
           files: list[JSONDict] | None = None) -> JSONDict:
    """The `commit` schema; `files` (diff entries) and `stats` only when given."""
    base = repo_api(api, repo)
    user = objects.simple_user(api, state.user(c.author))
    out: JSONDict = {
        "url": f"{base}/commits/{c.sha}",
        "sha": c.sha,
        "node_id": node_id("Commit", int(c.sha[:8], 16)),
        "html_url": f"{WEB}/{repo.full_name}/commit/{c.sha}",
        "comments_url": f"{base}/commits/{c.sha}/comments",
        "commit": {
            "url": f"{base}/git/commits/{c.sha}",
            "author": git_user(c.author, c.date),
            "committer": git_user(c.author, c.date),
            "message": c.message,
            "comment_count": 0,
            "tree": {"sha": tree_sha(c.tree), "url": f"{base}/git/trees/{tree_sha(c.tree)}"},
            "verification": verification(),
        },
        "author": user,
        "committer": user,
        "parents": [{"sha": p, "url": f"{base}/commits/{p}", "html_url": f"{WEB}/{repo.full_name}/commit/{p}"}
                    for p in c.parents],
    }
    if files is not None:
        additions = sum(f["additions"] for f in files)
        deletions = sum(f["deletions"] for f in files)
        out["stats"] = {"additions": additions, "deletions": deletions, "total": additions + deletions}
        out["files"] = files
    return out


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines()


def diff_entry(api: str, repo: Repo, git: RepoGit, path: str, old: str | None, new: str | None,
               ref: str) -> JSONDict:
    """One changed file (`diff-entry`), with a unified-diff `patch` of text files."""
    before, after = _lines(git.blobs.get(old or "")), _lines(git.blobs.get(new or ""))
    status = "added" if old is None else "removed" if new is None else "modified"
    kept = set(before) & set(after)
    removed = [line for line in before if line not in kept]
    added = [line for line in after if line not in kept]
    patch = "\n".join([f"@@ -1,{len(before)} +1,{len(after)} @@", *(f"-{x}" for x in removed),
                       *(f"+{x}" for x in added)])
    quoted = quote(path)
    return {
        "sha": new or old or "",
        "filename": path,
        "status": status,
        "additions": len(added),
        "deletions": len(removed),
        "changes": len(added) + len(removed),
        "blob_url": f"{WEB}/{repo.full_name}/blob/{ref}/{quoted}",
        "raw_url": f"{WEB}/{repo.full_name}/raw/{ref}/{quoted}",
        "contents_url": f"{repo_api(api, repo)}/contents/{quoted}?ref={ref}",
        "patch": patch,
    }


def diff_entries(api: str, repo: Repo, git: RepoGit, old: str | None, new: str) -> list[JSONDict]:
    return [diff_entry(api, repo, git, path, (git.commits[old].tree.get(path) if old else None), sha, new)
            for path, sha in sorted(git.changes(old, new).items())]


def short_branch(api: str, repo: Repo, git: RepoGit, name: str) -> JSONDict:
    sha = git.branches[name]
    return {"name": name, "commit": {"sha": sha, "url": f"{repo_api(api, repo)}/commits/{sha}"},
            "protected": name in git.protection}


def git_ref(api: str, repo: Repo, name: str, sha: str) -> JSONDict:
    base = repo_api(api, repo)
    return {"ref": f"refs/heads/{name}", "node_id": node_id("Ref", int(sha[:8], 16)),
            "url": f"{base}/git/refs/heads/{quote(name)}",
            "object": {"type": "commit", "sha": sha, "url": f"{base}/git/commits/{sha}"}}


def _entry_links(api: str, repo: Repo, path: str, sha: str, ref: str, kind: str) -> JSONDict:
    base = repo_api(api, repo)
    quoted = quote(path)
    git_url = f"{base}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
    html = f"{WEB}/{repo.full_name}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{quoted}"
    return {
        "url": f"{base}/contents/{quoted}?ref={ref}",
        "git_url": git_url,
        "html_url": html,
        "download_url": None if kind == "dir" else f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{quoted}",
        "_links": {"self": f"{base}/contents/{quoted}?ref={ref}", "git": git_url, "html": html},
    }


def content_file(api: str, repo: Repo, git: RepoGit, path: str, sha: str, ref: str) -> JSONDict:
    """`content-file`: base64 content in 60-character lines like GitHub's, none above 1 MB."""
    data = git.blobs[sha]
    if len(data) > LARGE_FILE:
        encoded, encoding = "", "none"
    else:
        flat = base64.b64encode(data).decode()
        encoded = "".join(flat[i:i + 60] + "\n" for i in range(0, len(flat), 60))
        encoding = "base64"
    return {"type": "file", "encoding": encoding, "size": len(data), "name": path.rsplit("/", 1)[-1],
            "path": path, "content": encoded, "sha": sha,
            **_entry_links(api, repo, path, sha, ref, "file")}


def directory_entries(api: str, repo: Repo, git: RepoGit, tree: dict[str, str], directory: str,
                      ref: str) -> list[JSONDict]:
    """`content-directory`: the entries right under `directory` ("" = the root), dirs first."""
    prefix = f"{directory}/" if directory else ""
    files: dict[str, str] = {}
    dirs: dict[str, dict[str, str]] = {}
    for path, sha in tree.items():
        if not path.startswith(prefix):
            continue
        head, _, rest = path[len(prefix):].partition("/")
        if rest:
            dirs.setdefault(head, {})[rest] = sha
        else:
            files[head] = sha
    out = []
    for name, inner in sorted(dirs.items()):
        sha = tree_sha(inner)
        out.append({"type": "dir", "size": 0, "name": name, "path": prefix + name, "sha": sha,
                    **_entry_links(api, repo, prefix + name, sha, ref, "dir")})
    for name, sha in sorted(files.items()):
        out.append({"type": "file", "size": len(git.blobs[sha]), "name": name, "path": prefix + name,
                    "sha": sha, **_entry_links(api, repo, prefix + name, sha, ref, "file")})
    return out


def file_commit(api: str, state: State, repo: Repo, git: RepoGit, path: str, c: Commit,
                branch: str) -> JSONDict:
    base = repo_api(api, repo)
    sha = c.tree.get(path)
    content = None
    if sha is not None:
        entry = {k: v for k, v in content_file(api, repo, git, path, sha, branch).items()
                 if k not in ("content", "encoding")}
        content = entry
    return {
        "content": content,
        "commit": {
            "sha": c.sha,
            "node_id": node_id("Commit", int(c.sha[:8], 16)),
            "url": f"{base}/git/commits/{c.sha}",
            "html_url": f"{WEB}/{repo.full_name}/commit/{c.sha}",
            "author": git_user(c.author, c.date),
            "committer": git_user(c.author, c.date),
            "message": c.message,
            "tree": {"url": f"{base}/git/trees/{tree_sha(c.tree)}", "sha": tree_sha(c.tree)},
            "parents": [{"url": f"{base}/git/commits/{p}", "html_url": f"{WEB}/{repo.full_name}/commit/{p}",
                         "sha": p} for p in c.parents],
            "verification": verification(),
        },
    }


def combined_status(api: str, state: State, repo: Repo, sha: str, statuses: list[Status],
                    viewer: str) -> JSONDict:
    base = repo_api(api, repo)
    latest: dict[str, Status] = {}
    for s in statuses:  # the newest status of each context counts
        latest[s.context] = s
    states = {s.state for s in latest.values()}
    overall = ("failure" if states & {"failure", "error"} else
               "pending" if "pending" in states or not states else "success")
    rendered = [{
        "description": s.description, "id": s.id, "node_id": node_id("StatusContext", s.id),
        "state": s.state, "context": s.context, "target_url": None, "avatar_url": None,
        "url": f"{base}/statuses/{sha}", "created_at": iso(s.created_at), "updated_at": iso(s.created_at),
    } for s in latest.values()]
    return {"state": overall, "statuses": rendered, "sha": sha, "total_count": len(rendered),
            "repository": objects.full_repository(api, state, repo, viewer),
            "commit_url": f"{base}/commits/{sha}", "url": f"{base}/commits/{sha}/status"}


def check_run(api: str, repo: Repo, sha: str, run: CheckRun) -> JSONDict:
    base = repo_api(api, repo)
    return {
        "id": run.id, "head_sha": sha, "node_id": node_id("CheckRun", run.id), "external_id": None,
        "url": f"{base}/check-runs/{run.id}", "html_url": f"{WEB}/{repo.full_name}/runs/{run.id}",
        "details_url": None, "status": run.status, "conclusion": run.conclusion,
        "started_at": iso(run.started_at),
        "completed_at": iso(run.completed_at) if run.completed_at else None,
        "output": {"title": None, "summary": None, "text": None, "annotations_count": 0,
                   "annotations_url": f"{base}/check-runs/{run.id}/annotations"},
        "name": run.name, "check_suite": {"id": run.id}, "app": None, "pull_requests": [],
    }


# pull requests --------------------------------------------------------------------------------


def _branch_end(api: str, state: State, repo: Repo, name: str, sha: str, viewer: str) -> JSONDict:
    owner = state.user(repo.owner)
    return {"label": f"{repo.owner}:{name}", "ref": name, "sha": sha,
            "user": simple_user(api, owner), "repo": objects.full_repository(api, state, repo, viewer)}


def _team(api: str, repo: Repo, slug: str) -> JSONDict:
    ident = sum(ord(c) for c in slug) + 1000
    org = f"{api}/orgs/{repo.owner}"
    return {"id": ident, "node_id": node_id("Team", ident), "url": f"{org}/teams/{slug}",
            "members_url": f"{org}/teams/{slug}/members{{/member}}", "name": slug,
            "description": None, "permission": "pull", "privacy": "closed",
            "html_url": f"{WEB}/orgs/{repo.owner}/teams/{slug}",
            "repositories_url": f"{org}/teams/{slug}/repos", "slug": slug, "type": "organization", "parent": None}


def pull_request(api: str, state: State, repo: Repo, git: RepoGit, item: Issue, pull: Pull,
                 viewer: str, *, full: bool) -> JSONDict:
    """`pull-request` (full: mergeability and counts) or `pull-request-simple`."""
    base = repo_api(api, repo)
    url = f"{base}/pulls/{item.number}"
    web = f"{WEB}/{repo.full_name}/pull/{item.number}"
    issue = objects.issue(api, state, repo, item)
    base_sha = git.branches.get(pull.base, pull.head_sha)
    out: JSONDict = {
        "url": url, "id": item.id, "node_id": node_id("PullRequest", item.id), "html_url": web,
        "diff_url": f"{web}.diff", "patch_url": f"{web}.patch", "issue_url": f"{base}/issues/{item.number}",
        "commits_url": f"{url}/commits", "review_comments_url": f"{url}/comments",
        "review_comment_url": f"{base}/pulls/comments{{/number}}",
        "comments_url": f"{base}/issues/{item.number}/comments",
        "statuses_url": f"{base}/statuses/{pull.head_sha}",
        "number": item.number, "state": item.state, "locked": item.locked, "title": item.title,
        "user": issue["user"], "body": item.body, "labels": issue["labels"],
        "milestone": issue["milestone"], "active_lock_reason": issue["active_lock_reason"],
        "created_at": issue["created_at"], "updated_at": issue["updated_at"],
        "closed_at": issue["closed_at"],
        "merged_at": iso(item.merged_at) if item.merged_at else None,
        "merge_commit_sha": pull.merge_commit_sha,
        "assignee": issue["assignee"], "assignees": issue["assignees"],
        "requested_reviewers": [simple_user(api, state.user(u)) for u in pull.requested_users],
        "requested_teams": [_team(api, repo, t) for t in pull.requested_teams],
        "head": _branch_end(api, state, repo, pull.head, pull.head_sha, viewer),
        "base": _branch_end(api, state, repo, pull.base, base_sha, viewer),
        "_links": {k: {"href": v} for k, v in {
            "self": url, "html": web, "issue": f"{base}/issues/{item.number}",
            "comments": f"{base}/issues/{item.number}/comments", "review_comments": f"{url}/comments",
            "review_comment": f"{base}/pulls/comments{{/number}}", "commits": f"{url}/commits",
            "statuses": f"{base}/statuses/{pull.head_sha}"}.items()},
        "author_association": issue["author_association"], "auto_merge": None, "draft": item.draft,
    }
    if full:
        out.update(merge_facts(api, state, repo, git, item, pull))
    return out


def merge_facts(api: str, state: State, repo: Repo, git: RepoGit, item: Issue, pull: Pull) -> JSONDict:
    """The fields only a single pull request carries: merge state, counts."""
    merged = item.merged_at is not None
    base_sha = git.branches.get(pull.base)
    mergeable: bool | None = None
    mergeable_state = "unknown"
    commits = files = additions = deletions = 0
    if base_sha is not None:
        root = git.merge_base(pull.head_sha, base_sha)
        own = [c for c in git.ancestors(pull.head_sha) if root is None or c not in git.ancestors(root)]
        commits = len(own)
        entries = diff_entries(api, repo, git, root, pull.head_sha)
        files = len(entries)
        additions = sum(e["additions"] for e in entries)
        deletions = sum(e["deletions"] for e in entries)
        if item.state == "open":
            conflicts = git.conflicts(pull.head_sha, base_sha)
            mergeable = not conflicts
            mergeable_state = ("dirty" if conflicts else "draft" if item.draft else
                               "blocked" if merge_blockers(git, pull, state, repo) else
                               "behind" if git.behind(pull.head_sha, base_sha) else "clean")
    return {
        "merged": merged, "mergeable": mergeable, "rebaseable": mergeable,
        "mergeable_state": mergeable_state,
        "merged_by": user_ref(api, state, pull.merged_by),
        "comments": len(item.comments), "review_comments": len(pull.review_comments),
        "maintainer_can_modify": pull.maintainer_can_modify,
        "commits": commits, "additions": additions, "deletions": deletions, "changed_files": files,
    }


def merge_blockers(git: RepoGit, pull: Pull, state: State, repo: Repo) -> list[str]:
    """GitHub's 405 messages for what the base branch's protection still requires."""
    rules = git.protection.get(pull.base)
    if rules is None:
        return []
    out: list[str] = []
    for context in rules.required_checks:
        result = check_result(git, pull.head_sha, context)
        if result != "success":
            out.append(f'Required status check "{context}" is {result}.')
    if rules.required_reviews:
        latest: dict[str, str] = {}
        for review in pull.reviews:
            if review.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
                latest[review.author.casefold()] = review.state
        approvals = sum(1 for login, verdict in latest.items()
                        if verdict == "APPROVED" and state.can_push(repo, login))
        if approvals < rules.required_reviews:
            n = rules.required_reviews
            out.append(f"At least {n} approving review{' is' if n == 1 else 's are'} required by "
                       "reviewers with write access.")
    return out


def check_result(git: RepoGit, sha: str, context: str) -> str:
    """expected (nothing reported), in progress, failing or success, from statuses and check runs."""
    runs = [r for r in git.check_runs.get(sha, []) if r.name == context]
    statuses = [s for s in git.statuses.get(sha, []) if s.context == context]
    if runs:
        run = runs[-1]
        if run.status != "completed":
            return "in progress"
        return "success" if run.conclusion in ("success", "neutral", "skipped") else "failing"
    if statuses:
        latest = statuses[-1].state
        return {"success": "success", "pending": "in progress"}.get(latest, "failing")
    return "expected"


def review(api: str, state: State, repo: Repo, number: int, r: Review) -> JSONDict:
    base = repo_api(api, repo)
    web = f"{WEB}/{repo.full_name}/pull/{number}#pullrequestreview-{r.id}"
    out: JSONDict = {
        "id": r.id, "node_id": node_id("PullRequestReview", r.id),
        "user": user_ref(api, state, r.author), "body": r.body, "state": r.state, "html_url": web,
        "pull_request_url": f"{base}/pulls/{number}",
        "_links": {"html": {"href": web}, "pull_request": {"href": f"{base}/pulls/{number}"}},
        "commit_id": r.commit_id, "author_association": objects.author_association(state, repo, r.author),
    }
    if r.submitted_at is not None:
        out["submitted_at"] = iso(r.submitted_at)
    return out


def review_comment(api: str, state: State, repo: Repo, number: int, c: ReviewComment) -> JSONDict:
    base = repo_api(api, repo)
    url = f"{base}/pulls/comments/{c.id}"
    web = f"{WEB}/{repo.full_name}/pull/{number}#discussion_r{c.id}"
    return {
        "url": url, "pull_request_review_id": c.review_id, "id": c.id,
        "node_id": node_id("PullRequestReviewComment", c.id), "diff_hunk": c.diff_hunk, "path": c.path,
        "commit_id": c.commit_id, "original_commit_id": c.commit_id,
        "user": user_ref(api, state, c.author), "body": c.body, "created_at": iso(c.created_at),
        "updated_at": iso(c.created_at), "html_url": web, "pull_request_url": f"{base}/pulls/{number}",
        "author_association": objects.author_association(state, repo, c.author),
        "_links": {"self": {"href": url}, "html": {"href": web},
                   "pull_request": {"href": f"{base}/pulls/{number}"}},
        "line": c.line, "original_line": c.line, "side": c.side, "subject_type": "line",
    }


def code_hit(api: str, state: State, repo: Repo, git: RepoGit, path: str, sha: str, viewer: str) -> JSONDict:
    """`code-search-result-item` for a file on the default branch."""
    base = repo_api(api, repo)
    ref = git.branches[git.default_branch]
    return {"name": path.rsplit("/", 1)[-1], "path": path, "sha": sha,
            "url": f"{base}/contents/{quote(path)}?ref={ref}", "git_url": f"{base}/git/blobs/{sha}",
            "html_url": f"{WEB}/{repo.full_name}/blob/{ref}/{quote(path)}",
            "repository": objects.full_repository(api, state, repo, viewer), "score": 1.0}
