"""One function per implemented operationId: Forgejo v11.0.1's semantics on top of `State`
(`routers/api/v1/{repo,org,user}/*.go`, `models/issues/label.go`, `modules/label/label.go`).

Handlers run under the fake's lock, after authentication, the token-scope check and spec
validation of the request, so they may trust the request's shape (not its meaning).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakeforgejo import objects
from fakeforgejo.state import ApiError, Issue, Label, Org, Repo, State, Token, not_found
from fakegithub.handlers import Reply

# modules/label/label.go: `^#?(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})$`, after lower-casing and trimming
_COLOR = re.compile(r"^#?(?:[0-9a-f]{6}|[0-9a-f]{3})$")


@dataclass
class Ctx:
    state: State
    params: dict[str, str]
    query: dict[str, str]
    body: Any
    token: Token
    api: str  # base URL of the API as the client addressed it, ending in /api/v1
    url: str  # this request's URL without the query (for Link headers)

    @property
    def actor(self) -> str:
        return self.token.login


Handler = Callable[[Ctx], Reply]
HANDLERS: dict[str, Handler] = {}


def handles(operation: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[operation] = fn
        return fn

    return register


def normalize_color(color: str) -> str:
    """`label.NormalizeColor`: lower-case, `#` added, 3-digit shorthand expanded; else 422."""
    color = color.strip().lower()
    if len(color) in (3, 6):
        color = "#" + color
    if not _COLOR.match(color):
        raise ApiError(422, f"bad color code: {color}")
    if len(color) == 4:
        color = "#" + "".join(c * 2 for c in color[1:])
    return color


def listed(ctx: Ctx, rows: list[Any], *, link: bool) -> Reply:
    """A page of `rows` with `X-Total-Count` (and, where Forgejo sets it, `Link`)."""
    headers = {"x-total-count": str(len(rows))}
    if link:
        found = objects.link_header(ctx.url, ctx.query, len(rows))
        if found:
            headers["link"] = found
    return Reply(200, objects.paginate(rows, ctx.query), headers)


# lookups and permission checks -----------------------------------------------------------------


def _repo(ctx: Ctx, write: bool = False) -> Repo:
    repo = ctx.state.repo(ctx.params["owner"], ctx.params["repo"])
    if repo is None:
        raise not_found()
    access = ctx.state.access(repo, ctx.actor)
    if access == "none":
        raise not_found()
    if write and access != "write":
        raise ApiError(403, "user should have a permission to write to a repo")
    return repo


def _org(ctx: Ctx, owner: bool = False) -> Org:
    org = ctx.state.org(ctx.params["org"])
    if org is None or not ctx.state.can_see_org(org, ctx.actor):
        raise not_found()
    if owner and not ctx.state.org_owner(org, ctx.actor):
        raise ApiError(403, "Must be an organization owner")
    return org


def _label_id(ctx: Ctx) -> int:
    try:
        return int(ctx.params["id"])
    except ValueError:
        raise not_found() from None


def _label(ctx: Ctx, labels: list[Label], *, by_name: bool = False) -> Label:
    """The label `{id}` names among `labels`: by id, or (GetLabel only) by name when not numeric."""
    raw = ctx.params["id"]
    for lb in labels:
        if (raw.isdigit() and lb.id == int(raw)) or (by_name and not raw.isdigit() and lb.name == raw):
            return lb
    raise not_found()


def _new_label(ctx: Ctx, **owner: Any) -> Label:
    body = ctx.body
    label = Label(ctx.state.next_id("label"), body["name"], normalize_color(body["color"]),
                  body.get("description", ""), bool(body.get("exclusive", False)),
                  bool(body.get("is_archived", False)), **owner)
    ctx.state.labels[label.id] = label
    return label


def _edit(label: Label, body: dict[str, Any]) -> None:
    """`EditLabel`: supplied fields change; `is_archived` is set from the request every time, so
    an edit that leaves it out un-archives the label (`l.SetArchived(form.IsArchived != nil && …)`)."""
    color = normalize_color(body["color"]) if body.get("color") is not None else None
    if body.get("name") is not None:
        label.name = body["name"]
    if body.get("exclusive") is not None:
        label.exclusive = bool(body["exclusive"])
    if color is not None:
        label.color = color
    if body.get("description") is not None:
        label.description = body["description"]
    label.is_archived = bool(body.get("is_archived"))


# the caller -------------------------------------------------------------------------------------


@handles("userGetCurrent")
def get_current_user(ctx: Ctx) -> Reply:
    return Reply(200, objects.user(ctx.api, ctx.state.user(ctx.actor)))


@handles("userGetTokens")
def list_tokens(ctx: Ctx) -> Reply:
    """`ListAccessTokens`: the account's own tokens (`reqSelfOrAdmin`: another account's are a
    403), each with its scopes and last eight characters; the token itself (`sha1`) is empty."""
    login = ctx.params["username"]
    if ctx.state.users.get(login.casefold()) is None:
        raise not_found()
    if login.casefold() != ctx.actor.casefold() and not ctx.state.is_admin(ctx.actor):
        raise ApiError(403, "doer should be the site admin or be same as the contextUser")
    mine = [t for t in ctx.state.tokens.values() if t.login.casefold() == login.casefold()]
    rows = [{"id": i + 1, "name": f"token-{i + 1}", "sha1": "", "token_last_eight": t.token[-8:],
             "scopes": list(t.scopes)} for i, t in enumerate(mine)]
    return listed(ctx, rows, link=True)


@handles("repoGet")
def get_repo(ctx: Ctx) -> Reply:
    return Reply(200, objects.repository(ctx.api, _repo(ctx), ctx.state, ctx.actor))


@handles("repoGetRepoPermissions")
def get_repo_permissions(ctx: Ctx) -> Reply:
    """`GetRepoPermissions`: site admins and the repository's admins may ask about anyone, anyone
    else only about themselves (403); an account that does not exist is a 404."""
    repo = _repo(ctx)
    name = ctx.params["collaborator"]
    asker_admin = ctx.state.access_mode(repo, ctx.actor) in ("admin", "owner")
    if not (asker_admin or ctx.state.is_admin(ctx.actor) or name.casefold() == ctx.actor.casefold()):
        raise ApiError(403, "Only admins can query all permissions, repo admins can query all repo "
                       "permissions, collaborators can query only their own")
    account = ctx.state.users.get(name.casefold())
    if account is None:
        raise ApiError(404, f"user does not exist [uid: 0, name: {name}]")
    return Reply(200, objects.permission(ctx.api, account, ctx.state.access_mode(repo, account.login)))


@handles("orgGet")
def get_org(ctx: Ctx) -> Reply:
    return Reply(200, objects.org(ctx.api, _org(ctx)))


@handles("orgListRepos")
def list_org_repos(ctx: Ctx) -> Reply:
    """The total counts every repository of the organisation; the page holds the readable ones
    among that page's repositories (`listUserRepos`: count first, permission filter after)."""
    org = _org(ctx)
    repos = sorted((r for r in ctx.state.repos.values() if r.owner.casefold() == org.name.casefold()),
                   key=lambda r: r.id)
    page = objects.paginate(repos, ctx.query)
    rows = [objects.repository(ctx.api, r, ctx.state, ctx.actor) for r in page
            if ctx.state.access(r, ctx.actor) != "none"]
    headers = {"x-total-count": str(len(repos))}
    found = objects.link_header(ctx.url, ctx.query, len(repos))
    if found:
        headers["link"] = found
    return Reply(200, rows, headers)


# repository labels ------------------------------------------------------------------------------


@handles("issueListLabels")
def list_repo_labels(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    rows = [objects.label(ctx.api, lb, ctx.state) for lb in ctx.state.repo_labels(repo)]
    return listed(ctx, rows, link=False)  # ListLabels sets X-Total-Count only


@handles("issueGetLabel")
def get_repo_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return Reply(200, objects.label(ctx.api, _label(ctx, ctx.state.repo_labels(repo), by_name=True), ctx.state))


@handles("issueCreateLabel")
def create_repo_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx, write=True)
    return Reply(201, objects.label(ctx.api, _new_label(ctx, repo=repo.key), ctx.state))


@handles("issueEditLabel")
def edit_repo_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx, write=True)
    _label_id(ctx)
    label = _label(ctx, ctx.state.repo_labels(repo))
    _edit(label, ctx.body or {})
    return Reply(200, objects.label(ctx.api, label, ctx.state))


@handles("issueDeleteLabel")
def delete_repo_label(ctx: Ctx) -> Reply:
    """204 whether or not the label exists (or belongs to this repository): `DeleteLabel`
    returns nil for a missing id and for another owner's label, deleting nothing."""
    repo = _repo(ctx, write=True)
    label = ctx.state.labels.get(_label_id(ctx))
    if label is not None and label.repo == repo.key:
        ctx.state.delete_label(label)
    return Reply(204)


# organisation labels ----------------------------------------------------------------------------


@handles("orgListLabels")
def list_org_labels(ctx: Ctx) -> Reply:
    org = _org(ctx)
    rows = [objects.label(ctx.api, lb, ctx.state) for lb in ctx.state.org_labels(org)]
    return listed(ctx, rows, link=False)


@handles("orgGetLabel")
def get_org_label(ctx: Ctx) -> Reply:
    org = _org(ctx)
    return Reply(200, objects.label(ctx.api, _label(ctx, ctx.state.org_labels(org), by_name=True), ctx.state))


@handles("orgCreateLabel")
def create_org_label(ctx: Ctx) -> Reply:
    org = _org(ctx, owner=True)
    return Reply(201, objects.label(ctx.api, _new_label(ctx, org=org.name.casefold()), ctx.state))


@handles("orgEditLabel")
def edit_org_label(ctx: Ctx) -> Reply:
    org = _org(ctx, owner=True)
    _label_id(ctx)
    label = _label(ctx, ctx.state.org_labels(org))
    _edit(label, ctx.body or {})
    return Reply(200, objects.label(ctx.api, label, ctx.state))


@handles("orgDeleteLabel")
def delete_org_label(ctx: Ctx) -> Reply:
    org = _org(ctx, owner=True)
    label = ctx.state.labels.get(_label_id(ctx))
    if label is not None and label.org == org.name.casefold():
        ctx.state.delete_label(label)
    return Reply(204)


# issues and pull requests -----------------------------------------------------------------------


def _states(ctx: Ctx) -> set[str]:
    state = ctx.query.get("state", "open")
    return {"open", "closed"} if state == "all" else {state if state == "closed" else "open"}


def _kinds(ctx: Ctx) -> set[bool]:
    kind = ctx.query.get("type", "")
    return {True} if kind == "pulls" else {False} if kind == "issues" else {True, False}


@handles("issueListIssues")
def list_issues(ctx: Ctx) -> Reply:
    """`labels` names are looked up among the repository's own labels (`GetLabelIDsInRepoByNames`);
    when none of them resolves, no label filter applies at all (every issue is listed), as in
    Forgejo, where an organisation label's name never resolves here."""
    repo = _repo(ctx)
    names = ctx.query.get("labels", "").split(",")
    ids = {lb.id for lb in ctx.state.repo_labels(repo) if lb.name in names}
    states, kinds = _states(ctx), _kinds(ctx)
    items = sorted((i for i in repo.issues.values() if i.state in states and i.is_pull in kinds
                    and (not ids or ids & set(i.label_ids))), key=lambda i: -i.id)
    rows = [objects.issue(ctx.api, repo, i, ctx.state) for i in items]
    return listed(ctx, rows, link=True)


@handles("issueSearchIssues")
def search_issues(ctx: Ctx) -> Reply:
    """Issues in the repositories the token's user can read (of `owner`, when given) carrying
    any label with one of the `labels` names, whichever repository or organisation owns it
    (`GetLabelIDsByNames` is instance-wide); names that resolve to nothing filter nothing."""
    owner = ctx.query.get("owner")
    if owner and ctx.state.find_account(owner) is None:
        raise ApiError(400, f"user redirect does not exist [name: {owner}]")
    names = ctx.query.get("labels", "").strip().split(",")
    ids = {lb.id for lb in ctx.state.labels.values() if lb.name in names}
    states, kinds = _states(ctx), _kinds(ctx)
    found: list[tuple[Repo, Issue]] = []
    for repo in sorted(ctx.state.repos.values(), key=lambda r: r.id):
        if owner and repo.owner.casefold() != owner.casefold():
            continue
        if ctx.state.access(repo, ctx.actor) == "none":
            continue
        found += [(repo, i) for i in repo.issues.values() if i.state in states and i.is_pull in kinds
                  and (not ids or ids & set(i.label_ids))]
    found.sort(key=lambda pair: -pair[1].id)
    rows = [objects.issue(ctx.api, repo, i, ctx.state) for repo, i in found]
    return listed(ctx, rows, link=True)
