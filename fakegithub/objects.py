"""Render state as the spec's JSON objects (simple-user, label, milestone, issue, issue-comment, ...).

`api` is the fake's base URL as the client sees it (e.g. `http://127.0.0.1:8765`); web links
point at https://github.com like the real ones do.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from fakegithub.clock import iso
from fakegithub.state import Comment, Issue, Label, Milestone, Repo, State, User

WEB = "https://github.com"
JSONDict = dict[str, Any]


def node_id(kind: str, ident: int) -> str:
    """GitHub's legacy global node id: base64 of `<len>:<Type><id>`."""
    return base64.b64encode(f"0{len(kind)}:{kind}{ident}".encode()).decode()


def repo_api(api: str, repo: Repo) -> str:
    return f"{api}/repos/{repo.owner}/{repo.name}"


def simple_user(api: str, user: User) -> JSONDict:
    base = f"{api}/users/{user.login}"
    return {
        "login": user.login,
        "id": user.id,
        "node_id": node_id(user.type if user.type != "Bot" else "Bot", user.id),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user.id}?v=4",
        "gravatar_id": "",
        "url": base,
        "html_url": f"{WEB}/{user.login}",
        "followers_url": f"{base}/followers",
        "following_url": f"{base}/following{{/other_user}}",
        "gists_url": f"{base}/gists{{/gist_id}}",
        "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{base}/subscriptions",
        "organizations_url": f"{base}/orgs",
        "repos_url": f"{base}/repos",
        "events_url": f"{base}/events{{/privacy}}",
        "received_events_url": f"{base}/received_events",
        "type": user.type,
        "user_view_type": "public",
        "site_admin": False,
    }


def user_ref(api: str, state: State, login: str | None) -> JSONDict | None:
    return None if login is None else simple_user(api, state.user(login))


def private_user(api: str, state: State, user: User, private_repos: int) -> JSONDict:
    """`users/get-authenticated` (the private-user variant)."""
    out = simple_user(api, user)
    created = iso(user.created_at or state.now())
    out.update(
        {
            "user_view_type": "private",
            "name": user.name,
            "company": None,
            "blog": "",
            "location": None,
            "email": None,
            "notification_email": None,
            "hireable": None,
            "bio": None,
            "twitter_username": None,
            "public_repos": sum(1 for r in state.repos.values()
                                if r.owner.casefold() == user.login.casefold() and not r.private),
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": created,
            "updated_at": created,
            "private_gists": 0,
            "total_private_repos": private_repos,
            "owned_private_repos": private_repos,
            "disk_usage": 0,
            "collaborators": 0,
            "two_factor_authentication": True,
            "plan": {"name": "pro", "space": 976562499, "collaborators": 0, "private_repos": 9999},
        }
    )
    return out


def label(api: str, repo: Repo, lb: Label) -> JSONDict:
    return {
        "id": lb.id,
        "node_id": node_id("Label", lb.id),
        "url": f"{repo_api(api, repo)}/labels/{quote(lb.name, safe='')}",
        "name": lb.name,
        "color": lb.color,
        "default": lb.default,
        "description": lb.description,
    }


def milestone(api: str, state: State, repo: Repo, ms: Milestone) -> JSONDict:
    issues = repo.milestone_issues(ms.number)
    url = f"{repo_api(api, repo)}/milestones/{ms.number}"
    return {
        "url": url,
        "html_url": f"{WEB}/{repo.full_name}/milestone/{ms.number}",
        "labels_url": f"{url}/labels",
        "id": ms.id,
        "node_id": node_id("Milestone", ms.id),
        "number": ms.number,
        "state": ms.state,
        "title": ms.title,
        "description": ms.description,
        "creator": user_ref(api, state, ms.creator),
        "open_issues": sum(1 for i in issues if i.state == "open"),
        "closed_issues": sum(1 for i in issues if i.state == "closed"),
        "created_at": iso(ms.created_at),
        "updated_at": iso(ms.updated_at),
        "closed_at": iso(ms.closed_at) if ms.closed_at else None,
        "due_on": iso(ms.due_on) if ms.due_on else None,
    }


def author_association(state: State, repo: Repo, login: str) -> str:
    if login.casefold() == repo.owner.casefold():
        return "OWNER"
    if state.is_collaborator(repo, login):
        owner = state.find_user(repo.owner)
        return "MEMBER" if owner is not None and owner.type == "Organization" else "COLLABORATOR"
    return "NONE"


def reactions(url: str) -> JSONDict:
    counts = dict.fromkeys(("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket"), 0)
    return {"url": f"{url}/reactions", "total_count": 0, **counts}


def issue(api: str, state: State, repo: Repo, item: Issue) -> JSONDict:
    """The `issue` schema (pull requests included, carrying `pull_request`)."""
    url = f"{repo_api(api, repo)}/issues/{item.number}"
    kind = "pull" if item.is_pull_request else "issues"
    ms = repo.milestones.get(item.milestone) if item.milestone is not None else None
    out: JSONDict = {
        "id": item.id,
        "node_id": node_id("PullRequest" if item.is_pull_request else "Issue", item.id),
        "url": url,
        "repository_url": repo_api(api, repo),
        "labels_url": f"{url}/labels{{/name}}",
        "comments_url": f"{url}/comments",
        "events_url": f"{url}/events",
        "html_url": f"{WEB}/{repo.full_name}/{kind}/{item.number}",
        "number": item.number,
        "state": item.state,
        "title": item.title,
        "body": item.body,
        "user": user_ref(api, state, item.author),
        "labels": [label(api, repo, repo.labels[i]) for i in item.label_ids if i in repo.labels],
        "assignee": user_ref(api, state, item.assignees[0]) if item.assignees else None,
        "assignees": [simple_user(api, state.user(a)) for a in item.assignees],
        "milestone": milestone(api, state, repo, ms) if ms else None,
        "locked": item.locked,
        "active_lock_reason": item.lock_reason if item.locked else None,
        "comments": len(item.comments),
        "closed_at": iso(item.closed_at) if item.closed_at else None,
        "created_at": iso(item.created_at),
        "updated_at": iso(item.updated_at),
        "closed_by": user_ref(api, state, item.closed_by) if item.state == "closed" else None,
        "author_association": author_association(state, repo, item.author),
        "state_reason": item.state_reason,
        "timeline_url": f"{url}/timeline",
        "performed_via_github_app": None,
        "reactions": reactions(url),
    }
    if item.is_pull_request:
        pulls = f"{repo_api(api, repo)}/pulls/{item.number}"
        web = f"{WEB}/{repo.full_name}/pull/{item.number}"
        out["draft"] = item.draft
        out["pull_request"] = {
            "url": pulls,
            "html_url": web,
            "diff_url": f"{web}.diff",
            "patch_url": f"{web}.patch",
            "merged_at": iso(item.merged_at) if item.merged_at else None,
        }
    else:
        out["sub_issues_summary"] = {"total": 0, "completed": 0, "percent_completed": 0}
    return out


def search_item(api: str, state: State, repo: Repo, item: Issue, score: float = 1.0) -> JSONDict:
    """`issue-search-result-item`: like `issue`, plus `score`; `body` is omitted when null
    (the schema types it as a non-nullable string) and `closed_by` is absent (not in the schema)."""
    out = issue(api, state, repo, item)
    out.pop("closed_by", None)
    out.pop("sub_issues_summary", None)
    if out["body"] is None:
        del out["body"]
    out["score"] = score
    return out


def comment(api: str, state: State, repo: Repo, item: Comment) -> JSONDict:
    base = repo_api(api, repo)
    kind = "issues"
    parent = repo.issues.get(item.issue_number)
    if parent is not None and parent.is_pull_request:
        kind = "pull"
    return {
        "id": item.id,
        "node_id": node_id("IssueComment", item.id),
        "url": f"{base}/issues/comments/{item.id}",
        "html_url": f"{WEB}/{repo.full_name}/{kind}/{item.issue_number}#issuecomment-{item.id}",
        "body": item.body,
        "user": user_ref(api, state, item.author),
        "created_at": iso(item.created_at),
        "updated_at": iso(item.updated_at),
        "issue_url": f"{base}/issues/{item.issue_number}",
        "author_association": author_association(state, repo, item.author),
        "performed_via_github_app": None,
        "reactions": reactions(f"{base}/issues/comments/{item.id}"),
    }


def full_repository(api: str, state: State, repo: Repo, viewer: str | None) -> JSONDict:
    """`full-repository` (minimal but complete)."""
    base = repo_api(api, repo)
    web = f"{WEB}/{repo.full_name}"
    owner = state.user(repo.owner)
    open_count = sum(1 for i in repo.live_issues() if i.state == "open")
    push = viewer is not None and state.can_push(repo, viewer)
    admin = viewer is not None and viewer.casefold() == repo.owner.casefold()
    out: JSONDict = {
        "id": repo.id,
        "node_id": node_id("Repository", repo.id),
        "name": repo.name,
        "full_name": repo.full_name,
        "owner": simple_user(api, owner),
        "private": repo.private,
        "html_url": web,
        "description": repo.description,
        "fork": False,
        "url": base,
        "archive_url": f"{base}/{{archive_format}}{{/ref}}",
        "assignees_url": f"{base}/assignees{{/user}}",
        "blobs_url": f"{base}/git/blobs{{/sha}}",
        "branches_url": f"{base}/branches{{/branch}}",
        "collaborators_url": f"{base}/collaborators{{/collaborator}}",
        "comments_url": f"{base}/comments{{/number}}",
        "commits_url": f"{base}/commits{{/sha}}",
        "compare_url": f"{base}/compare/{{base}}...{{head}}",
        "contents_url": f"{base}/contents/{{+path}}",
        "contributors_url": f"{base}/contributors",
        "deployments_url": f"{base}/deployments",
        "downloads_url": f"{base}/downloads",
        "events_url": f"{base}/events",
        "forks_url": f"{base}/forks",
        "git_commits_url": f"{base}/git/commits{{/sha}}",
        "git_refs_url": f"{base}/git/refs{{/sha}}",
        "git_tags_url": f"{base}/git/tags{{/sha}}",
        "git_url": f"git://github.com/{repo.full_name}.git",
        "issue_comment_url": f"{base}/issues/comments{{/number}}",
        "issue_events_url": f"{base}/issues/events{{/number}}",
        "issues_url": f"{base}/issues{{/number}}",
        "keys_url": f"{base}/keys{{/key_id}}",
        "labels_url": f"{base}/labels{{/name}}",
        "languages_url": f"{base}/languages",
        "merges_url": f"{base}/merges",
        "milestones_url": f"{base}/milestones{{/number}}",
        "notifications_url": f"{base}/notifications{{?since,all,participating}}",
        "pulls_url": f"{base}/pulls{{/number}}",
        "releases_url": f"{base}/releases{{/id}}",
        "ssh_url": f"git@github.com:{repo.full_name}.git",
        "stargazers_url": f"{base}/stargazers",
        "statuses_url": f"{base}/statuses/{{sha}}",
        "subscribers_url": f"{base}/subscribers",
        "subscription_url": f"{base}/subscription",
        "tags_url": f"{base}/tags",
        "teams_url": f"{base}/teams",
        "trees_url": f"{base}/git/trees{{/sha}}",
        "clone_url": f"{web}.git",
        "mirror_url": None,
        "hooks_url": f"{base}/hooks",
        "svn_url": web,
        "homepage": None,
        "language": None,
        "forks_count": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "size": 0,
        "default_branch": "main",
        "open_issues_count": open_count,
        "is_template": False,
        "topics": [],
        "has_issues": True,
        "has_projects": True,
        "has_wiki": True,
        "has_pages": False,
        "has_downloads": True,
        "has_discussions": False,
        "archived": False,
        "disabled": False,
        "visibility": "private" if repo.private else "public",
        "pushed_at": iso(repo.updated_at),
        "created_at": iso(repo.created_at),
        "updated_at": iso(repo.updated_at),
        "permissions": {"admin": admin, "maintain": admin, "push": push, "triage": push, "pull": True},
        "allow_forking": True,
        "web_commit_signoff_required": False,
        "subscribers_count": 0,
        "network_count": 0,
        "license": None,
        "forks": 0,
        "open_issues": open_count,
        "watchers": 0,
    }
    if owner.type == "Organization":
        out["organization"] = simple_user(api, owner)
    return out
