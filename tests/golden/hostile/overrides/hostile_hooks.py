"""Hooks of the golden `hostile` case (plain code: the hostility is in the data)."""

from __future__ import annotations

from typing import Any

from ghmcp_runtime import ToolContext

from . import operations as ops
from .types import DemoGetIssueArgs, DemoGetIssueResult, DemoListIssuesArgs, DemoListIssuesResult


async def list_issues(ctx: ToolContext, args: DemoListIssuesArgs) -> DemoListIssuesResult:
    path = {"owner": args["owner"], "repo": args["repo"]}
    resp = await ctx.call(ops.ISSUES_LIST_FOR_REPO, path=path)
    rows: list[Any] = [ctx.project("issue", raw, "summary") for raw in resp.data]
    return {"issues": rows}


async def get_issue(ctx: ToolContext, args: DemoGetIssueArgs) -> DemoGetIssueResult:
    path = {"owner": args["owner"], "repo": args["repo"], "issue_number": args["issue_number"]}
    resp = await ctx.call(ops.ISSUES_GET_X_Y_, path=path)
    row: Any = ctx.project("issue", resp.data, "full")
    return {"issue": row}
