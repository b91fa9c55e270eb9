"""One function per implemented operationId: GitHub's semantics on top of `State`.

Handlers run under the fake's lock, after auth, rate limiting, scope checks and spec validation of
the request, so they may trust the request's shape (not its meaning).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fakegithub import objects, search
from fakegithub.clock import parse_time
from fakegithub.paging import page_args, paginate
from fakegithub.state import (
    ApiError,
    Issue,
    Label,
    Repo,
    State,
    Token,
    invalid,
    label_key,
    not_found,
)

SEARCH_CAP = 1000
HEX_COLOR = re.compile(r"^[0-9a-fA-F]{6}$")


@dataclass
class Ctx:
    state: State
    operation: str
    params: dict[str, str]  # path parameters, percent-decoded
    query: dict[str, str]
    body: Any
    token: Token
    api: str  # base URL as the client addressed it
    path: str  # request path (for Link headers)
    docs: str

    @property
    def actor(self) -> str:
        return self.token.login


@dataclass
class Reply:
    status: int
    body: Any = None  # JSON value, or None for no body
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Ctx], Reply]
HANDLERS: dict[str, Handler] = {}


def handles(operation: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[operation] = fn
        return fn

    return register


# lookups and permission checks ------------------------------------------------------------------


def _repo(ctx: Ctx) -> Repo:
    repo = ctx.state.find_repo(ctx.params["owner"], ctx.params["repo"])
    if repo is None or not ctx.state.can_see(repo, ctx.actor):
        raise not_found(ctx.docs)
    if repo.private and not (ctx.token.installation or "repo" in ctx.token.scopes):
        raise not_found(ctx.docs)
    return repo


def _issue(ctx: Ctx, repo: Repo) -> Issue:
    item = repo.issues.get(int(ctx.params["issue_number"]))
    if item is None:
        raise not_found(ctx.docs)
    if item.deleted:
        raise ApiError(410, "This issue was deleted", docs=ctx.docs)
    return item


def _can_push(ctx: Ctx, repo: Repo) -> bool:
    return ctx.state.can_push(repo, ctx.actor)


def _require_push(ctx: Ctx, repo: Repo) -> None:
    if not _can_push(ctx, repo):
        raise ApiError(403, "Must have push access to this repository.", docs=ctx.docs)


def _body(ctx: Ctx) -> dict[str, Any]:
    return ctx.body if isinstance(ctx.body, dict) else {}


def _page(ctx: Ctx, items: list[Any], *, cap: int | None = None) -> tuple[list[Any], dict[str, str]]:
    chunk, link = paginate(items, ctx.query, ctx.api + ctx.path, cap=cap)
    return chunk, ({"link": link} if link else {})


def _label_names(raw: Iterable[Any]) -> list[str]:
    names: list[str] = []
    for entry in raw:
        name = entry.get("name") if isinstance(entry, dict) else entry
        if isinstance(name, (str, int)) and str(name).strip():
            text = str(name).strip()
            if label_key(text) not in {label_key(n) for n in names}:
                names.append(text)
    return names


def _apply_labels(state: State, repo: Repo, names: Iterable[str]) -> list[int]:
    """Label ids for the names, creating unknown labels like GitHub does."""
    return [state.label(repo, name).id for name in names]


def _check_assignees(ctx: Ctx, repo: Repo, logins: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for raw in logins:
        login = raw.get("login") if isinstance(raw, dict) else raw
        if not isinstance(login, str) or not login:
            continue
        user = ctx.state.find_user(login)
        if user is None or not ctx.state.is_collaborator(repo, login):
            raise invalid("Issue", "assignees", login, ctx.docs)
        if user.login.casefold() not in {a.casefold() for a in out}:
            out.append(user.login)
    return out


def _milestone_number(ctx: Ctx, repo: Repo, value: Any) -> int | None:
    if value is None:
        return None
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number is None or number not in repo.milestones:
        raise invalid("Issue", "milestone", value if isinstance(value, (int, str)) else None, ctx.docs)
    return number


def _render_issue(ctx: Ctx, repo: Repo, item: Issue) -> dict[str, Any]:
    return objects.issue(ctx.api, ctx.state, repo, item)


def _since(ctx: Ctx) -> datetime | None:
    raw = ctx.query.get("since")
    if not raw:
        return None
    try:
        return parse_time(raw)
    except ValueError as exc:
        raise ApiError(422, "Invalid value for `since`", docs=ctx.docs) from exc


# repositories and users ------------------------------------------------------------------------


@handles("repos/get")
def get_repo(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return Reply(200, objects.full_repository(ctx.api, ctx.state, repo, ctx.actor))


@handles("users/get-authenticated")
def get_authenticated(ctx: Ctx) -> Reply:
    if ctx.token.installation:  # GitHub Apps act for an installation, not a user
        raise ApiError(403, "Resource not accessible by integration", docs=ctx.docs)
    user = ctx.state.user(ctx.actor)
    private = sum(1 for r in ctx.state.repos.values()
                  if r.private and r.owner.casefold() == user.login.casefold())
    return Reply(200, objects.private_user(ctx.api, ctx.state, user, private))


@handles("repos/list-for-authenticated-user")
def list_my_repos(ctx: Ctx) -> Reply:
    """Repositories the token's user owns or collaborates on, by full name."""
    mine = sorted(
        (r for r in ctx.state.repos.values()
         if r.owner.casefold() == (ctx.actor or "").casefold()
         or (ctx.actor is not None and ctx.state.is_collaborator(r, ctx.actor))),
        key=lambda r: r.full_name.casefold(),
    )
    chunk, headers = _page(ctx, mine)
    rendered = []
    for repo in chunk:
        body = objects.full_repository(ctx.api, ctx.state, repo, ctx.actor)
        body.setdefault("has_downloads", True)
        rendered.append(body)
    return Reply(200, rendered, headers)


# issues ----------------------------------------------------------------------------------------


@handles("issues/list-for-repo")
def list_issues(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    q = ctx.query
    state_filter = q.get("state", "open")
    items = [i for i in repo.live_issues() if state_filter == "all" or i.state == state_filter]
    if labels := q.get("labels"):
        wanted = {label_key(n.strip()) for n in labels.split(",") if n.strip()}
        items = [i for i in items if wanted <= {label_key(n) for n in repo.label_names(i)}]
    if (assignee := q.get("assignee")) is not None:
        if assignee == "none":
            items = [i for i in items if not i.assignees]
        elif assignee == "*":
            items = [i for i in items if i.assignees]
        else:
            items = [i for i in items if assignee.casefold() in {a.casefold() for a in i.assignees}]
    if (creator := q.get("creator")) is not None:
        items = [i for i in items if i.author.casefold() == creator.casefold()]
    if mentioned := q.get("mentioned"):
        pattern = re.compile(rf"@{re.escape(mentioned)}\b", re.IGNORECASE)
        items = [i for i in items
                 if any(pattern.search(t) for t in [i.body or "", *(c.body for c in i.comments)])]
    if (milestone := q.get("milestone")) is not None:
        if milestone == "none":
            items = [i for i in items if i.milestone is None]
        elif milestone == "*":
            items = [i for i in items if i.milestone is not None]
        elif milestone.isdigit():
            items = [i for i in items if i.milestone == int(milestone)]
        else:
            items = []
    if (since := _since(ctx)) is not None:
        items = [i for i in items if i.updated_at >= since]
    key: Callable[[Issue], Any] = {
        "created": lambda i: (i.created_at, i.number),
        "updated": lambda i: (i.updated_at, i.number),
        "comments": lambda i: (len(i.comments), i.number),
    }[q.get("sort", "created")]
    items.sort(key=key, reverse=q.get("direction", "desc") == "desc")
    chunk, headers = _page(ctx, items)
    return Reply(200, [_render_issue(ctx, repo, i) for i in chunk], headers)


@handles("issues/get")
def get_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return Reply(200, _render_issue(ctx, repo, _issue(ctx, repo)))


@handles("issues/create")
def create_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    body = _body(ctx)
    title = str(body.get("title", "")).strip()
    if not title:
        raise invalid("Issue", "title", None, ctx.docs, code="missing_field")
    push = _can_push(ctx, repo)
    assignees: list[Any] = list(body.get("assignees") or [])
    if body.get("assignee"):
        assignees.insert(0, body["assignee"])
    checked = _check_assignees(ctx, repo, assignees) if push else []
    milestone = _milestone_number(ctx, repo, body.get("milestone")) if push else None
    labels = _label_names(body.get("labels") or []) if push else []
    state = ctx.state
    now = state.stamp()
    number = repo.next_number
    repo.next_number += 1
    item = Issue(
        id=state.next_id("issue"),
        number=number,
        title=title,
        body=body.get("body"),
        author=state.user(ctx.actor).login,
        created_at=now,
        updated_at=now,
        label_ids=_apply_labels(state, repo, labels),
        assignees=checked,
        milestone=milestone,
    )
    repo.issues[number] = item
    repo.updated_at = now
    url = f"{objects.repo_api(ctx.api, repo)}/issues/{number}"
    return Reply(201, _render_issue(ctx, repo, item), {"location": url})


@handles("issues/update")
def update_issue(ctx: Ctx) -> Reply:
    """GitHub validates a PATCH as a whole: every field is checked before any is applied, so a
    422 changes nothing."""
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    body = _body(ctx)
    push = _can_push(ctx, repo)
    if not push and item.author.casefold() != ctx.actor.casefold():
        raise ApiError(403, "Must have push access to this repository.", docs=ctx.docs)
    state = ctx.state
    new: dict[str, Any] = {}  # Issue attribute -> its value after the PATCH

    if body.get("title") is not None:
        new["title"] = str(body["title"]).strip()
        if not new["title"]:
            raise invalid("Issue", "title", None, ctx.docs, code="missing_field")
    if "body" in body:
        new["body"] = body["body"]
    if push:
        if "assignees" in body or "assignee" in body:
            logins: list[Any] = list(body.get("assignees") or [])
            if "assignees" not in body and body.get("assignee"):
                logins = [body["assignee"]]
            new["assignees"] = _check_assignees(ctx, repo, logins)
        if "milestone" in body:
            new["milestone"] = _milestone_number(ctx, repo, body["milestone"])
    new_state = body.get("state")
    reason = body.get("state_reason")
    if new_state == "closed" and reason is not None and reason not in ("completed", "not_planned", "duplicate"):
        raise invalid("Issue", "state_reason", reason, ctx.docs)

    # valid as a whole: apply (unknown labels are created only now, like GitHub)
    if push and "labels" in body and body["labels"] is not None:
        new["label_ids"] = _apply_labels(state, repo, _label_names(body["labels"]))
    changed = any(getattr(item, name) != value for name, value in new.items())
    for name, value in new.items():
        setattr(item, name, value)
    if new_state == "closed":
        if item.state == "open":
            when = state.stamp()
            item.state, item.closed_at, item.closed_by = "closed", when, state.user(ctx.actor).login
            item.state_reason = reason or "completed"
            changed = True
        elif reason is not None and reason != item.state_reason:
            item.state_reason = reason
            changed = True
    elif new_state == "open" and item.state == "closed":
        item.state, item.closed_at, item.closed_by = "open", None, None
        item.state_reason = "reopened"
        changed = True

    if changed:
        item.updated_at = state.stamp()
    return Reply(200, _render_issue(ctx, repo, item))


MAX_ASSIGNEES = 10  # GitHub's limit per issue


@handles("issues/add-assignees")
def add_assignees(ctx: Ctx) -> Reply:
    """Adds up to 10 assignees, keeping those already assigned; like GitHub it answers 201 with
    the issue either way: a caller without push access, and a login that cannot be assigned
    (or one past the limit), is silently ignored."""
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    if _can_push(ctx, repo):
        held = {a.casefold() for a in item.assignees}
        for raw in _body(ctx).get("assignees") or []:
            login = raw.get("login") if isinstance(raw, dict) else raw
            user = ctx.state.find_user(login) if isinstance(login, str) and login else None
            if (user is None or not ctx.state.is_collaborator(repo, user.login)
                    or user.login.casefold() in held or len(item.assignees) >= MAX_ASSIGNEES):
                continue
            item.assignees.append(user.login)
            held.add(user.login.casefold())
            item.updated_at = ctx.state.stamp()
    return Reply(201, _render_issue(ctx, repo, item))


@handles("issues/remove-assignees")
def remove_assignees(ctx: Ctx) -> Reply:
    """Removes the named assignees (ignoring case); a caller without push access, and a login not
    assigned, is silently ignored (200 with the issue)."""
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    gone = {str(a).casefold() for a in _body(ctx).get("assignees") or []}
    if _can_push(ctx, repo) and any(a.casefold() in gone for a in item.assignees):
        item.assignees = [a for a in item.assignees if a.casefold() not in gone]
        item.updated_at = ctx.state.stamp()
    return Reply(200, _render_issue(ctx, repo, item))


@handles("issues/lock")
def lock_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    _require_push(ctx, repo)
    body = _body(ctx)
    item.locked = True
    item.lock_reason = body.get("lock_reason")
    item.updated_at = ctx.state.stamp()
    return Reply(204)


@handles("issues/unlock")
def unlock_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    _require_push(ctx, repo)
    if item.locked:
        item.locked = False
        item.lock_reason = None
        item.updated_at = ctx.state.stamp()
    return Reply(204)


# comments --------------------------------------------------------------------------------------


@handles("issues/list-comments")
def list_comments(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    comments = sorted(item.comments, key=lambda c: (c.created_at, c.id))
    if (since := _since(ctx)) is not None:
        comments = [c for c in comments if c.updated_at >= since]
    chunk, headers = _page(ctx, comments)
    return Reply(200, [objects.comment(ctx.api, ctx.state, repo, c) for c in chunk], headers)


@handles("issues/create-comment")
def create_comment(ctx: Ctx) -> Reply:
    from fakegithub.state import Comment

    repo = _repo(ctx)
    item = _issue(ctx, repo)
    text = str((ctx.body or {}).get("body", ""))
    if not text.strip():
        raise invalid("IssueComment", "body", None, ctx.docs, code="missing_field")
    if item.locked and not _can_push(ctx, repo):
        raise ApiError(403, "Unable to create comment because issue is locked.", docs=ctx.docs)
    now = ctx.state.stamp()
    comment = Comment(ctx.state.next_id("comment"), item.number, text,
                      ctx.state.user(ctx.actor).login, now, now)
    item.comments.append(comment)
    item.updated_at = now
    rendered = objects.comment(ctx.api, ctx.state, repo, comment)
    return Reply(201, rendered, {"location": rendered["url"]})


# labels ------------------------------------------------------------------------------------------


def _labels_sorted(repo: Repo) -> list[Label]:
    return sorted(repo.labels.values(), key=lambda lb: (label_key(lb.name), lb.id))


def _find_label(ctx: Ctx, repo: Repo) -> Label:
    found = repo.find_label(ctx.params["name"])  # the router already percent-decoded it
    if found is None:
        raise not_found(ctx.docs)
    return found


def _check_color(ctx: Ctx, color: Any) -> str:
    text = str(color).lstrip("#")
    if not HEX_COLOR.match(text):
        raise invalid("Label", "color", str(color), ctx.docs)
    return text.lower()


def _check_description(ctx: Ctx, description: Any) -> str | None:
    if description is not None and len(str(description)) > 100:
        raise invalid("Label", "description", None, ctx.docs)
    return None if description is None else str(description)


@handles("issues/list-labels-for-repo")
def list_labels(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    chunk, headers = _page(ctx, _labels_sorted(repo))
    return Reply(200, [objects.label(ctx.api, repo, lb) for lb in chunk], headers)


@handles("issues/create-label")
def create_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    body = _body(ctx)
    name = str(body.get("name", "")).strip()
    if not name:
        raise invalid("Label", "name", None, ctx.docs, code="missing_field")
    if repo.find_label(name) is not None:
        raise invalid("Label", "name", name, ctx.docs, code="already_exists")
    color = _check_color(ctx, body["color"]) if body.get("color") else "ededed"
    description = _check_description(ctx, body.get("description"))
    lb = ctx.state.label(repo, name, color, description)
    rendered = objects.label(ctx.api, repo, lb)
    return Reply(201, rendered, {"location": rendered["url"]})


@handles("issues/get-label")
def get_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return Reply(200, objects.label(ctx.api, repo, _find_label(ctx, repo)))


@handles("issues/update-label")
def update_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    lb = _find_label(ctx, repo)
    body = _body(ctx)
    new_name = str(body["new_name"]).strip() if body.get("new_name") else lb.name
    other = repo.find_label(new_name)
    if other is not None and other.id != lb.id:
        raise invalid("Label", "name", new_name, ctx.docs, code="already_exists")
    color = _check_color(ctx, body["color"]) if body.get("color") else lb.color
    description = _check_description(ctx, body["description"]) if "description" in body else lb.description
    lb.name, lb.color, lb.description = new_name, color, description  # valid as a whole
    return Reply(200, objects.label(ctx.api, repo, lb))


@handles("issues/delete-label")
def delete_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    lb = _find_label(ctx, repo)
    del repo.labels[lb.id]
    for item in repo.issues.values():
        if lb.id in item.label_ids:
            item.label_ids.remove(lb.id)
    return Reply(204)


def _issue_labels(ctx: Ctx, repo: Repo, item: Issue) -> Reply:
    return Reply(200, [objects.label(ctx.api, repo, repo.labels[i]) for i in item.label_ids
                       if i in repo.labels])


def _body_labels(body: Any) -> list[str]:
    if isinstance(body, list):
        return _label_names(body)
    if isinstance(body, str):
        return _label_names([body])
    if isinstance(body, dict):
        return _label_names(body.get("labels") or [])
    return []


@handles("issues/list-labels-on-issue")
def list_issue_labels(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    labels = [repo.labels[i] for i in item.label_ids if i in repo.labels]
    chunk, headers = _page(ctx, labels)
    return Reply(200, [objects.label(ctx.api, repo, lb) for lb in chunk], headers)


@handles("issues/add-labels")
def add_labels(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    _require_push(ctx, repo)
    added = [i for i in _apply_labels(ctx.state, repo, _body_labels(ctx.body)) if i not in item.label_ids]
    if added:
        item.label_ids.extend(added)
        item.updated_at = ctx.state.stamp()
    return _issue_labels(ctx, repo, item)


@handles("issues/set-labels")
def set_labels(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    _require_push(ctx, repo)
    ids = _apply_labels(ctx.state, repo, _body_labels(ctx.body))
    if ids != item.label_ids:
        item.label_ids = ids
        item.updated_at = ctx.state.stamp()
    return _issue_labels(ctx, repo, item)


@handles("issues/remove-label")
def remove_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    _require_push(ctx, repo)
    lb = repo.find_label(ctx.params["name"])  # the router already percent-decoded it
    if lb is None or lb.id not in item.label_ids:
        raise ApiError(404, "Label does not exist", docs=ctx.docs)
    item.label_ids.remove(lb.id)
    item.updated_at = ctx.state.stamp()
    return _issue_labels(ctx, repo, item)


# search ----------------------------------------------------------------------------------------


def _search_invalid(ctx: Ctx, message: str) -> ApiError:
    return ApiError(
        422,
        "Validation Failed",
        docs=ctx.docs,
        errors=[{"message": message, "resource": "Search", "field": "q", "code": "invalid"}],
    )


@handles("search/issues-and-pull-requests")
def search_issues(ctx: Ctx) -> Reply:
    state = ctx.state
    try:
        query = search.parse(ctx.query.get("q", ""))
    except search.QueryError as exc:
        raise _search_invalid(ctx, str(exc)) from exc
    visible = [r for r in state.repos.values()
               if state.can_see(r, ctx.actor) and (not r.private or "repo" in ctx.token.scopes)]
    for name in query.repos:
        owner, _, repo_name = name.partition("/")
        if not any(r.owner.casefold() == owner.casefold() and r.name.casefold() == repo_name.casefold()
                   for r in visible):
            raise _search_invalid(
                ctx,
                "The listed users and repositories cannot be searched either because the resources "
                "do not exist or you do not have permission to view them.",
            )
    page, per_page = page_args(ctx.query)
    if page * per_page > SEARCH_CAP:
        raise ApiError(422, "Cannot access beyond the first 1000 results, or the first 5000 "
                       "results when using advanced search.", docs=ctx.docs)
    found = search.run(query, state, visible, ctx.actor)
    sort = query.sort or ctx.query.get("sort")
    order = query.order or ctx.query.get("order", "desc")
    key: Callable[[tuple[Repo, Issue]], Any] = {
        "created": lambda p: (p[1].created_at, p[1].id),
        "comments": lambda p: (len(p[1].comments), p[1].id),
    }.get(sort or "", lambda p: (p[1].updated_at, p[1].id))
    found.sort(key=key, reverse=order != "asc")
    cap = (SEARCH_CAP // per_page) * per_page
    chunk, headers = _page(ctx, found, cap=cap)
    return Reply(
        200,
        {
            "total_count": len(found),
            "incomplete_results": False,
            "search_type": "lexical",
            "items": [objects.search_item(ctx.api, state, r, i) for r, i in chunk],
        },
        headers,
    )
