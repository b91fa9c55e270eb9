"""Load: 2,000 `github_get_issue` calls at concurrency 32 over streamable HTTP against the fake.

The server is the console script (`github-issues-mcp --transport http`, its own process); the
fake GitHub is served on loopback (spec validation off: it is not what this measures). Asserted:
zero failed calls (a non-200, a JSON-RPC error or an error result) and loosely bounded memory
growth of the server process. p50/p99 and RSS before/after are printed (`-s`) and recorded as
test properties; the timed, side-by-side version of this run is in `make bench`.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakegithub import FakeGitHub
from tests.reliability.reliability_support import (
    OWNER,
    REPO,
    TOKEN,
    NoValidation,
    closed_port,
    small_seed,
)
from tests.support.processes import stop

CALLS = int(os.environ.get("LOAD_CALLS", "2000"))
CONCURRENCY = 32
ROOT = Path(__file__).resolve().parents[2]
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "mcp-protocol-version": "2025-11-25", "authorization": f"Bearer {TOKEN}"}


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _drive(url: str, total: int, concurrency: int) -> tuple[list[float], list[str]]:
    latencies: list[float] = []
    failures: list[str] = []
    ids = iter(range(1, total + 1))
    args = {"owner": OWNER, "repo": REPO, "issue_number": 1}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60, headers=HEADERS) as http:
        async def worker() -> None:
            for rid in ids:
                body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                        "params": {"name": "github_get_issue", "arguments": args}}
                t0 = time.perf_counter()
                try:
                    resp = await http.post(url, json=body)
                    data = resp.json() if resp.status_code == 200 else None
                    if not data or "result" not in data or data["result"].get("isError"):
                        failures.append(f"{resp.status_code} {resp.text[:300]}")
                except httpx.HTTPError as exc:
                    failures.append(repr(exc))
                latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, failures


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))] * 1000


def test_load_2000_calls_at_concurrency_32(record_property: Any) -> None:
    script = Path(sys.executable).with_name("github-issues-mcp")
    if not script.exists():
        pytest.fail(f"{script} is missing: install the project (make test does)", pytrace=False)
    fake = FakeGitHub()
    fake.contract = NoValidation(fake.contract)  # type: ignore[assignment]
    small_seed(fake)
    fake.set_rate_limit(TOKEN, limit=10**9, remaining=10**9)
    port = closed_port()
    with fake.serve() as fake_url, tempfile.TemporaryDirectory(prefix="ghmcp-load-") as tmp:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "GITHUB_API_URL": fake_url,
               "GHMCP_SERVER_SECRET": "load-test"}
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([str(script), "--transport", "http", "--port", str(port)],
                                    env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.post(url, json={}, headers=HEADERS, timeout=1)
                    break
                except httpx.HTTPError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"server did not start:\n{log.read_text(errors='replace')[-3000:]}")
                    time.sleep(0.05)
            _, warm_failures = asyncio.run(_drive(url, 64, 8))
            assert warm_failures == [], warm_failures[:3]
            before = _rss_mib(proc.pid)
            t0 = time.perf_counter()
            latencies, failures = asyncio.run(_drive(url, CALLS, CONCURRENCY))
            wall = time.perf_counter() - t0
            after = _rss_mib(proc.pid)
        finally:
            stop(proc)
    report = {"calls": CALLS, "concurrency": CONCURRENCY, "failed": len(failures),
              "calls_per_s": round(CALLS / wall, 1), "p50_ms": round(_pct(latencies, 0.5), 1),
              "p99_ms": round(_pct(latencies, 0.99), 1), "rss_before_mib": round(before, 1),
              "rss_after_mib": round(after, 1)}
    for key, value in report.items():
        record_property(key, value)
    print("\nload:", json.dumps(report))
    assert failures == [], f"{len(failures)} of {CALLS} calls failed, e.g. {failures[:3]}"
    assert len(latencies) == CALLS
    assert after - before < 64, f"server RSS grew {after - before:.1f} MiB over {CALLS} calls"
