"""Security review n4: batch pacing was per call (8 parallel batches of one token wrote 9.2
times a second with GHMCP_WRITE_INTERVAL_S=1), and over stateless HTTP a batch could not be
stopped: neither `notifications/cancelled` (a POST of its own, where no session knows the call)
nor a client that gave up and closed its connection stopped it; every item was still written.

Now one token's batches share one pace (engine/pacing.py), and over HTTP the same caller's
`notifications/cancelled` or its client going away (serving/cancellation.py) stops a running batch
between items: it answers `stopped: {reason: cancelled}` with what was done (stored under its
idempotency key, so a repeat of the call says what was done)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from itertools import pairwise
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.engine import pacing
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened
from tests.http.conftest import TOKEN_X, TOKEN_Y
from tests.http.http_support import http_server_process, server_env

pytestmark = pytest.mark.anyio
WRITES = ("POST", "PATCH", "PUT", "DELETE")
INTERVAL = 0.05
ITEMS = 12


MODERN = "2026-07-28"


def headers(token: str, era: str = "2025-06-18") -> dict[str, str]:
    sent = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": era}
    if era == MODERN:  # the stateless era routes by header too
        sent |= {"Mcp-Method": "tools/call", "Mcp-Name": "github_update_issues"}
    return sent


def batch_call(numbers: list[int], rid: Any, key: str | None = None, era: str = "2025-06-18") -> dict[str, Any]:
    arguments = {"owner": OWNER, "repo": REPO, "issue_numbers": numbers, "add_labels": ["wontfix"],
                 **({"idempotency_key": key} if key else {})}
    params: dict[str, Any] = {"name": "github_update_issues", "arguments": arguments}
    if era == MODERN:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def writes(fake: FakeGitHub) -> int:
    return sum(c.method in WRITES for c in fake.calls())


def wait_for_writes(fake: FakeGitHub, count: int, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while writes(fake) < count:
        assert time.monotonic() < end, f"no {count} writes within {seconds} s"
        time.sleep(0.02)


@pytest.fixture
def issues(fake: FakeGitHub, seeded: dict[str, Any]) -> list[int]:
    return [fake.add_issue(OWNER, REPO, f"batch target {i}", body="x", author="hubot") for i in range(ITEMS)]


@pytest.fixture
def slow_server(fake_url: str, issues: list[int]) -> Iterator[str]:
    """The console script over HTTP, one write every 0.3 s per token: a batch of 12 takes ~4 s."""
    with http_server_process(server_env(fake_url, GHMCP_WRITE_INTERVAL_S="0.3")) as url:
        yield url


async def test_one_tokens_parallel_batches_share_one_pace(
    fake: FakeGitHub, issues: list[int], pace_stamps: list[float]
) -> None:
    stamps = pace_stamps
    async with Opened(in_memory_server(fake, write_interval_s=INTERVAL)) as s, \
            anyio.create_task_group() as group:
        for part in range(4):  # four batches at once, three issues each, one token
            group.start_soon(s.ok, "github_update_issues", {
                "owner": OWNER, "repo": REPO, "issue_numbers": issues[part * 3:part * 3 + 3],
                "add_labels": ["wontfix"]})
    assert len(stamps) == writes(fake) == ITEMS
    # each write waited for the token's turn: never two closer than the interval, whichever batch
    assert all(b - a >= INTERVAL - 0.002 for a, b in pairwise(sorted(stamps)))


def test_pacers_are_per_caller_and_forget_idle_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    monkeypatch.setattr(pacing, "MAX_PACERS", 2)
    pacers = pacing.Pacers(1.0, clock=lambda: now[0])
    a, b = pacers.of("c_a"), pacers.of("c_b")
    assert a is pacers.of("c_a") and a is not b
    a.last = b.last = 0.0  # both paced just now: kept past the bound
    pacers.of("c_c")
    assert pacers.of("c_a") is a and pacers.of("c_b") is b
    now[0] = 5.0  # all idle now: the least recently asked are forgotten first (c_c, then c_a)
    pacers.of("c_d")
    assert pacers.of("c_a") is not a


def test_notifications_cancelled_over_stateless_http_stops_the_batch(
    fake: FakeGitHub, issues: list[int], slow_server: str
) -> None:
    """n4 (c): the same caller's notification stops its batch after the item in flight; another
    caller naming the same request id stops nothing."""
    answer: list[dict[str, Any]] = []
    running = threading.Thread(target=lambda: answer.append(httpx.post(
        slow_server, json=batch_call(issues, "batch-77"), headers=headers(TOKEN_X), timeout=60).json()))
    running.start()
    try:
        wait_for_writes(fake, 1)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": "batch-77", "reason": "user pressed stop"}}
        other = httpx.post(slow_server, json=cancel, headers=headers(TOKEN_Y), timeout=10)
        wait_for_writes(fake, 2)  # still running after another caller's notification
        own = httpx.post(slow_server, json=cancel, headers=headers(TOKEN_X), timeout=10)
    finally:
        running.join(60)
    assert other.status_code == own.status_code == 202
    result = answer[0]["result"]["structuredContent"]
    assert result["stopped"] == {"reason": "cancelled", "retry_after_ms": None}
    assert result["has_more"] and "next_cursor" in result
    assert 2 <= len(result["items"]) < ITEMS and writes(fake) == len(result["items"])


@pytest.mark.parametrize("era", ["2025-06-18", "2026-07-28"])
def test_a_client_that_goes_away_stops_the_batch(
    fake: FakeGitHub, issues: list[int], slow_server: str, era: str
) -> None:
    """n4 (b): the client closes its connection mid-batch; the batch stops after the item in
    flight, and a repeat with the key answers what was done, writing nothing more."""
    body = json.dumps(batch_call(issues, 1, key=f"gone-{era}", era=era)).encode()
    url = urlsplit(slow_server)
    head = [f"POST {url.path} HTTP/1.1", f"Host: {url.netloc}", f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in headers(TOKEN_X, era).items())]
    with socket.create_connection((url.hostname, url.port), timeout=10) as conn:
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        wait_for_writes(fake, 1)
    repeat = httpx.post(slow_server, json=batch_call(issues, 2, key=f"gone-{era}"),
                        headers=headers(TOKEN_X, "2025-06-18"), timeout=60).json()
    result = repeat["result"]["structuredContent"]
    assert result["stopped"] == {"reason": "cancelled", "retry_after_ms": None}
    assert 1 <= len(result["items"]) < ITEMS and writes(fake) == len(result["items"])
