"""Shared builders for the runtime tests: a ToolSpec, a ToolContext, GitHub-shaped responses."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from ghmcp_runtime.context import ToolContext
from ghmcp_runtime.cursors import HmacCursorCodec
from ghmcp_runtime.idempotency import IdempotencyRunner, MemoryStore
from ghmcp_runtime.model import Annotations, Operation, ToolSpec
from ghmcp_runtime.projection import ShapeProjector
from ghmcp_runtime.upstream import GitHubUpstream, RetryPolicy

TOKEN = "ghp_" + "S3cr3tT0k3n" * 3  # looks like a real token, so redaction would catch it too
PLAIN_TOKEN = "plain-secret-credential-4711"  # does not look like one: only discipline keeps it out

GET_ISSUE = Operation(
    operation_id="issues/get", method="GET", path="/repos/{owner}/{repo}/issues/{issue_number}",
    not_found="issue_not_found", success_status=(200,),
)
CREATE_ISSUE = Operation(
    operation_id="issues/create", method="POST", path="/repos/{owner}/{repo}/issues",
    not_found="repo_not_found", success_status=(201,),
)
UPDATE_ISSUE = Operation(
    operation_id="issues/update", method="PATCH", path="/repos/{owner}/{repo}/issues/{issue_number}",
    not_found="issue_not_found", success_status=(200,),
)


async def _no_handler(ctx: ToolContext, args: Any) -> Any:
    raise AssertionError("not called")


def tool_spec(name: str = "issues_get", **kw: Any) -> ToolSpec:
    fields: dict[str, Any] = {
        "name": name,
        "title": "Get an issue",
        "description": "Get one issue.",
        "input_schema": {"type": "object", "additionalProperties": False, "properties": {}},
        "output_schema": {"type": "object"},
        "annotations": Annotations(read_only=True, open_world=True),
        "error_codes": (),
        "operations": (GET_ISSUE,),
        "handler": _no_handler,
        "meta": {},
        "field_map": {"title": "title", "labels": "labels", "assignees": "assignee_logins"},
    }
    fields.update(kw)
    return ToolSpec(**fields)


def make_ctx(upstream: Any = None, *, credential: str | None = TOKEN, tool: ToolSpec | None = None,
             identity: str = "u_test") -> ToolContext:
    return ToolContext(
        tool=tool or tool_spec(), request_id="req_000000000001", identity=identity, arguments={},
        upstream=upstream, cursors=HmacCursorCodec(b"k"), idempotency=IdempotencyRunner(MemoryStore()),
        projector=ShapeProjector({}), credential=credential,
    )


def gh(status: int, body: Any = None, headers: Mapping[str, str] | None = None,
       raw: bytes | None = None) -> httpx.Response:
    content = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    return httpx.Response(status, content=content,
                          headers={"content-type": "application/json", **(headers or {})})


class Recorder:
    """A MockTransport handler replaying scripted responses (or exceptions), recording requests."""

    def __init__(self, *script: httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]):
        self.script = list(script)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, Exception):
            raise step
        if callable(step) and not isinstance(step, httpx.Response):
            return step(request)
        return step


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def upstream(rec: Recorder, *, base_url: str = "https://api.github.com", now: float = 1_000_000.0,
             sleeps: Sleeps | None = None, **kw: Any) -> GitHubUpstream:
    return GitHubUpstream(
        base_url=base_url, transport=httpx.MockTransport(rec), clock=lambda: now,
        sleep=sleeps or Sleeps(), jitter=lambda: 0.5, retry=kw.pop("retry", RetryPolicy()), **kw,
    )
