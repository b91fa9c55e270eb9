"""Issues, their comments, labels, assignees and milestones: Forgejo v11.0.1's semantics
(`routers/api/v1/repo/{issue,issue_label,issue_comment,milestone,collaborators}.go`,
`routers/api/v1/user/user.go`, `services/issue`, `models/issues/issue_search.go`).

What the fake does as Forgejo does, because the server under test must cope with it:

* The listing's filters: `labels` names the repository's own labels (an issue must carry every
  one of them); names no label has are dropped, and with none left nothing is filtered.
  `milestones` are titles, else ids (a milestone titled "5" wins over id 5); unknown ones are
  dropped the same way. `mentioned_by` is who was @-mentioned when the issue or a comment was
  written (never the writer, never taken back). `created_by`/`assigned_by`/`mentioned_by` naming no account answer 404,
  like a missing repository. `q` matches title, body and comments ignoring case (the database
  indexer's LIKE). `since`/`before` compare `updated_at`.
* Writes by an account without write access: a create keeps only title and body (labels,
  assignees and milestone are dropped silently); an edit by the issue's author changes title,
  body and state only; anyone else gets a bare 403.
* Edit: an unknown milestone id or an unassignable login is a 500 (Forgejo checks nothing before
  it writes); `milestone: 0` clears the milestone; closing an issue with an open dependency is
  412. Create: an unknown milestone id or label id is dropped, an unknown or unassignable
  assignee is 422.
* Labels on an issue: POST takes ids or names (not both: 400); unknown ones are dropped; the
  answer is the issue's whole label list. DELETE of a label id that does not exist is 422, of one
  the issue does not carry is a 204 that changes nothing.
* Comments: every comment at once (the endpoint has no paging), oldest first; a locked issue
  refuses comments from accounts without write access (403).
"""

from __future__ import annotations

from typing import Any

from fakeforgejo import objects
from fakeforgejo.handlers import Ctx, _repo, handles, listed
from fakeforgejo.state import ApiError, Comment, Issue, Milestone, Repo, not_found
from fakegithub.clock import parse_time
from fakegithub.handlers import Reply

# ParseSortBy + applySorts: each sort's keys, 1 ascending, -1 descending (default: latest)
_SORTS: dict[str, tuple[tuple[str, int], ...]] = {
    "latest": (("created", -1), ("id", -1)), "oldest": (("created", 1), ("id", 1)),
    "recentupdate": (("updated", -1), ("created", -1), ("id", -1)),
    "leastupdate": (("updated", 1), ("created", 1), ("id", 1)),
    "mostcomment": (("comments", -1), ("created", -1), ("id", -1)),
    "leastcomment": (("comments", 1), ("created", -1), ("id", -1)),
}


def _issue(ctx: Ctx, repo: Repo) -> Issue:
    try:
        found = repo.issues.get(int(ctx.params["index"]))
    except ValueError:
        found = None
    if found is None:
        raise not_found()
    return found


def _can_write(ctx: Ctx, repo: Repo) -> bool:
    return ctx.state.access(repo, ctx.actor) == "write"


def _render(ctx: Ctx, repo: Repo, issue: Issue) -> dict[str, Any]:
    return objects.issue(ctx.api, repo, issue, ctx.state)


def _user_filter(ctx: Ctx, name: str) -> str | None:
    """`getUserIDForFilter`: the account's login, or a 404 naming the missing account."""
    login = ctx.query.get(name, "")
    if not login:
        return None
    account = ctx.state.users.get(login.casefold())
    if account is None:
        raise ApiError(404, "The target couldn't be found.", errors=[f"user redirect does not exist [name: {login}]"])
    return account.login


def _milestone_filter(repo: Repo, raw: str) -> set[int]:
    """Titles first, then ids; what matches neither is dropped."""
    ids: set[int] = set()
    for part in raw.split(","):
        by_title = next((m for m in repo.milestones.values() if m.title == part), None)
        if by_title is not None:
            ids.add(by_title.id)
        elif part.isdigit() and int(part) in repo.milestones:
            ids.add(int(part))
    return ids


@handles("issueListIssues")
def list_issues(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    names = ctx.query.get("labels", "").split(",")
    label_ids = {lb.id for lb in ctx.state.repo_labels(repo) if lb.name in names}
    milestones = _milestone_filter(repo, ctx.query["milestones"]) if ctx.query.get("milestones") else set()
    state = ctx.query.get("state", "open")
    states = {"open", "closed"} if state == "all" else {state if state == "closed" else "open"}
    kind = ctx.query.get("type", "")
    kinds = {True} if kind == "pulls" else {False} if kind == "issues" else {True, False}
    author, assignee, mention = (_user_filter(ctx, n) for n in ("created_by", "assigned_by", "mentioned_by"))
    keyword = ctx.query.get("q", "").strip().casefold()
    since = parse_time(ctx.query["since"]) if ctx.query.get("since") else None
    before = parse_time(ctx.query["before"]) if ctx.query.get("before") else None

    def wanted(i: Issue) -> bool:
        texts = [i.title, i.body, *(c.body for c in i.comments)]
        return (i.state in states and i.is_pull in kinds and label_ids <= set(i.label_ids)
                and (not milestones or i.milestone_id in milestones)
                and (author is None or i.author.casefold() == author.casefold())
                and (assignee is None or assignee.casefold() in {a.casefold() for a in i.assignees})
                and (mention is None or mention.casefold() in i.mentioned)
                and (not keyword or any(keyword in t.casefold() for t in texts))
                and (since is None or i.updated_at >= since) and (before is None or i.updated_at <= before))

    keys = _SORTS.get(ctx.query.get("sort", "").lower(), _SORTS["latest"])

    def order(i: Issue) -> tuple[float, ...]:
        values = {"created": i.created_at.timestamp(), "updated": i.updated_at.timestamp(),
                  "comments": float(len(i.comments)), "id": float(i.id)}
        return tuple(sign * values[key] for key, sign in keys)

    items = sorted((i for i in repo.issues.values() if wanted(i)), key=order)
    return listed(ctx, [_render(ctx, repo, i) for i in items], link=True)


@handles("issueGetIssue")
def get_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return Reply(200, _render(ctx, repo, _issue(ctx, repo)))


def _assignees(ctx: Ctx, repo: Repo, logins: list[str]) -> list[str]:
    """`MakeIDsFromAPIAssigneesToAdd` and `CanBeAssigned` (create): unknown or unassignable is 422."""
    out: list[str] = []
    for login in logins:
        account = ctx.state.users.get(login.casefold())
        if account is None:
            raise ApiError(422, f"Assignee does not exist: [name: user does not exist [uid: 0, name: {login}]]")
        if not ctx.state.can_be_assigned(repo, account.login):
            raise ApiError(422, f"user does not have access to repo [user_id: {ctx.state.users[login.casefold()].id}, "
                           f"repo_name: {repo.name}]")
        if account.login not in out:
            out.append(account.login)
    return out


@handles("issueCreateIssue")
def create_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    body = ctx.body or {}
    if not str(body.get("title") or ""):
        raise ApiError(422, "[Title]: Required")
    now = ctx.state.now()
    issue = Issue(ctx.state.next_id("issue"), repo.next_number, body["title"], ctx.state.user(ctx.actor).login,
                  now, now, body=body.get("body") or "")
    if _can_write(ctx, repo):
        issue.assignees = _assignees(ctx, repo, list(body.get("assignees") or []))
        wanted = set(body.get("labels") or [])
        own = {lb.id for lb in ctx.state.repo_labels(repo)}
        org = ctx.state.org(repo.owner) if repo.owner_is_org else None
        own |= {lb.id for lb in ctx.state.org_labels(org)} if org is not None else set()
        issue.label_ids = [i for i in ctx.state.labels if i in wanted and i in own]  # silently dropped
        milestone = int(body.get("milestone") or 0)
        issue.milestone_id = milestone if milestone in repo.milestones else 0
    repo.next_number += 1
    repo.issues[issue.number] = issue
    ctx.state.mention(repo, issue, issue.author, issue.body)
    if body.get("closed"):
        _close(ctx, repo, issue, now)
    return Reply(201, _render(ctx, repo, issue))


def _close(ctx: Ctx, repo: Repo, issue: Issue, now: Any) -> None:
    blocked = [n for n in issue.depends_on if n in repo.issues and repo.issues[n].state == "open"]
    if blocked:
        raise ApiError(412, "cannot close this issue because it still has open dependencies")
    issue.state, issue.closed_at = "closed", now


@handles("issueEditIssue")
def edit_issue(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    issue = _issue(ctx, repo)
    writer = _can_write(ctx, repo)
    if not writer and issue.author.casefold() != ctx.actor.casefold():
        return Reply(403)  # ctx.Status(http.StatusForbidden): no body
    body = ctx.body or {}
    before = (issue.title, issue.body, list(issue.assignees), issue.milestone_id, issue.state)
    if body.get("title"):
        issue.title = body["title"]
    if body.get("body") is not None:
        issue.body = body["body"]
    if writer and body.get("assignees") is not None:
        logins = []
        for login in body["assignees"]:
            account = ctx.state.users.get(str(login).casefold())
            if account is None or not ctx.state.can_be_assigned(repo, account.login):
                raise ApiError(500, "")  # UpdateAssignees: GetUserByName / CanBeAssigned failed
            if account.login not in logins:
                logins.append(account.login)
        issue.assignees = logins
    if writer and body.get("milestone") is not None and body["milestone"] != issue.milestone_id:
        if body["milestone"] > 0 and body["milestone"] not in repo.milestones:
            raise ApiError(500, "")  # ChangeMilestoneAssign: "issue doesn't exist"
        issue.milestone_id = body["milestone"]
    if body.get("state") is not None:
        closing = body["state"] == "closed"
        if closing and issue.state == "open":
            _close(ctx, repo, issue, ctx.state.now())
        elif not closing and issue.state == "closed":
            issue.state, issue.closed_at = "open", None
    if before != (issue.title, issue.body, issue.assignees, issue.milestone_id, issue.state):
        ctx.state.touch(issue)
    return Reply(201, _render(ctx, repo, issue))


@handles("issueAddLabel")
def add_labels(ctx: Ctx) -> Reply:
    """`prepareForReplaceOrAdd`: ids or names (repository labels, then organisation labels by
    name); what resolves to nothing is dropped. The answer is the issue's label list."""
    repo = _repo(ctx)
    issue = _issue(ctx, repo)
    given = list((ctx.body or {}).get("labels") or [])
    ids = [v for v in given if isinstance(v, int | float) and not isinstance(v, bool)]
    names = [v for v in given if isinstance(v, str)]
    if len(ids) + len(names) != len(given):
        raise ApiError(400, "a label must be an integer or a string")
    if ids and names:
        raise ApiError(400, "labels should be an array of strings or integers")
    org = ctx.state.org(repo.owner) if repo.owner_is_org else None
    usable = ctx.state.repo_labels(repo) + (ctx.state.org_labels(org) if org is not None else [])
    chosen = [lb for lb in usable if lb.id in {int(i) for i in ids} or lb.name in names]
    if not _can_write(ctx, repo):
        return Reply(403)
    added = [lb.id for lb in chosen if lb.id not in issue.label_ids]
    if added:
        issue.label_ids += added
        ctx.state.touch(issue)
    return Reply(200, [objects.label(ctx.api, lb, ctx.state) for lb in ctx.state.issue_labels(issue)])


@handles("issueRemoveLabel")
def remove_label(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    issue = _issue(ctx, repo)
    if not _can_write(ctx, repo):
        return Reply(403)
    label = ctx.state.labels.get(int(ctx.params["id"])) if ctx.params["id"].isdigit() else None
    if label is None:
        raise ApiError(422, f"label does not exist [label_id: {ctx.params['id']}]")
    if label.id in issue.label_ids:
        issue.label_ids.remove(label.id)
        ctx.state.touch(issue)
    return Reply(204)


@handles("issueGetComments")
def list_comments(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    issue = _issue(ctx, repo)
    since = parse_time(ctx.query["since"]) if ctx.query.get("since") else None
    before = parse_time(ctx.query["before"]) if ctx.query.get("before") else None
    rows = [objects.comment(ctx.api, repo, issue, c, ctx.state) for c in issue.comments
            if (since is None or c.updated_at >= since) and (before is None or c.updated_at <= before)]
    return Reply(200, rows)


@handles("issueCreateComment")
def create_comment(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    issue = _issue(ctx, repo)
    if issue.is_locked and not _can_write(ctx, repo) and not ctx.state.is_admin(ctx.actor):
        raise ApiError(403, "You cannot comment on a locked issue.")
    now = ctx.state.touch(issue)
    made = Comment(ctx.state.next_id("comment"), ctx.state.user(ctx.actor).login, (ctx.body or {})["body"], now, now)
    issue.comments.append(made)
    ctx.state.mention(repo, issue, made.author, made.body)
    return Reply(201, objects.comment(ctx.api, repo, issue, made, ctx.state))


@handles("repoGetAssignees")
def list_assignees(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return Reply(200, [objects.user(ctx.api, u) for u in ctx.state.assignees(repo)])


@handles("userGet")
def get_user(ctx: Ctx) -> Reply:
    account = ctx.state.users.get(ctx.params["username"].casefold())
    if account is None:
        raise ApiError(404, "The target couldn't be found.",
                       errors=[f"user redirect does not exist [name: {ctx.params['username']}]"])
    return Reply(200, objects.user(ctx.api, account))


# milestones -------------------------------------------------------------------------------------


def _milestones(ctx: Ctx, repo: Repo) -> list[Milestone]:
    state = ctx.query.get("state", "open")
    name = ctx.query.get("name", "")
    return [m for m in sorted(repo.milestones.values(), key=lambda m: m.id)
            if (state == "all" or m.state == state) and (not name or name.casefold() in m.title.casefold())]


@handles("issueGetMilestonesList")
def list_milestones(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return listed(ctx, [objects.milestone(repo, m) for m in _milestones(ctx, repo)], link=True)


@handles("issueGetMilestone")
def get_milestone(ctx: Ctx) -> Reply:
    """`getMilestoneByIDOrName`: an id first, then a title."""
    repo = _repo(ctx)
    raw = ctx.params["id"]
    found = repo.milestones.get(int(raw)) if raw.isdigit() else None
    found = found or next((m for m in repo.milestones.values() if m.title == raw), None)
    if found is None:
        raise not_found()
    return Reply(200, objects.milestone(repo, found))
