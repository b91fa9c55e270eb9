"""Shared builders for the runtime tests: a ToolSpec, a ToolContext, GitHub-shaped responses."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from ghmcp_runtime.calls.context import ToolContext
from ghmcp_runtime.calls.cursors import HmacCursorCodec
from ghmcp_runtime.calls.upstream import ForgeUpstream, RetryPolicy
from ghmcp_runtime.core.model import Annotations, Operation, ToolSpec
from ghmcp_runtime.core.projection import ShapeProjector
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore

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
             sleeps: Sleeps | None = None, **kw: Any) -> ForgeUpstream:
    return ForgeUpstream(
        base_url=base_url, transport=httpx.MockTransport(rec), clock=lambda: now,
        sleep=sleeps or Sleeps(), jitter=lambda: 0.5, retry=kw.pop("retry", RetryPolicy()), **kw,
    )


class StalledRenewals:
    """A store seen through an attempt whose renewals never arrive (its process stalled longer
    than the lease): everything else reaches the real store."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def renew(self, key: str, lease: str, lease_s: float = 0.0) -> bool:
        return True


async def stale_attempt_scenario(store: Any, stale_outcome: Any, lease_s: float = 0.6) -> None:
    """A's lease lapses while A stalls; B takes the key over and writes; then A finishes with
    `stale_outcome` (a result, or an exception to raise). A caller arriving while B still runs
    must neither write nor get A's answer, and the key must end with B's result."""
    import anyio

    from ghmcp_runtime.core.errors import ToolError

    kw: dict[str, Any] = {"key": "stale-key-0001", "scope": ("u_1", "t"), "fingerprint": "fp",
                          "recover": None}
    stalled = IdempotencyRunner(StalledRenewals(store), lease_s=lease_s)
    live = IdempotencyRunner(store, lease_s=lease_s, wait_s=lease_s)
    a_may_finish, b_may_finish, b_writing = anyio.Event(), anyio.Event(), anyio.Event()
    writes: list[str] = []
    answers: dict[str, Any] = {}

    async def stale_write() -> Any:
        await a_may_finish.wait()
        if isinstance(stale_outcome, BaseException):
            raise stale_outcome
        return stale_outcome

    async def b_write() -> Any:
        writes.append("B")
        b_writing.set()
        await b_may_finish.wait()
        return {"by": "B"}

    async def c_write() -> Any:
        writes.append("C")
        return {"by": "C"}

    async def call(name: str, runner: IdempotencyRunner, run: Any) -> None:
        try:
            answers[name] = await runner.run(run=run, **kw)
        except ToolError as err:
            answers[name] = err.code

    async with anyio.create_task_group() as group:
        group.start_soon(call, "A", stalled, stale_write)
        await anyio.sleep(lease_s * 2)  # A's lease has lapsed: nothing renewed it
        group.start_soon(call, "B", live, b_write)
        await b_writing.wait()  # B took the key over and is writing
        a_may_finish.set()
        await anyio.sleep(0.05)  # A finishes (stale)
        await call("C", live, c_write)  # B still holds the key
        b_may_finish.set()
    await call("D", live, c_write)  # after B: its result is the key's
    assert writes == ["B"], (writes, answers)
    assert answers["C"] in ("upstream_unavailable", {"by": "B"}), answers
    assert answers["B"] == answers["D"] == {"by": "B"}, answers


async def long_attempt_scenario(first_store: Any, second_store: Any, lease_s: float = 0.3) -> None:
    """A's write runs three leases long; B (the same store, or another replica's) gets the key
    after A's first lease would have run out: B waits for A's result and writes nothing."""
    import anyio

    kw: dict[str, Any] = {"key": "long-0001", "scope": ("u_x", "create"), "fingerprint": "fp",
                          "recover": None}
    release = anyio.Event()
    writes: list[str] = []
    results: dict[str, Any] = {}

    async def slow_write() -> Any:
        writes.append("A")
        await release.wait()
        return {"number": 1}

    async def duplicate_write() -> Any:
        writes.append("B")
        return {"number": 2}

    async def call(name: str, store: Any, run: Any) -> None:
        results[name] = await IdempotencyRunner(store, lease_s=lease_s, wait_s=5.0).run(run=run, **kw)

    async with anyio.create_task_group() as group:
        group.start_soon(call, "A", first_store, slow_write)
        await anyio.sleep(lease_s * 3)
        group.start_soon(call, "B", second_store, duplicate_write)
        await anyio.sleep(lease_s)
        release.set()
    assert writes == ["A"] and results == {"A": {"number": 1}, "B": {"number": 1}}
