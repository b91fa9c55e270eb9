"""Behaviour of the issue tools: multi-step calls, pagination, idempotency, concurrency checks.

Hand-written; the generator copies this file into the generated package as `hooks.py`, so it is
typed against the generated `types` and `operations` and checked with them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast
from urllib.parse import quote, urlencode

from ghmcp_runtime import ToolContext, ToolError, repair
from ghmcp_runtime.paging import has_next_link as _has_next
from ghmcp_runtime.paging import open_page
from ghmcp_runtime.paging import without as _without
from ghmcp_runtime.recovery import Listing, find_created

from . import operations as ops
from .types import (
    Detail,
    GithubCreateIssueArgs,
    GithubCreateIssueResult,
    GithubSearchIssuesArgs,
    GithubSearchIssuesResult,
    GithubUpdateIssueArgs,
    GithubUpdateIssueResult,
    IssueRow,
)

ISSUE_PAGE = 30
COMMENT_PAGE = 30
LABEL_PAGE = 100
WALK_CAP = 300
LABEL_CATALOG_PAGES = 10


def _repo(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"owner": args["owner"], "repo": args["repo"]}


def _fingerprint(args: Mapping[str, Any]) -> str:
    canonical = json.dumps(_without(args, "idempotency_key"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()




def _issue_row(ctx: ToolContext, raw: Mapping[str, Any], detail: Detail) -> IssueRow:
    # the projector follows the generated IssueRow shape
    return cast(IssueRow, ctx.project("issue", raw, detail))


# -- search -------------------------------------------------------------------------------------


def _search_query(args: GithubSearchIssuesArgs) -> str:
    terms = [args["query"], "is:issue"]
    if "owner" in args and "repo" in args:
        terms.append(f"repo:{args['owner']}/{args['repo']}")
    state = args.get("state", "open")
    if state != "all":
        terms.append(f"is:{state}")
    for label in args.get("labels", []):
        terms.append('label:"{}"'.format(label.replace('"', "")))
    if "assignee_login" in args:
        terms.append(f"assignee:{args['assignee_login']}")
    if "creator_login" in args:
        terms.append(f"author:{args['creator_login']}")
    if "updated_after" in args:
        terms.append(f"updated:>={args['updated_after']}")
    return " ".join(terms)


async def search_issues(ctx: ToolContext, args: GithubSearchIssuesArgs) -> GithubSearchIssuesResult:
    detail: Detail = args.get("detail", "summary")
    bound = _without(args, "cursor", "detail")
    page = open_page(ctx, args, "cursor")
    order = args.get("order", "desc")
    sort = args.get("sort", "updated")
    estimated: int | None = None
    if "query" in args:
        resp = await ctx.call(
            ops.SEARCH_ISSUES_AND_PULL_REQUESTS,
            path={},
            query={"q": ctx.confine_query(_search_query(args)), "sort": sort, "order": order,
                   "per_page": ISSUE_PAGE, "page": page},
        )
        raw_rows = list(resp.data["items"])
        estimated = int(resp.data["total_count"])
        more = page * ISSUE_PAGE < estimated
    else:
        query: dict[str, Any] = {
            "state": args.get("state", "open"),
            "sort": sort,
            "direction": order,
            "per_page": ISSUE_PAGE,
            "page": page,
        }
        if args.get("labels"):
            query["labels"] = ",".join(args["labels"])
        if "assignee_login" in args:
            query["assignee"] = args["assignee_login"]
        if "creator_login" in args:
            query["creator"] = args["creator_login"]
        if "updated_after" in args:
            query["since"] = args["updated_after"]
        resp = await ctx.call(ops.ISSUES_LIST_FOR_REPO, path=_repo(args), query=query)
        raw_rows = list(resp.data)
        more = _has_next(resp)
    rows = [_issue_row(ctx, raw, detail) for raw in raw_rows if "pull_request" not in raw]
    capped = more and page * ISSUE_PAGE >= WALK_CAP
    result: GithubSearchIssuesResult = {
        "issues": rows,
        "has_more": more and not capped,
        "truncated": capped,
    }
    if more and not capped:
        result["next_cursor"] = ctx.mint_cursor({"page": page + 1}, bound_to=bound)
    if estimated is not None:
        result["estimated_total"] = estimated
    if capped:
        result["truncation_hint"] = (
            "Only the first 300 rows of a query are reachable: narrow it with labels, state, "
            "updated_after, assignee_login, creator_login or query qualifiers."
        )
    return result


# -- read ---------------------------------------------------------------------------------------


async def _get_raw_issue(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    resp = await ctx.call(
        ops.ISSUES_GET, path={**_repo(args), "issue_number": args["issue_number"]}
    )
    raw: dict[str, Any] = resp.data
    if "pull_request" in raw:
        raise ToolError(
            "issue_not_found",
            "That number is a pull request; this server only handles issues.",
            details={"field": "issue_number", "reason": "the number belongs to a pull request"},
            repair=repair("find_issue", "github_search_issues", {**_repo(args), "state": "all"}),
        )
    return raw


# -- labels -------------------------------------------------------------------------------------


async def _label_catalog(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, str]:
    """Lower-cased name -> exact name, for every label of the repository."""
    names: dict[str, str] = {}
    for page in range(1, LABEL_CATALOG_PAGES + 1):
        resp = await ctx.call(
            ops.ISSUES_LIST_LABELS_FOR_REPO,
            path=_repo(args),
            query={"per_page": LABEL_PAGE, "page": page},
        )
        names.update({str(label["name"]).lower(): str(label["name"]) for label in resp.data})
        if not _has_next(resp):
            break
    return names


async def _require_labels(
    ctx: ToolContext, args: Mapping[str, Any], field: str, names: Sequence[str]
) -> list[str]:
    catalog = await _label_catalog(ctx, args)
    missing = [i for i, name in enumerate(names) if name.lower() not in catalog]
    if missing:
        where = ", ".join(f"{field}[{i}]" for i in missing)
        raise ToolError(
            "label_not_found",
            f"{len(missing)} label name(s) do not exist in the repository; nothing was changed.",
            details={"field": field, "reason": f"no such label: {where}"},
            repair=repair("list_labels", "github_list_labels", _repo(args),
                          "create the label in GitHub first if it should exist"),
        )
    return [catalog[name.lower()] for name in names]


def _as_milestone_error(err: ToolError, args: Mapping[str, Any]) -> ToolError:
    if err.code == "invalid_field" and (err.details or {}).get("field") == "milestone_number":
        return ToolError(
            "milestone_not_found",
            "The milestone number does not exist in the repository; nothing was changed.",
            details={"field": "milestone_number", "reason": "GitHub rejected the milestone number"},
            repair=repair("read_issue", "github_search_issues", {**_repo(args), "state": "all"},
                          "milestone numbers appear on issues read with detail: full"),
        )
    return err


# -- create ---------------------------------------------------------------------------------------
# What is sent reaches GitHub byte for byte; a lost answer is found again by author, exact content
# and time (ghmcp_runtime.recovery), never by a marker added to the user's text.


def _created_issue(ctx: ToolContext, raw: Mapping[str, Any]) -> GithubCreateIssueResult:
    return {
        "issue_number": raw["number"],
        "url": raw["html_url"],
        "state": raw["state"],
        "version": ctx.version("issue", raw),
        "created_at": raw["created_at"],
    }


async def create_issue(ctx: ToolContext, args: GithubCreateIssueArgs) -> GithubCreateIssueResult:
    payload: dict[str, Any] = {"title": args["title"]}
    if "body" in args:
        payload["body"] = args["body"]
    if "assignee_logins" in args:
        payload["assignees"] = args["assignee_logins"]
    if "milestone_number" in args:
        payload["milestone"] = args["milestone_number"]

    async def run() -> GithubCreateIssueResult:
        # inside the idempotent step: a replayed key answers before labels are looked at again
        if args.get("labels"):
            payload["labels"] = await _require_labels(ctx, args, "labels", args["labels"])
        try:
            resp = await ctx.call(ops.ISSUES_CREATE, path=_repo(args), body=payload)
        except ToolError as err:
            raise _as_milestone_error(err, args) from None
        return _created_issue(ctx, resp.data)

    async def recover(first_start: datetime) -> GithubCreateIssueResult | None:
        mine = Listing(ops.ISSUES_LIST_FOR_REPO, _repo(args), newest_first=True, author_param="creator",
                       query={"state": "all", "sort": "created", "direction": "desc"})
        raw = await find_created(
            ctx, mine, match={"title": args["title"], "body": args.get("body")}, since=first_start,
            repair=repair("find_issue", "github_search_issues",
                          {**_repo(args), "state": "all", "sort": "created", "order": "desc"},
                          "if the issue is not there, call github_create_issue with a new idempotency_key"),
        )
        return _created_issue(ctx, raw) if raw is not None else None

    return await ctx.idempotent(
        args.get("idempotency_key"),
        scope=("github_create_issue", args["owner"].lower(), args["repo"].lower()),
        fingerprint=_fingerprint(args),
        run=run,
        recover=recover,
    )


# -- update ---------------------------------------------------------------------------------------


def _names(items: Sequence[Mapping[str, Any]], key: str) -> list[str]:
    return [str(item[key]) for item in items if isinstance(item, Mapping) and key in item]


def _patch_for(args: GithubUpdateIssueArgs, current: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    patch: dict[str, Any] = {}
    changed: list[str] = []
    edits = {k: v for k, v in args.items() if k in ("title", "body")}
    for field, value in edits.items():
        if value != (current.get(field) or ""):
            patch[field] = value
            changed.append(field)
    state = args.get("state", current["state"])
    if state != current["state"]:
        patch["state"] = state
        changed.append("state")
    reason = args.get("state_reason")
    if reason is None and "state" in patch:
        reason = "completed" if state == "closed" else "reopened"
    if reason is not None and (reason != current.get("state_reason") or "state" in patch):
        patch["state_reason"] = reason
        if "state_reason" in args and reason != current.get("state_reason"):
            changed.append("state_reason")
    if "assignee_logins" in args:
        wanted = sorted(login.lower() for login in args["assignee_logins"])
        if wanted != sorted(n.lower() for n in _names(current.get("assignees") or [], "login")):
            patch["assignees"] = args["assignee_logins"]
            changed.append("assignee_logins")
    if "milestone_number" in args:
        now = (current.get("milestone") or {}).get("number")
        if args["milestone_number"] != now:
            patch["milestone"] = args["milestone_number"]
            changed.append("milestone_number")
    return patch, changed


async def update_issue(ctx: ToolContext, args: GithubUpdateIssueArgs) -> GithubUpdateIssueResult:
    if args.get("locked") is False and "lock_reason" in args:
        raise ToolError("invalid_field", "lock_reason only applies when locking.",
                        details={"field": "lock_reason", "reason": "lock_reason needs locked: true"},
                        repair=repair("drop_lock_reason", "github_update_issue",
                                      _without(args, "lock_reason")))
    path = {**_repo(args), "issue_number": args["issue_number"]}
    current = await _get_raw_issue(ctx, args)
    if "expected_version" in args and args["expected_version"] != ctx.version("issue", current):
        raise ToolError(
            "conflict",
            "The issue changed since that version was read; nothing was written.",
            details={"field": "expected_version", "reason": "does not match the current version"},
            repair=repair("reread", "github_get_issue", path,
                          "re-apply your change with the new version"),
        )
    on_issue = {n.lower() for n in _names(current.get("labels") or [], "name")}
    add = await _require_labels(ctx, args, "add_labels", args["add_labels"]) \
        if args.get("add_labels") else []
    remove = await _require_labels(ctx, args, "remove_labels", args["remove_labels"]) \
        if args.get("remove_labels") else []
    add = [n for n in add if n.lower() not in on_issue]
    remove = [n for n in remove if n.lower() in on_issue and n.lower() not in {a.lower() for a in add}]
    patch, changed = _patch_for(args, current)
    applied: list[str] = []

    async def step(fields: list[str], coro: Any) -> None:
        try:
            await coro
        except ToolError as err:
            err = _as_milestone_error(err, args)
            if applied:
                err.details = {**(err.details or {}), "applied_fields": list(applied)}
                err.message += f" Already applied: {', '.join(applied)}."
            raise err from None
        applied.extend(fields)

    if patch:
        await step(list(changed), ctx.call(ops.ISSUES_UPDATE, path=path, body=patch))
    if add:
        await step(["add_labels"], ctx.call(ops.ISSUES_ADD_LABELS, path=path, body={"labels": add}))
    for name in remove:
        await step([] if name != remove[-1] else ["remove_labels"],
                   ctx.call(ops.ISSUES_REMOVE_LABEL, path={**path, "name": name}))
    if args.get("locked") is True and not current.get("locked"):
        body = {"lock_reason": args["lock_reason"]} if "lock_reason" in args else None
        fields = ["locked", *(["lock_reason"] if "lock_reason" in args else [])]
        await step(fields, ctx.call(ops.ISSUES_LOCK, path=path, body=body))
    elif args.get("locked") is False and current.get("locked"):
        await step(["locked"], ctx.call(ops.ISSUES_UNLOCK, path=path))
    final = await _get_raw_issue(ctx, args) if applied else current
    return {
        "issue_number": final["number"],
        "state": final["state"],
        "version": ctx.version("issue", final),
        "changed_fields": applied,
        "url": final["html_url"],
    }


# -- resources and completions ----------------------------------------------------------------------

RESOURCE_ROOT = "ghissues://repos/{owner}/{repo}"
MAX_RESOURCE_LIMIT = 100


def _resource_page(params: Mapping[str, Any], name: str = "page", default: int = 1,
                   upper: int | None = None) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if not str(raw).isdigit() or int(raw) < 1 or (upper is not None and int(raw) > upper):
        bound = f" and at most {upper}" if upper is not None else ""
        raise ToolError("invalid_field", f"The {name} query variable must be a whole number from 1{bound}.",
                        details={"field": "uri", "reason": f"{name} is not a valid number"})
    return int(raw)


def _root(params: Mapping[str, Any]) -> str:
    return RESOURCE_ROOT.format(owner=quote(str(params["owner"]), safe=""),
                                repo=quote(str(params["repo"]), safe=""))


async def read_issue_index(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    page = _resource_page(params)
    state = str(params.get("state", "open"))
    labels: list[str] = params.get("labels", [])
    query: dict[str, Any] = {"state": state, "sort": "updated", "direction": "desc",
                             "per_page": ISSUE_PAGE, "page": page}
    if labels:
        query["labels"] = ",".join(labels)
    resp = await ctx.call(ops.ISSUES_LIST_FOR_REPO, path=_repo(params), query=query)
    rows = []
    for raw in resp.data:
        if "pull_request" not in raw:
            row = dict(ctx.project("issue", raw, "summary"))
            row.pop("preview", None)  # an index carries triage metadata, never bodies
            rows.append(row)
    body: dict[str, Any] = {"issues": rows, "page": page}
    if _has_next(resp):
        variables = {"state": state, **({"labels": ",".join(labels)} if labels else {}), "page": page + 1}
        body["next"] = f"{_root(params)}/issues?{urlencode(variables)}"
    return body


async def read_comments(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    page = _resource_page(params)
    await _get_raw_issue(ctx, params)  # a missing issue (or a pull request) must not read as empty
    resp = await ctx.call(
        ops.ISSUES_LIST_COMMENTS,
        path={**_repo(params), "issue_number": params["issue_number"]},
        query={"per_page": COMMENT_PAGE, "page": page},
    )
    body: dict[str, Any] = {"comments": [ctx.project("comment", c, "full") for c in resp.data],
                            "page": page}
    if _has_next(resp):
        body["next"] = f"{_root(params)}/issues/{params['issue_number']}/comments?page={page + 1}"
    return body


async def read_labels(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    page = _resource_page(params)
    limit = _resource_page(params, "limit", MAX_RESOURCE_LIMIT, upper=MAX_RESOURCE_LIMIT)
    resp = await ctx.call(ops.ISSUES_LIST_LABELS_FOR_REPO, path=_repo(params),
                          query={"per_page": limit, "page": page})
    body: dict[str, Any] = {"labels": [ctx.project("label", raw, "summary") for raw in resp.data],
                            "page": page}
    if _has_next(resp):
        body["next"] = f"{_root(params)}/labels?{urlencode({'page': page + 1, 'limit': limit})}"
        body["truncated"] = {"reason": "more labels exist than this page holds",
                             "enumerate_with": "github_list_labels"}
    return body


async def _my_repositories(ctx: ToolContext) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for page in range(1, 4):
        resp = await ctx.call(ops.REPOS_LIST_FOR_AUTHENTICATED_USER, path={},
                              query={"per_page": 100, "page": page, "sort": "full_name"})
        found += [(str(r["owner"]["login"]), str(r["name"])) for r in resp.data]
        if not _has_next(resp):
            break
    return found


async def complete_owner(ctx: ToolContext, prefix: str, chosen: dict[str, str]) -> list[str]:
    return sorted({owner for owner, _ in await _my_repositories(ctx)})


async def complete_repo(ctx: ToolContext, prefix: str, chosen: dict[str, str]) -> list[str]:
    owner = chosen.get("owner", "").lower()
    return sorted({repo for o, repo in await _my_repositories(ctx) if not owner or o.lower() == owner})


async def complete_label(ctx: ToolContext, prefix: str, chosen: dict[str, str]) -> list[str]:
    if not chosen.get("owner") or not chosen.get("repo"):
        return []
    return sorted((await _label_catalog(ctx, chosen)).values())
