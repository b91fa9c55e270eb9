"""Hooks of the golden `shapes` case."""

from __future__ import annotations

from typing import Any

from ghmcp_runtime import ToolContext

from . import operations as ops
from .types import DemoGetIssueArgs, DemoGetIssueResult, DemoListIssuesArgs, DemoListIssuesResult


async def list_issues(ctx: ToolContext, args: DemoListIssuesArgs) -> DemoListIssuesResult:
    bound = {k: v for k, v in args.items() if k not in ("cursor", "detail")}
    page = 1
    if "cursor" in args:
        state = ctx.open_cursor(args["cursor"], bound_to=bound, field="cursor", restart_arguments=bound)
        page = int(state["page"])
    query = {"state": args.get("state", "open"), "per_page": 30, "page": page}
    resp = await ctx.call(ops.ISSUES_LIST_FOR_REPO, path={"owner": args["owner"], "repo": args["repo"]}, query=query)
    rows: list[Any] = [ctx.project("issue", raw, args.get("detail", "summary")) for raw in resp.data]
    more = 'rel="next"' in resp.headers.get("link", "")
    result: DemoListIssuesResult = {"issues": rows, "has_more": more}
    if more:
        result["next_cursor"] = ctx.mint_cursor({"page": page + 1}, bound_to=bound)
    return result


async def get_issue(ctx: ToolContext, args: DemoGetIssueArgs) -> DemoGetIssueResult:
    path = {"owner": args["owner"], "repo": args["repo"], "issue_number": args["issue_number"]}
    resp = await ctx.call(ops.ISSUES_GET, path=path)
    row: Any = ctx.project("issue", resp.data, "full", {"version": "v1"})
    return {"issue": row}
