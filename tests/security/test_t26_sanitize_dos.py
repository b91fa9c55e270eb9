"""Security reviews t26 and n1: one outside contributor's issue (65,535 characters of "<?\\n"; n1's
`[]:b (` lines, which took the old scanner 21 s per read; the costliest shapes found since) must
not stall other callers. Over real HTTP, a caller keeps reading
the hostile issue (its body and three such comments) while another caller reads an ordinary
issue: the other caller's median latency stays within 2x its idle median (before the fix, its
calls waited out a 55 s read). The fake runs in its own process without spec validation
(bench/fake_server.py), so the test times the server, not the fake's validator."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.http.http_support import ROOT, _wait_for_port, free_port, http_server_process, server_env
from tests.support.hostile_text import repeated
from tests.support.processes import stop

OWNER, REPO = "octo-org", "roadmap"  # bench/fake_server.py's repository and token
ATTACKER = "ghp_benchtoken00000000000000000000000000001"
VICTIM = "ghp_victim00000000000000000000000000000002"
HOSTILE = {"t26 '<?\\n' lines": "<?\n", "n1 '[]:b (' lines": "[]:b (\n",
           "list items of open fences": "- ```\n", "inline tags": "<a>"}


@pytest.fixture(scope="module")
def fake_api() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "fake_server.py"), "--port", str(port)],
                            cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, proc, None, "bench/fake_server.py")
        api = f"http://127.0.0.1:{port}"
        seed(api, "add_token", token=VICTIM, login="hubot", collaborator_on=f"{OWNER}/{REPO}")
        for resource in ("core", "search"):
            seed(api, "set_rate_limit", token=VICTIM, limit=10**9, remaining=10**9,
                 resource=resource, reset="2099-01-01T00:00:00Z")
        yield api
    finally:
        stop(proc)


def seed(api: str, helper: str, **kwargs: Any) -> Any:
    response = httpx.post(f"{api}/_fake/call/{helper}", json=kwargs, timeout=30)
    return response.json()["result"] if response.status_code == 200 else None


def hostile_issue(api: str, unit: str) -> int:
    body = repeated(unit)
    number = int(seed(api, "add_issue", owner=OWNER, repo=REPO, title="innocent", body=body,
                      author="jane-doe"))
    for _ in range(3):
        seed(api, "add_comment", owner=OWNER, repo=REPO, number=number, body=body, author="jane-doe")
    return number


def get_issue(number: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "github_get_issue",
        "arguments": {"owner": OWNER, "repo": REPO, "issue_number": number}}}).encode()


def headers(token: str) -> dict[str, str]:
    return {"accept": "application/json, text/event-stream", "content-type": "application/json",
            "mcp-protocol-version": "2025-11-25", "authorization": f"Bearer {token}"}


async def latencies(url: str, hostile: int | None, calls: int = 30) -> list[float]:
    """The victim's `github_get_issue` latencies while the attacker reads `hostile` (if any),
    one read after another."""
    done = asyncio.Event()
    reads = 0

    async def attacker(client: httpx.AsyncClient) -> None:
        nonlocal reads
        while hostile is not None and not done.is_set():
            answer = await client.post(url, headers=headers(ATTACKER), content=get_issue(hostile))
            assert answer.status_code == 200
            reads += 1
            await asyncio.sleep(0.1)

    samples: list[float] = []
    async with httpx.AsyncClient(timeout=120) as client:
        attack = asyncio.create_task(attacker(client))
        await asyncio.sleep(0.1 if hostile is not None else 0)
        for _ in range(calls):
            started = time.perf_counter()
            answer = await client.post(url, headers=headers(VICTIM), content=get_issue(2))
            samples.append(time.perf_counter() - started)
            assert answer.status_code == 200
            assert b'"isError":false' in answer.content.replace(b" ", b"")
            await asyncio.sleep(0.005)
        done.set()
        await attack
    assert hostile is None or reads >= 2, "the attacker's reads did not overlap the victim's calls"
    return samples


@pytest.mark.parametrize("shape", HOSTILE)
def test_reading_a_hostile_issue_keeps_other_callers_within_twice_their_idle_latency(
    fake_api: str, shape: str
) -> None:
    number = hostile_issue(fake_api, HOSTILE[shape])
    with http_server_process(server_env(fake_api)) as url:
        asyncio.run(latencies(url, None, 10))  # warm-up: imports, connections, caches
        idle: list[float] = []
        busy: list[float] = []
        for _ in range(3):  # alternating, so a change in the machine's load hits both
            idle += asyncio.run(latencies(url, None))
            busy += asyncio.run(latencies(url, number))
    ratio = statistics.median(busy) / statistics.median(idle)
    assert ratio <= 2.0, (f"victim median {statistics.median(busy) * 1000:.1f} ms while the hostile "
                          f"issue is read vs {statistics.median(idle) * 1000:.1f} ms idle")
