"""Collaborators: `repos/get-collaborator-permission-level`, `issues/list-assignees`,
`issues/check-user-can-be-assigned`.

GitHub's behaviour mirrored here: only callers with push access may ask (403 `Must have push
access to view collaborator permission.` otherwise); an unknown login is 404; `permission` is the
legacy base role (admin, write, read, none; maintain reads as write, triage as read) and anyone
can read a public repository, so outsiders answer `read` there and `none` on private ones.
Assignable users are the repository's collaborators (what an issue write accepts as assignees):
the check answers 204 for one of them and 404 for anyone else; anyone who can see the repository
may ask.
"""

from __future__ import annotations

from fakegithub import objects
from fakegithub.handlers import Ctx, Reply, _can_push, _page, _repo, handles
from fakegithub.state import ApiError, not_found


@handles("repos/get-collaborator-permission-level")
def get_permission(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    if not _can_push(ctx, repo):
        raise ApiError(403, "Must have push access to view collaborator permission.", docs=ctx.docs)
    user = ctx.state.find_user(ctx.params["username"])
    if user is None:
        raise not_found(ctx.docs)
    permission = ctx.state.permission(repo, user.login)
    push = permission in ("admin", "write")
    collaborator = {
        **objects.simple_user(ctx.api, user),
        "permissions": {"pull": permission != "none", "triage": push, "push": push,
                        "maintain": permission == "admin", "admin": permission == "admin"},
        "role_name": permission,
    }
    return Reply(200, {"permission": permission, "role_name": permission, "user": collaborator})


@handles("issues/list-assignees")
def list_assignees(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    users = sorted((u for u in ctx.state.users.values() if ctx.state.is_collaborator(repo, u.login)),
                   key=lambda u: u.login.casefold())
    chunk, headers = _page(ctx, users)
    return Reply(200, [objects.simple_user(ctx.api, u) for u in chunk], headers)


@handles("issues/check-user-can-be-assigned")
def check_assignee(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    user = ctx.state.find_user(ctx.params["assignee"])
    if user is None or not ctx.state.is_collaborator(repo, user.login):
        raise not_found(ctx.docs)
    return Reply(204)
