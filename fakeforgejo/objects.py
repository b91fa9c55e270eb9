"""Forgejo's JSON for the fake's objects (`services/convert` of Forgejo v11.0.1), and paging.

Fields Forgejo sends as `null` although the description types them non-null (an open issue's
`closed_at`, an issue's `milestone`, `assignee`, `assignees` when none, `due_date`) are left out,
so every answer validates against the pinned description; `pull_request` is sent as Forgejo sends
it, `null` for an issue, which the issues file's spec patch allows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

from fakeforgejo.state import Comment, Issue, Label, Milestone, Org, Repo, State, User
from fakegithub.clock import iso

T = TypeVar("T")
DEFAULT_PAGING_NUM = 30  # [api] DEFAULT_PAGING_NUM
MAX_RESPONSE_ITEMS = 50  # [api] MAX_RESPONSE_ITEMS


def user(api: str, u: User) -> dict[str, Any]:
    web = api.removesuffix("/api/v1")
    return {"id": u.id, "login": u.login, "login_name": "", "full_name": u.full_name,
            "email": f"{u.login.lower()}@noreply.forgejo.test", "avatar_url": f"{web}/avatars/{u.id}",
            "html_url": f"{web}/{u.login}", "language": "", "is_admin": False, "active": True,
            "prohibit_login": False, "restricted": False, "visibility": "public",
            "created": iso(u.created) if u.created else "2024-01-01T00:00:00Z"}


def org(api: str, o: Org) -> dict[str, Any]:
    web = api.removesuffix("/api/v1")
    return {"id": o.id, "name": o.name, "username": o.name, "full_name": "", "email": "",
            "avatar_url": f"{web}/avatars/o{o.id}", "description": "", "website": "",
            "location": "", "visibility": o.visibility, "repo_admin_change_team_access": True}


def label(api: str, lb: Label, state: State) -> dict[str, Any]:
    if lb.repo is not None:
        repo = state.repos[lb.repo]
        url = f"{api}/repos/{repo.owner}/{repo.name}/labels/{lb.id}"
    else:
        owner = state.orgs[lb.org or ""]
        url = f"{api}/orgs/{owner.name}/labels/{lb.id}"
    return {"id": lb.id, "name": lb.name, "exclusive": lb.exclusive, "is_archived": lb.is_archived,
            "color": lb.color.lstrip("#"), "description": lb.description, "url": url}


def repository(api: str, r: Repo, state: State, login: str) -> dict[str, Any]:
    web = api.removesuffix("/api/v1")
    mode = state.access_mode(r, login)
    owner = state.user(r.owner)
    return {
        "id": r.id, "name": r.name, "full_name": r.full_name, "owner": user(api, owner),
        "description": "", "empty": False, "private": r.private, "fork": False, "template": False,
        "mirror": False, "size": 0, "html_url": f"{web}/{r.full_name}",
        "url": f"{api}/repos/{r.full_name}", "clone_url": f"{web}/{r.full_name}.git",
        "default_branch": "main", "has_issues": True, "has_pull_requests": True,
        "archived": False, "created_at": iso(r.created_at), "updated_at": iso(r.created_at),
        "open_issues_count": sum(1 for i in r.issues.values() if not i.is_pull and i.state == "open"),
        # `ToRepo`: admin from the admin mode up, push from write up, pull from read up
        "permissions": {"admin": mode in ("admin", "owner"), "push": mode in ("write", "admin", "owner"),
                        "pull": mode != "none"},
    }


def permission(api: str, u: User, mode: str) -> dict[str, Any]:
    """`ToUserAndPermission`: the access mode's name as both permission and role."""
    return {"permission": mode, "role_name": mode, "user": user(api, u)}


def issue(api: str, r: Repo, i: Issue, state: State) -> dict[str, Any]:
    """`ToAPIIssue`."""
    web = api.removesuffix("/api/v1")
    kind = "pulls" if i.is_pull else "issues"
    out: dict[str, Any] = {
        "id": i.id, "number": i.number, "title": i.title, "body": i.body, "ref": "",
        "url": f"{api}/repos/{r.full_name}/issues/{i.number}",
        "html_url": f"{web}/{r.full_name}/{kind}/{i.number}",
        "user": user(api, state.user(i.author)), "original_author": "", "original_author_id": 0,
        "labels": [label(api, lb, state) for lb in state.issue_labels(i)], "assets": [],
        "state": i.state, "is_locked": i.is_locked, "comments": len(i.comments),
        "created_at": iso(i.created_at), "updated_at": iso(i.updated_at), "pin_order": 0,
        "repository": {"id": r.id, "name": r.name, "owner": r.owner, "full_name": r.full_name},
        "pull_request": None,
    }
    if i.closed_at is not None:
        out["closed_at"] = iso(i.closed_at)
    found = r.milestones.get(i.milestone_id)
    if found is not None:
        out["milestone"] = milestone(r, found)
    if i.assignees:
        out["assignees"] = [user(api, state.user(login)) for login in i.assignees]
        out["assignee"] = out["assignees"][0]
    if i.is_pull:
        out["pull_request"] = {"merged": False, "merged_at": None, "draft": False,
                               "html_url": f"{web}/{r.full_name}/pulls/{i.number}"}
    return out


def milestone(r: Repo, m: Milestone) -> dict[str, Any]:
    """`ToAPIMilestone`: the counts are of issues and pull requests."""
    carriers = [i for i in r.issues.values() if i.milestone_id == m.id]
    out: dict[str, Any] = {
        "id": m.id, "title": m.title, "description": m.description, "state": m.state,
        "open_issues": sum(1 for i in carriers if i.state == "open"),
        "closed_issues": sum(1 for i in carriers if i.state == "closed"),
        "created_at": iso(m.created_at), "updated_at": iso(m.updated_at),
    }
    if m.closed_at is not None:
        out["closed_at"] = iso(m.closed_at)
    return out


def comment(api: str, r: Repo, i: Issue, c: Comment, state: State) -> dict[str, Any]:
    """`ToAPIComment`: its URLs are the issue's web page (Forgejo gives no API URL)."""
    web = api.removesuffix("/api/v1")
    page = f"{web}/{r.full_name}/{'pulls' if i.is_pull else 'issues'}/{i.number}"
    return {"id": c.id, "html_url": f"{page}#issuecomment-{c.id}",
            "pull_request_url": page if i.is_pull else "", "issue_url": "" if i.is_pull else page,
            "user": user(api, state.user(c.author)), "original_author": "", "original_author_id": 0,
            "body": c.body, "assets": [], "created_at": iso(c.created_at), "updated_at": iso(c.updated_at)}


def page_size(query: Mapping[str, str]) -> tuple[int, int]:
    """(page, limit) as `utils.GetListOptions`: limit 0 or absent -> 30, above 50 -> 50."""
    def number(name: str) -> int:
        try:
            return int(query.get(name, "0"))
        except ValueError:
            return 0

    limit = number("limit")
    limit = DEFAULT_PAGING_NUM if limit <= 0 else min(limit, MAX_RESPONSE_ITEMS)
    return max(1, number("page")), limit


def paginate(items: Sequence[T], query: Mapping[str, str]) -> list[T]:
    page, limit = page_size(query)
    return list(items[(page - 1) * limit: page * limit])


def link_header(url: str, query: Mapping[str, str], total: int) -> str | None:
    """`ctx.SetLinkHeader`: next/last/first/prev links in Forgejo's order, or None for one page."""
    page, limit = page_size(query)
    last = max(1, math.ceil(total / limit))

    def at(n: int) -> str:
        return f"<{url}?{urlencode({**query, 'page': str(n), 'limit': str(limit)})}>"

    parts = []
    if page < last:
        parts += [f'{at(page + 1)}; rel="next"', f'{at(last)}; rel="last"']
    if page > 1:
        parts += [f'{at(1)}; rel="first"', f'{at(page - 1)}; rel="prev"']
    return ", ".join(parts) or None
