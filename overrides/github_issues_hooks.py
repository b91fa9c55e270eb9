"""What github-issues-mcp's declarations cannot say: GitHub search query composition (qualifiers,
the listing's filters, what neither can match and is checked here). Every other tool, resource
and completion is declared in github_issues.yaml. Copied into the package as `hooks.py`, typed
against its `types`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from ghmcp_runtime import ToolContext, ToolError, repair
from ghmcp_runtime.core.transforms import fold_name
from ghmcp_runtime.engine.paging import cursor_binding, open_state
from ghmcp_runtime.engine.walk import walk
from ghmcp_runtime.guards.allowlist import scope_terms

from . import operations as ops
from .types import (
    Detail,
    GithubSearchIssuesArgs,
    GithubSearchIssuesResult,
    IssueRow,
)

ISSUE_PAGE = 30
WALK_CAP = 300  # rows per query
WALK_PAGE = 100  # upstream page size once a first page of 30 fell short
WALK_READS = 3  # upstream reads per page of rows
SCAN_LIMIT = 1000  # upstream items per query


def _repo(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"owner": args["owner"], "repo": args["repo"]}


# -- search -------------------------------------------------------------------------------------

# A label name GitHub cannot match exactly in a filter is matched here instead: the listing's
# `labels` is a comma list; inside search's label:"..." a quote ends the value, a backslash may
# escape it and a comma separates alternatives.
UNFILTERABLE = {"list": ",", "search": '",\\'}
NARROW = ("labels, state, milestone, updated_after, assignee_login, creator_login, missing, "
          "lacks_labels or query qualifiers")
SCAN_HINT = (
    "Only the first 1,000 items GitHub returns for a query are scanned (pull requests, and items "
    f"failing filters GitHub cannot apply, count too): narrow it with {NARROW}."
)
ROWS_HINT = f"Only the first 300 rows of a query are reachable: narrow it with {NARROW}."
# `missing` -> GitHub's search qualifier and the listing's query (None: filtered here)
MISSING = {"assignee": ("no:assignee", ("assignee", "none")), "milestone": ("no:milestone", ("milestone", "none")),
           "labels": ("no:label", None)}
# `milestone` (a title is resolved to its number before the hook runs) -> the listing's filter
LISTING_MILESTONE = {"none": "none", "any": "*"}


def _milestone(args: GithubSearchIssuesArgs) -> int | str | None:
    """The milestone filter: a number, none or any (None: not given). Refused beside
    missing: [milestone], which it would contradict or repeat."""
    given: Mapping[str, Any] = args
    value = given.get("milestone")
    if value is not None and "milestone" in args.get("missing", []):
        raise ToolError("invalid_field", "Pass milestone or missing: [milestone], not both.",
                        details={"field": "milestone", "reason": "missing: [milestone] also filters on it"})
    return value if isinstance(value, int | str) else None


def _refuse_foreign_scope(args: GithubSearchIssuesArgs, q: str) -> None:
    """With owner and repo, the composed query `q` may not widen the search: scope qualifiers are
    OR-ed, so `repo:other/x` (or any org:/user:/owner:) would search beyond owner/repo.
    Exclusions (-repo:, NOT repo:) narrow. Terms are read by the allowlist's tokenizer."""
    if "owner" not in args or "repo" not in args:
        return
    mine = f"{args['owner']}/{args['repo']}".casefold()
    for negated, kind, value in scope_terms(q):
        if not negated and (kind != "repo" or value.casefold() != mine):
            raise ToolError(
                "invalid_field",
                "With owner and repo, query may not name another scope: a repo: qualifier must "
                "name that repository, and org:, user: or owner: would widen the search.",
                details={"field": "query", "reason": "a repo:, org:, user: or owner: qualifier "
                                                     "points beyond owner/repo"},
                repair=repair("narrow_query", "github_search_issues", _repo(args),
                              "remove the repo:, org:, user: and owner: qualifiers from query, or "
                              "omit owner and repo to search across repositories"),
            )


def _search_query(args: GithubSearchIssuesArgs, labels: Sequence[str], lacks: Sequence[str]) -> str:
    terms = [args["query"]] if "query" in args else []
    terms.append("is:issue")
    if "owner" in args and "repo" in args:
        terms.append(f"repo:{args['owner']}/{args['repo']}")
    state = args.get("state", "open")
    if state != "all":
        terms.append(f"is:{state}")
    terms += [f'label:"{label}"' for label in labels]
    terms += [f'-label:"{label}"' for label in lacks]
    terms += [MISSING[what][0] for what in dict.fromkeys(args.get("missing", []))]
    if _milestone(args) == "none":
        terms.append("no:milestone")  # a number, or any, is checked on each row (search names titles)
    given: Mapping[str, Any] = args
    for param, qualifier in (("assignee_login", "assignee"), ("creator_login", "author"),
                             ("mentions_login", "mentions"), ("commenter_login", "commenter")):
        if param in given:
            terms.append(f"{qualifier}:{given[param]}")
    if "updated_after" in args:
        terms.append(f"updated:>={args['updated_after']}")
    if "min_comments" in args or "max_comments" in args:
        terms.append(f"comments:{args.get('min_comments', '*')}..{args.get('max_comments', '*')}")
    composed = " ".join(terms)
    _refuse_foreign_scope(args, composed)  # on the whole query, not `query` alone (review t12)
    return composed


def _list_query(args: GithubSearchIssuesArgs, labels: Sequence[str]) -> dict[str, Any]:
    query: dict[str, Any] = {"state": args.get("state", "open"), "sort": args.get("sort", "updated"),
                             "direction": args.get("order", "desc")}
    if labels:
        query["labels"] = ",".join(labels)
    for what in args.get("missing", []):
        if (filter_ := MISSING[what][1]) is not None:
            query[filter_[0]] = filter_[1]
    if (milestone := _milestone(args)) is not None:
        query["milestone"] = LISTING_MILESTONE.get(str(milestone), str(milestone))
    given: Mapping[str, Any] = args
    for param, name in (("assignee_login", "assignee"), ("creator_login", "creator"),
                        ("mentions_login", "mentioned"), ("updated_after", "since")):
        if param in given:
            query[name] = given[param]
    return query


def label_names(issue: Mapping[str, Any]) -> list[str]:
    return [str(lb["name"]) if isinstance(lb, Mapping) else str(lb) for lb in issue.get("labels") or []]


def _held(raw: Mapping[str, Any], names: Sequence[str]) -> list[bool]:
    held = label_names(raw)
    return [any(fold_name(name) == fold_name(h) for h in held) for name in names]  # as GitHub compares


def _local_filter(args: GithubSearchIssuesArgs, mode: str, here: Sequence[str],
                  lacks_here: Sequence[str]) -> Callable[[Mapping[str, Any]], bool] | None:
    """What the upstream query cannot say, checked on each row (None: nothing to check)."""
    listing = mode == "list"
    unlabelled = listing and "labels" in args.get("missing", [])
    low, high = (args.get("min_comments"), args.get("max_comments")) if listing else (None, None)
    milestone = None if listing or _milestone(args) == "none" else _milestone(args)
    if not (here or lacks_here or unlabelled or low is not None or high is not None or milestone is not None):
        return None

    def keep(raw: Mapping[str, Any]) -> bool:
        count = int(raw.get("comments") or 0)
        number = (raw.get("milestone") or {}).get("number")
        return (all(_held(raw, here)) and not any(_held(raw, lacks_here))
                and not (unlabelled and label_names(raw))
                and (low is None or count >= low) and (high is None or count <= high)
                and (milestone is None or (number is not None if milestone == "any" else number == milestone)))

    return keep


async def search_issues(ctx: ToolContext, args: GithubSearchIssuesArgs) -> GithubSearchIssuesResult:
    detail: Detail = args.get("detail", "summary")
    state = open_state(ctx, args, "cursor")
    offset = int(state.get("offset", (int(state.get("page", 1)) - 1) * ISSUE_PAGE))  # or a page cursor
    delivered = int(state.get("delivered", offset))
    mode = "search" if "query" in args or "commenter_login" in args else "list"
    labels, lacks = args.get("labels", []), args.get("lacks_labels", [])
    here = [n for n in labels if any(c in n for c in UNFILTERABLE[mode])]
    there = [n for n in labels if n not in here]
    # the listing cannot exclude labels; search can, for names it matches exactly
    lacks_here = lacks if mode == "list" else [n for n in lacks if any(c in n for c in UNFILTERABLE[mode])]
    lacks_there = [n for n in lacks if n not in lacks_here]
    local = _local_filter(args, mode, here, lacks_here)
    seen: dict[str, Any] = {}

    async def fetch(page: int, per_page: int) -> tuple[list[Any], bool]:
        if mode == "search":
            resp = await ctx.call(ops.SEARCH_ISSUES_AND_PULL_REQUESTS, path={}, query={
                "q": ctx.confine_query(_search_query(args, there, lacks_there)),
                "sort": args.get("sort", "updated"),
                "order": args.get("order", "desc"), "per_page": per_page, "page": page})
            seen.setdefault("total", int(resp.data["total_count"]))
            seen["incomplete"] = seen.get("incomplete", False) or bool(resp.data.get("incomplete_results"))
            return list(resp.data["items"]), ctx.forge.has_more(resp, page, per_page)
        resp = await ctx.call(ops.ISSUES_LIST_FOR_REPO, path=_repo(args),
                              query={**_list_query(args, there), "per_page": per_page, "page": page})
        return list(resp.data), ctx.forge.has_more(resp, page, per_page)

    walked = await walk(fetch, lambda raw: "pull_request" not in raw and (local is None or local(raw)),
                        offset=offset, want=min(ISSUE_PAGE, WALK_CAP - delivered),
                        sizes=(ISSUE_PAGE, WALK_PAGE), max_reads=WALK_READS, scan_limit=SCAN_LIMIT)
    total = delivered + len(walked.rows)
    more = walked.next_offset is not None
    capped = walked.scan_capped or (more and total >= WALK_CAP)
    result: GithubSearchIssuesResult = {
        "issues": [cast(IssueRow, ctx.project("issue", raw, detail)) for raw in walked.rows],
        "has_more": more and not capped,
        "truncated": capped,
    }
    if more and not capped:
        result["next_cursor"] = ctx.mint_cursor({"offset": walked.next_offset, "delivered": total},
                                                bound_to=cursor_binding(args, "cursor"))
    if "total" in seen and local is None:
        result["estimated_total"] = seen["total"]
    if capped:
        result["truncation_hint"] = SCAN_HINT if walked.scan_capped else ROWS_HINT
    if seen.get("incomplete"):
        result["incomplete"] = True
    return result
