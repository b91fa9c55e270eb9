"""Hooks of the golden `minimal` case."""

from __future__ import annotations

from ghmcp_runtime import ToolContext

from . import operations as ops
from .types import DemoGetIssueArgs, DemoGetIssueResult


async def get_issue(ctx: ToolContext, args: DemoGetIssueArgs) -> DemoGetIssueResult:
    path = {"owner": args["owner"], "repo": args["repo"], "issue_number": args["issue_number"]}
    resp = await ctx.call(ops.ISSUES_GET, path=path)
    return {"title": resp.data["title"], "state": resp.data["state"]}
