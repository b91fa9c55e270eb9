"""The generated server wired to a fresh fake GitHub, in memory and over real transports."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.upstream import ForgeUpstream, RetryPolicy
from ghmcp_runtime.core.concurrent import MAX_CONCURRENT
from ghmcp_runtime.core.model import ServerSpec
from ghmcp_runtime.engine import pacing
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, build_server
from github_issues_mcp import SERVER

TOKEN = "ghp_functionaltesttoken000000000000000001"
OWNER, REPO = "octo-org", "roadmap"
ROOT = Path(__file__).resolve().parents[2]


def seed(fake: FakeGitHub) -> dict[str, Any]:
    """A small repository: labels, a milestone, issues (one with a thread), a pull request."""
    fake.add_user("octocat")
    fake.add_user("hubot")
    fake.add_token(TOKEN, "octocat", scopes=("repo",), collaborator_on=f"{OWNER}/{REPO}")
    fake.add_repo(OWNER, REPO)
    fake.grant("hubot", f"{OWNER}/{REPO}")
    for name in ("bug", "enhancement", "good first issue", "triage", "wontfix"):
        fake.add_label(OWNER, REPO, name)
    milestone = fake.add_milestone(OWNER, REPO, "v1.0")
    first = fake.add_issue(OWNER, REPO, "Crash on empty config", body="Steps: run with {}.\n" * 30,
                           labels=["bug", "triage"], author="hubot")
    for i in range(35):
        fake.add_comment(OWNER, REPO, first, f"comment {i}", author="hubot")
    fake.add_issue(OWNER, REPO, "Dark mode", body="Please add dark mode", labels=["enhancement"],
                   author="hubot", milestone=milestone)
    fake.add_issue(OWNER, REPO, "Old bug", body="fixed long ago", labels=["bug"], state="closed",
                   author="hubot")
    pr = fake.add_pull_request(OWNER, REPO, "Fix crash", body="fixes #1", labels=["bug"],
                               author="hubot")
    return {"first": first, "milestone": milestone, "pr": pr}


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    github = FakeGitHub()
    yield github
    assert github.violations == [], github.violations


@pytest.fixture
def seeded(fake: FakeGitHub) -> dict[str, Any]:
    return seed(fake)


FAST_RETRY = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05, max_total_wait_s=0.5)


def in_memory_server(
    fake: FakeGitHub,
    token: str | None = TOKEN,
    *,
    timeout: float = 5.0,
    cursors: Any = None,
    idempotency: Any = None,
    spec: ServerSpec = SERVER,
    lockdown: bool = False,
    exposure: ExposureFlags | None = None,
    max_concurrent: int = MAX_CONCURRENT,
    write_interval_s: float = 0.0,  # batches: no 1 s pause between writes in tests
    batch_max_wait_s: float = 60.0,
    server_secret: bytes | None = None,
) -> Any:
    """`server_secret`: the same for two servers makes them one caller's (replicas, a restart)."""
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=spec.api_version,
                             transport=fake.asgi_transport(), timeout=timeout, retry=FAST_RETRY)
    settings = Settings(token=token, lockdown=lockdown, exposure=exposure or ExposureFlags(),
                        max_concurrent=max_concurrent, server_secret=server_secret,
                        write_interval_s=write_interval_s, batch_max_wait_s=batch_max_wait_s)
    return build_server(spec, settings, upstream=upstream, cursors=cursors,
                        idempotency=idempotency)


def stdio_params(base_url: str, token: str | None = TOKEN, *args: str) -> StdioServerParameters:
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_API_URL": base_url,
           "GHMCP_CURSOR_SECRET": "functional-tests"}
    if token:
        env["GITHUB_TOKEN"] = token
    return StdioServerParameters(command=sys.executable, args=["-m", "github_issues_mcp", *args],
                                 env=env, cwd=str(ROOT))


def payload(result: Any) -> dict[str, Any]:
    """structuredContent, after checking the text content carries the same JSON (on success)."""
    data: dict[str, Any] = result.structured_content
    if not result.is_error:
        assert json.loads(result.content[0].text) == data
    return data


@pytest.fixture
def pace_stamps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When each paced write request got its turn (the server's clock), for every Pacer made."""
    stamps: list[float] = []

    class Recording(pacing.Pacer):
        async def __call__(self) -> None:
            await super().__call__()
            stamps.append(anyio.current_time())

    monkeypatch.setattr(pacing, "Pacer", Recording)
    return stamps
