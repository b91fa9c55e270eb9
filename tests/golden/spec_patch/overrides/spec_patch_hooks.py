"""Hooks of the golden `spec_patch` case."""

from __future__ import annotations

from typing import Any

from ghmcp_runtime import ToolContext

from . import operations as ops
from .types import DemoUpdateIssueArgs, DemoUpdateIssueResult


async def update_issue(ctx: ToolContext, args: DemoUpdateIssueArgs) -> DemoUpdateIssueResult:
    path = {"owner": args["owner"], "repo": args["repo"], "issue_number": args["issue_number"]}
    fields = {"title": "title", "body": "body", "state": "state", "milestone_number": "milestone"}
    patch = {spec: args[name] for name, spec in fields.items() if name in args}  # type: ignore[literal-required]
    resp = await ctx.call(ops.ISSUES_UPDATE, path=path, body=patch)
    row: Any = ctx.project("issue", resp.data, "full")
    return {"issue": row}
