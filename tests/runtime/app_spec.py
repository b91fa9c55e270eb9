"""A tiny hand-made ServerSpec (two tools) and a fake GitHub for the end-to-end app tests."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx

from ghmcp_runtime import (
    Annotations,
    ErrorCode,
    FieldRule,
    Operation,
    ServerSpec,
    Shape,
    ToolContext,
    ToolError,
    ToolSpec,
    repair,
)
from ghmcp_runtime.core.errors import ENVELOPE_SCHEMA
from ghmcp_runtime.core.versioning import canonical_json


def issue_version(raw_issue: dict[str, Any]) -> str:
    """The hand-made spec's version token of a GitHub issue: "v1-" + 20 hex of sha256 over its
    user-editable state (a generated server declares its shape's `version:` fields instead)."""
    milestone = raw_issue.get("milestone")
    state = {
        "title": raw_issue.get("title"), "body": raw_issue.get("body"),
        "state": raw_issue.get("state"), "state_reason": raw_issue.get("state_reason"),
        "labels": sorted(str(lb["name"]) for lb in raw_issue.get("labels") or []),
        "assignees": sorted(str(a["login"]) for a in raw_issue.get("assignees") or []),
        "milestone": milestone.get("number") if isinstance(milestone, dict) else None,
        "locked": bool(raw_issue.get("locked", False)),
    }
    return "v1-" + hashlib.sha256(canonical_json(state)).hexdigest()[:20]

GET_ISSUE = Operation(operation_id="issues/get", method="GET",
                      path="/repos/{owner}/{repo}/issues/{issue_number}",
                      not_found="issue_not_found", success_status=(200,))
ISSUE_SHAPE = Shape(name="issue", fields=(
    FieldRule(name="number", path=("number",), detail="summary"),
    FieldRule(name="title", path=("title",), detail="summary"),
    FieldRule(name="labels", path=("labels", "[]", "name"), detail="summary"),
    FieldRule(name="body", path=("body",), detail="full"),
    FieldRule(name="version", path=(), detail="summary", computed=True),
))
OWNER = {"type": "string", "pattern": "^[A-Za-z0-9-]+$", "description": "Owner login."}
GET_INPUT = {
    "type": "object", "additionalProperties": False, "required": ["owner", "repo", "issue_number"],
    "properties": {
        "owner": OWNER,
        "repo": {"type": "string", "minLength": 1},
        "issue_number": {"type": "integer", "minimum": 1},
        "detail": {"type": "string", "enum": ["summary", "full"]},
    },
}
GET_SUCCESS = {
    "type": "object", "required": ["issue", "request_id"],
    "properties": {
        "issue": {"type": "object"},
        "request_id": {"type": "string"},
        "rate_limit_remaining": {"type": "integer"},
    },
}
FAIL_INPUT = {
    "type": "object", "additionalProperties": False, "required": ["mode"],
    "properties": {"mode": {"type": "string", "enum": ["tool_error", "crash", "bad_return", "ok"]}},
}
CALLS: list[str] = []


async def get_issue(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    CALLS.append("issues_get")
    path = {k: args[k] for k in ("owner", "repo", "issue_number")}
    resp = await ctx.call(GET_ISSUE, path=path)
    raw = resp.data
    issue = ctx.project("issue", raw, args.get("detail", "summary"), {"version": issue_version(raw)})
    return {"issue": issue}


async def fail(ctx: ToolContext, args: dict[str, Any]) -> Any:
    CALLS.append("demo_fail")
    mode = args["mode"]
    if mode == "tool_error":
        raise ToolError("cursor_expired", "The cursor has expired; restart the listing without it.",
                        details={"field": "cursor", "reason": "expired"},
                        repair=repair("restart_without_cursor", "demo_fail", {"mode": "ok"}))
    if mode == "crash":
        raise RuntimeError("internal detail ghp_" + "z" * 36)
    if mode == "bad_return":
        return ["not", "an", "object"]
    return {"identity": ctx.identity}


def _tool(name: str, **kw: Any) -> ToolSpec:
    return ToolSpec(name=name, error_codes=("invalid_field",), field_map={}, **kw)


SPEC = ServerSpec(
    name="demo-mcp", title="Demo MCP", version="0.0.1", fingerprint="fp-demo-1",
    instructions="Demo instructions.", api_version="2022-11-28",
    tools=(
        _tool("issues_get", title="Get an issue", description="Get one issue.",
              input_schema=GET_INPUT,
              output_schema={"type": "object", "oneOf": [GET_SUCCESS, ENVELOPE_SCHEMA]},
              annotations=Annotations(read_only=True, open_world=True),
              operations=(GET_ISSUE,), handler=get_issue,
              meta={"example.com/operations": ["issues/get"]}),
        _tool("demo_fail", title="Fail on purpose", description="Fails.",
              input_schema=FAIL_INPUT,
              output_schema={"type": "object", "oneOf": [
                  {"type": "object", "required": ["identity"]}, ENVELOPE_SCHEMA]},
              annotations=Annotations(read_only=False, open_world=False, destructive=False,
                                      idempotent=True),
              operations=(), handler=fail, meta={}),
    ),
    error_codes=(ErrorCode(code="invalid_field", temporary=False, description="d", repair="r"),),
    shapes={"issue": ISSUE_SHAPE},
)

ISSUE_JSON = {"number": 7, "title": "Bug", "body": "text", "labels": [{"name": "bug"}],
              "state": "open", "user": {"login": "octo"}}


class FakeGitHub:
    """Answers GET issue 7; records the Authorization header of every request."""

    def __init__(self, remaining: int = 4999) -> None:
        self.auth: list[str | None] = []
        self.remaining = remaining

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.auth.append(request.headers.get("authorization"))
        headers = {"x-ratelimit-remaining": str(self.remaining), "x-ratelimit-limit": "5000",
                   "content-type": "application/json"}
        if request.url.path == "/repos/octo/hello/issues/7":
            return httpx.Response(200, content=json.dumps(ISSUE_JSON).encode(), headers=headers)
        if request.url.path == "/repos/octo/hello":
            return httpx.Response(200, content=b"{}", headers=headers)
        return httpx.Response(404, content=b'{"message":"Not Found"}', headers=headers)
