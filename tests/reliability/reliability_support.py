"""Shared pieces of the reliability harness: a recording transport (what the server really sent,
raw), a small seeded fake, and the generated server wired to either."""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import httpx

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.upstream import ForgeUpstream, RetryPolicy
from ghmcp_runtime.core.model import Operation, ToolSpec
from ghmcp_runtime.serving.app import Settings, build_server
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from github_issues_mcp import SERVER

TOKEN = "ghp_reliabilitytoken0000000000000000000001"
OWNER, REPO = "octo-org", "roadmap"
TOOLS: dict[str, ToolSpec] = {t.name: t for t in SERVER.tools}
# reads: up to 3 attempts with millisecond backoff; writes are never retried
RETRY = RetryPolicy(base_delay_s=0.001, max_delay_s=0.004, max_total_wait_s=0.5)
FIXED_NOW = 1_700_000_000.0  # the upstream's clock, so rate-limit waits are deterministic
# what the server reads of its token at start (issue 37): GET /rate_limit
SCOPE_READ = Operation(operation_id="rate-limit/get", method="GET", path="/rate_limit",
                       not_found="not_found", success_status=(200,))
REPO_PROBE = Operation(operation_id="repos/get", method="GET", path="/repos/{owner}/{repo}",
                       not_found="repo_not_found", success_status=(200,))


@dataclass(frozen=True, slots=True)
class Sent:
    method: str
    raw_path: str  # as on the wire: percent-encoded, no query string
    raw_query: str


class Recorder(httpx.AsyncBaseTransport):
    """Wraps a transport and records every request the server sends, before it is sent (so
    refused connections and timeouts count as attempts too)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.sent: list[Sent] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raw = request.url.raw_path.decode("ascii")
        path, _, query = raw.partition("?")
        self.sent.append(Sent(request.method, path, query))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def small_seed(fake: FakeGitHub) -> dict[str, Any]:
    """One repository, five labels (`wontfix` and `obsolete` on no issue), a milestone, two issues
    (the first with three comments) and a pull request."""
    fake.add_user("octocat")
    fake.add_user("hubot")
    fake.add_token(TOKEN, "octocat", scopes=("repo",), collaborator_on=f"{OWNER}/{REPO}")
    fake.add_repo(OWNER, REPO)
    for name in ("bug", "enhancement", "triage", "wontfix", "obsolete"):
        fake.add_label(OWNER, REPO, name)
    milestone = fake.add_milestone(OWNER, REPO, "v1.0")
    first = fake.add_issue(OWNER, REPO, "Crash on empty config", body="Steps: run with {}.",
                           labels=["bug", "triage"], author="hubot")
    for i in range(3):
        fake.add_comment(OWNER, REPO, first, f"comment {i}", author="hubot")
    second = fake.add_issue(OWNER, REPO, "Dark mode", body="Please", labels=["enhancement"],
                            author="hubot", milestone=milestone)
    pr = fake.add_pull_request(OWNER, REPO, "Fix crash", body="fixes #1", labels=["bug"], author="hubot")
    return {"first": first, "second": second, "milestone": milestone, "pr": pr}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_for(transport: httpx.AsyncBaseTransport, *, base_url: str = "http://fake.test",
               timeout: float = 0.5, token: str | None = TOKEN,
               idempotency: IdempotencyRunner | None = None) -> Any:
    upstream = ForgeUpstream(base_url=base_url, api_version=SERVER.api_version, transport=transport,
                              timeout=timeout, retry=RETRY, clock=lambda: FIXED_NOW,
                              jitter=lambda: 0.5)
    # a batch stops at once on a rate limit here (the matrix sends no write twice)
    return build_server(SERVER, Settings(token=token, write_interval_s=0.0, batch_max_wait_s=0.1),
                        upstream=upstream,
                        idempotency=idempotency or IdempotencyRunner(MemoryStore()))


def _template_regex(template: str) -> re.Pattern[str]:
    out, pos = "", 0
    for m in re.finditer(r"\{([A-Za-z0-9_]+)\}", template):
        out += re.escape(template[pos:m.start()]) + f"(?P<{m.group(1)}>[^/]+)"
        pos = m.end()
    return re.compile("^" + out + re.escape(template[pos:]) + "$")


def endpoint_problems(tool: ToolSpec, args: Mapping[str, Any], sent: Sent) -> list[str]:
    """Why a request the tool sent is out of bounds ([] when it is one of the tool's declared
    endpoints, the repository probe or the read of the token's scopes at start, with every path
    segment a single non-dot segment and the owner/repo segments equal to the arguments)."""
    for op in (*tool.operations, REPO_PROBE, SCOPE_READ):
        if op.method != sent.method:
            continue
        m = _template_regex(op.path).match(sent.raw_path)
        if m is None:
            continue
        problems = []
        for name, raw in m.groupdict().items():
            value = unquote(raw)
            if value in (".", "..") or "/" in raw:
                problems.append(f"{name} segment {raw!r} is a dot or slash segment")
            if name in ("owner", "repo") and isinstance(args.get(name), str) and value != args[name]:
                problems.append(f"{name} segment {value!r} differs from the argument")
        return problems
    return [f"{sent.method} {sent.raw_path} is not an endpoint of {tool.name}"]


class NoValidation:
    """Stands in for `fake.contract` once the router is built: no openapi-core checks (~50 ms per
    request), for load runs where the contract is not what is being tested."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def request_errors(self, *args: Any, **kwargs: Any) -> list[str]:
        return []

    def response_errors(self, *args: Any, **kwargs: Any) -> list[str]:
        return []
