"""Milestone operations: list (state/sort/direction, paged), get, create, update, delete.

GitHub behaviour mirrored here: `open_issues`/`closed_issues` count issues AND pull requests (the
milestone schema: "a collection of related issues and pull requests"); `due_on` keeps only the US
Pacific calendar day (see `clock.due_on`); closing sets `closed_at`, reopening clears it; a
duplicate title is 422 `already_exists` on `title` (compared case-insensitively, like labels);
writes need push access; deleting a milestone removes it from its issues without touching their
`updated_at`; milestone numbers are never reused.
"""

from __future__ import annotations

from typing import Any

from fakegithub import objects
from fakegithub.clock import due_on, parse_time
from fakegithub.handlers import Ctx, Reply, _body, _page, _repo, _require_push, handles
from fakegithub.state import Milestone, Repo, invalid, not_found

NO_DUE_DATE = parse_time("9999-12-31T00:00:00Z")  # sorts after every real due date


def _find(ctx: Ctx, repo: Repo) -> Milestone:
    found = repo.milestones.get(int(ctx.params["milestone_number"]))
    if found is None:
        raise not_found(ctx.docs)
    return found


def _render(ctx: Ctx, repo: Repo, ms: Milestone) -> dict[str, Any]:
    return objects.milestone(ctx.api, ctx.state, repo, ms)


def _check_title(ctx: Ctx, repo: Repo, raw: Any, current: Milestone | None = None) -> str:
    title = str(raw)
    if not title.strip():
        raise invalid("Milestone", "title", None, ctx.docs, code="missing_field")
    other = repo.find_milestone_by_title(title)
    if other is not None and other is not current:
        # GitHub's body carries no `value` here: {"resource","code":"already_exists","field":"title"}
        raise invalid("Milestone", "title", None, ctx.docs, code="already_exists")
    return title


def _completeness(repo: Repo, ms: Milestone) -> float:
    carriers = repo.milestone_issues(ms.number)
    return sum(1 for i in carriers if i.state == "closed") / len(carriers) if carriers else 0.0


@handles("issues/list-milestones")
def list_milestones(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    wanted = ctx.query.get("state", "open")
    items = [m for m in repo.milestones.values() if wanted == "all" or m.state == wanted]
    if ctx.query.get("sort", "due_on") == "completeness":
        items.sort(key=lambda m: (_completeness(repo, m), m.number))
    else:
        items.sort(key=lambda m: (m.due_on or NO_DUE_DATE, m.number))
    if ctx.query.get("direction", "asc") == "desc":
        items.reverse()
    chunk, headers = _page(ctx, items)
    return Reply(200, [_render(ctx, repo, m) for m in chunk], headers)


@handles("issues/get-milestone")
def get_milestone(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    return Reply(200, _render(ctx, repo, _find(ctx, repo)))


@handles("issues/create-milestone")
def create_milestone(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    body = _body(ctx)
    title = _check_title(ctx, repo, body.get("title", ""))
    ms = ctx.state.milestone(repo, title, ctx.actor, description=body.get("description"),
                             state=body.get("state") or "open", due=body.get("due_on"))
    rendered = _render(ctx, repo, ms)
    return Reply(201, rendered, {"location": rendered["url"]})


@handles("issues/update-milestone")
def update_milestone(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    ms = _find(ctx, repo)
    body = _body(ctx)
    new: dict[str, Any] = {}  # checked as a whole before anything is applied: a 422 changes nothing
    if "title" in body:
        new["title"] = _check_title(ctx, repo, body["title"], ms)
    if "description" in body:
        new["description"] = body["description"]
    if "due_on" in body:
        new["due_on"] = None if body["due_on"] is None else due_on(body["due_on"])
    if body.get("state") in ("open", "closed"):
        new["state"] = body["state"]
    changed = any(getattr(ms, name) != value for name, value in new.items())
    for name, value in new.items():
        setattr(ms, name, value)
    if changed:
        ms.updated_at = ctx.state.stamp()
        if ms.state == "closed" and ms.closed_at is None:
            ms.closed_at = ms.updated_at
        elif ms.state == "open":
            ms.closed_at = None
    return Reply(200, _render(ctx, repo, ms))


@handles("issues/delete-milestone")
def delete_milestone(ctx: Ctx) -> Reply:
    repo = _repo(ctx)
    _require_push(ctx, repo)
    ms = _find(ctx, repo)
    for item in repo.issues.values():  # deleted (410) issues included
        if item.milestone == ms.number:
            item.milestone = None
    del repo.milestones[ms.number]
    return Reply(204)
