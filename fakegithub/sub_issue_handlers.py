"""Sub-issues (list, add, remove, reprioritize, parent) and blocked-by dependencies (list both
ways, add, remove). The endpoints name the other issue by its id, never its number.

GitHub behaviour mirrored here: a sub-issue belongs to a repository of the parent's owner and has
at most one parent (another is 422 unless `replace_parent`); an issue is not its own sub-issue or
blocker, and a link that would close a cycle is 422; a parent holds at most 100 sub-issues;
adding what is already linked is 422; removing a link that does not exist is 404; reprioritizing
takes exactly one of `after_id`/`before_id`, each a sibling. Writes need push access; a pull
request is neither a sub-issue nor a blocker. Add/remove/reprioritize answer with the parent
issue (dependencies: with the blocked issue); an added link answers 201 with a `location`.
"""

from __future__ import annotations

from typing import Any

from fakegithub import objects
from fakegithub.handlers import Ctx, Reply, _body, _issue, _page, _repo, _require_push, handles
from fakegithub.state import ApiError, Issue, Repo, invalid, not_found

MAX_SUB_ISSUES = 100


def _by_id(ctx: Ctx, issue_id: Any, owner: str, field: str) -> tuple[Repo, Issue]:
    """The issue with this id in a repository of `owner` the caller can see (422 otherwise)."""
    if isinstance(issue_id, int) and not isinstance(issue_id, bool):
        for repo in ctx.state.repos.values():
            if repo.owner.casefold() != owner.casefold() or not ctx.state.can_see(repo, ctx.actor):
                continue
            for item in repo.issues.values():
                if item.id == issue_id and not item.deleted and not item.is_pull_request:
                    return repo, item
    raise invalid("Issue", field, None, ctx.docs)


def _render(ctx: Ctx, repo: Repo, item: Issue) -> dict[str, Any]:
    return objects.issue(ctx.api, ctx.state, repo, item)


def _find(ctx: Ctx, issue_id: int) -> tuple[Repo, Issue]:
    for repo in ctx.state.repos.values():
        for item in repo.issues.values():
            if item.id == issue_id:
                return repo, item
    raise not_found(ctx.docs)


def _ancestors(ctx: Ctx, issue_id: int) -> set[int]:
    out: set[int] = set()
    while issue_id in ctx.state.parent_of:
        issue_id = ctx.state.parent_of[issue_id]
        if issue_id in out:
            break
        out.add(issue_id)
    return out


@handles("issues/list-sub-issues")
def list_sub_issues(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    parent = _issue(ctx, repo)
    rows = [_find(ctx, i) for i in ctx.state.sub_issues.get(parent.id, [])]
    chunk, headers = _page(ctx, rows)
    return Reply(200, [_render(ctx, r, i) for r, i in chunk], headers)


@handles("issues/get-parent")
def get_parent(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    child = _issue(ctx, repo)
    parent_id = ctx.state.parent_of.get(child.id)
    if parent_id is None:
        raise not_found(ctx.docs)
    return Reply(200, _render(ctx, *_find(ctx, parent_id)))


@handles("issues/add-sub-issue")
def add_sub_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    parent = _issue(ctx, repo)
    _require_push(ctx, repo)
    body = _body(ctx)
    _, child = _by_id(ctx, body.get("sub_issue_id"), repo.owner, "sub_issue_id")
    state = ctx.state
    siblings = state.sub_issues.get(parent.id, [])
    if child.id == parent.id or child.id in _ancestors(ctx, parent.id) or child.id in siblings:
        raise invalid("Issue", "sub_issue_id", None, ctx.docs)
    current = state.parent_of.get(child.id)
    if current is not None and not body.get("replace_parent"):
        raise ApiError(422, "Validation Failed", docs=ctx.docs, errors=[
            {"resource": "Issue", "field": "sub_issue_id", "code": "custom",
             "message": "Sub issue may only have one parent"}])
    if len(siblings) >= MAX_SUB_ISSUES:
        raise invalid("Issue", "sub_issue_id", None, ctx.docs, code="custom")
    if current is not None:
        state.sub_issues[current].remove(child.id)
    state.sub_issues[parent.id] = [*siblings, child.id]
    state.parent_of[child.id] = parent.id
    rendered = _render(ctx, repo, parent)
    return Reply(201, rendered, {"location": rendered["url"]})


@handles("issues/remove-sub-issue")
def remove_sub_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    parent = _issue(ctx, repo)
    _require_push(ctx, repo)
    sub_id = _body(ctx).get("sub_issue_id")
    if not isinstance(sub_id, int) or ctx.state.parent_of.get(sub_id) != parent.id:
        raise not_found(ctx.docs)
    ctx.state.sub_issues[parent.id].remove(sub_id)
    del ctx.state.parent_of[sub_id]
    return Reply(200, _render(ctx, repo, parent))


@handles("issues/reprioritize-sub-issue")
def reprioritize_sub_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    parent = _issue(ctx, repo)
    _require_push(ctx, repo)
    body = _body(ctx)
    order = ctx.state.sub_issues.get(parent.id, [])
    sub_id = body.get("sub_issue_id")
    anchors = [k for k in ("after_id", "before_id") if body.get(k) is not None]
    if sub_id not in order:
        raise not_found(ctx.docs)
    if len(anchors) != 1 or body[anchors[0]] not in order or body[anchors[0]] == sub_id:
        raise ApiError(422, "Validation Failed", docs=ctx.docs)
    order.remove(sub_id)
    at = order.index(body[anchors[0]])
    order.insert(at + 1 if anchors[0] == "after_id" else at, sub_id)
    return Reply(200, _render(ctx, repo, parent))


def _dependencies(ctx: Ctx, ids: list[int]) -> Reply:
    chunk, headers = _page(ctx, [_find(ctx, i) for i in ids])
    return Reply(200, [_render(ctx, r, i) for r, i in chunk], headers)


@handles("issues/list-dependencies-blocked-by")
def list_blocked_by(ctx: Ctx) -> Reply:
    item = _issue(ctx, _repo(ctx))
    return _dependencies(ctx, ctx.state.blocked_by.get(item.id, []))


@handles("issues/list-dependencies-blocking")
def list_blocking(ctx: Ctx) -> Reply:
    item = _issue(ctx, _repo(ctx))
    return _dependencies(ctx, [i for i, blockers in ctx.state.blocked_by.items() if item.id in blockers])


def _waits_on(ctx: Ctx, issue_id: int, target: int) -> bool:
    """Is `issue_id` already blocked, directly or through other issues, by `target`?"""
    seen: set[int] = set()
    pending = [issue_id]
    while pending:
        current = pending.pop()
        for blocker in ctx.state.blocked_by.get(current, []):
            if blocker == target:
                return True
            if blocker not in seen:
                seen.add(blocker)
                pending.append(blocker)
    return False


@handles("issues/add-blocked-by-dependency")
def add_blocked_by(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    _require_push(ctx, repo)
    _, blocker = _by_id(ctx, _body(ctx).get("issue_id"), repo.owner, "issue_id")
    blockers = ctx.state.blocked_by.get(item.id, [])
    if blocker.id == item.id or blocker.id in blockers or _waits_on(ctx, blocker.id, item.id):
        raise invalid("Issue", "issue_id", None, ctx.docs)
    ctx.state.blocked_by[item.id] = [*blockers, blocker.id]
    rendered = _render(ctx, repo, item)
    return Reply(201, rendered, {"location": rendered["url"]})


@handles("issues/remove-dependency-blocked-by")
def remove_blocked_by(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    item = _issue(ctx, repo)
    _require_push(ctx, repo)
    raw = ctx.params["issue_id"]
    blockers = ctx.state.blocked_by.get(item.id, [])
    if not raw.isdigit() or int(raw) not in blockers:
        raise not_found(ctx.docs)
    blockers.remove(int(raw))
    return Reply(200, _render(ctx, repo, item))
