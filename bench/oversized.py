"""Oversized tool arguments over HTTP: the longest event-loop stall and the RSS growth each causes.

    .venv/bin/python bench/oversized.py [--source DIR] [--label NAME] [--cases a,b]

For every case a fresh `github_issues_mcp --transport http` process on loopback gets one POST
with the oversized arguments while a separate process pings it every 10 ms; the stall is the
longest ping round trip around the big request (the event loop answers nothing else while it
is busy), next to the longest ping of an idle second before it (the noise floor). Memory comes from /proc: VmHWM (peak RSS, reset through clear_refs before the
request) and VmRSS two seconds after the answer (what stays). `--source DIR` runs the server
from another checkout (e.g. `git archive main | tar -x -C DIR`) with this venv, to compare the
same cases before and after a change. Each case runs in `--runs` fresh processes (the table shows the run
with the median stall; all are kept): the machine is shared, so single pings jitter by tens of
milliseconds. Results go to bench/results-oversized-<label>.json and a table on stdout. Nothing leaves 127.0.0.1; every loop is bounded; nothing asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

import httpx  # noqa: E402

from bench.common import BENCH, ROOT, WORK, base_env, free_port, rss_kib, stop, wait_port  # noqa: E402

TOKEN = "ghp_benchoversized000000000000000000000001"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "mcp-protocol-version": "2025-11-25", "authorization": f"Bearer {TOKEN}"}
BASE = {"owner": "octo-org", "repo": "roadmap", "issue_number": 1}
REQUEST_TIMEOUT_S = 180.0
PING_EVERY_S = 0.01
SETTLE_S = 2.0
EXTRA_ENV: dict[str, str] = {}


def _call(arguments: Any) -> bytes:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "github_update_issue", "arguments": arguments}}
    return json.dumps(body).encode()  # ", " separators, as the security review sent them


def _deep(levels: int) -> bytes:
    head = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": ' \
           b'"github_update_issue", "arguments": {"owner": "o", "repo": "r", "issue_number": 1, ' \
           b'"add_labels": '
    return head + b"[" * levels + b"]" * levels + b"}}}"


CASES: dict[str, Any] = {
    # the review's probes: 3.9 MB (51 s, 2.8 GB) and 1.2 MB (a concurrent ping stalled 10.7 s)
    "labels_1.3M_3.9MB": lambda: _call({**BASE, "add_labels": [0] * 1_300_000}),
    "labels_400k_1.2MB": lambda: _call({**BASE, "add_labels": [0] * 400_000}),
    # the worst that fits a 1 MiB body: one array, one string, many keys, deep nesting
    "labels_340k_1.0MB": lambda: _call({**BASE, "add_labels": [0] * 340_000}),
    "label_strings_200k_1.0MB": lambda: _call({**BASE, "add_labels": ["a"] * 200_000}),
    "body_1M_chars_1.0MB": lambda: _call({**BASE, "body": "x" * 1_000_000}),
    "unknown_keys_80k_1.0MB": lambda: _call({**BASE, **{f"k{i}": 0 for i in range(80_000)}}),
    "nested_250k_levels_0.5MB": lambda: _deep(250_000),
}


def _reset_peak(pid: int) -> None:
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # Linux: VmHWM := VmRSS


@contextmanager
def server(source: Path | None) -> Iterator[tuple[str, int]]:
    port = free_port()
    env = base_env(GITHUB_API_URL="http://127.0.0.1:9", GHMCP_SERVER_SECRET="bench", **EXTRA_ENV)
    if source is not None:
        env["PYTHONPATH"] = f"{source}:{source / 'generated'}"
    WORK.mkdir(exist_ok=True)
    log = WORK / "oversized-server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "github_issues_mcp", "--transport", "http", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=str(source or ROOT))
    try:
        wait_port(port, proc, what="server", log=log)
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        stop(proc)


def _ping_loop(url: str, seconds: float) -> None:
    """`--ping URL SECONDS` (a separate process, so the big request's client costs nothing here):
    pings every PING_EVERY_S for `seconds` and prints the round trips as JSON."""
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
    rtts: list[float] = []
    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=REQUEST_TIMEOUT_S, headers=HEADERS) as http:
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            http.post(url, content=ping)
            rtts.append(time.perf_counter() - t0)
            time.sleep(PING_EVERY_S)
    print(json.dumps(rtts))


def _pinger(url: str, seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, "--ping", url, str(seconds)],
                            stdout=subprocess.PIPE, text=True)


def _rtts(proc: subprocess.Popen[str]) -> list[float]:
    out, _ = proc.communicate(timeout=REQUEST_TIMEOUT_S + 60)
    rtts: list[float] = json.loads(out)
    return rtts


def measure(url: str, pid: int, body: bytes, ping_s: float, repeat: int) -> dict[str, Any]:
    with httpx.Client(timeout=REQUEST_TIMEOUT_S, headers=HEADERS) as http:
        for _ in range(3):  # warm: imports, validators compiled
            http.post(url, content=_call({**BASE, "add_labels": ["bug"]}))
        idle = _rtts(_pinger(url, 1.0))
        time.sleep(0.5)
        before = rss_kib(pid)["VmRSS"]
        _reset_peak(pid)
        pinger = _pinger(url, ping_s)
        time.sleep(0.5)  # the pinger is up and pinging
        t0 = time.perf_counter()
        resp = http.post(url, content=body)
        elapsed = time.perf_counter() - t0
    rtts = _rtts(pinger)
    peak = rss_kib(pid)["VmHWM"]
    time.sleep(SETTLE_S)
    after = rss_kib(pid)["VmRSS"]
    with httpx.Client(timeout=REQUEST_TIMEOUT_S, headers=HEADERS) as http:
        for _ in range(repeat):  # a leak grows with each; an allocator's high-water mark does not
            http.post(url, content=body)
    time.sleep(SETTLE_S)
    repeated = rss_kib(pid)["VmRSS"]
    return {"request_mb": round(len(body) / 1e6, 2), "answer": _answer(resp),
            "request_s": round(elapsed, 3), "longest_stall_ms": round(max(rtts) * 1000, 1),
            "idle_longest_ping_ms": round(max(idle) * 1000, 1), "pings": len(rtts),
            "rss_before_mib": round(before / 1024, 1),
            "peak_growth_mib": round((peak - before) / 1024, 1),
            "retained_growth_mib": round((after - before) / 1024, 1),
            "repeats": repeat, "retained_after_repeats_mib": round((repeated - before) / 1024, 1)}


def _answer(resp: httpx.Response) -> str:
    if resp.status_code != 200:
        return f"HTTP {resp.status_code}"
    data = resp.json()
    if "error" in data:
        return f"JSON-RPC {data['error']['code']}"
    env = data["result"].get("structuredContent") or {}
    details = env.get("details", {})
    return f"{env.get('code')} {details.get('field', '')}: {details.get('reason', '')}".strip()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", type=Path, default=None, help="checkout to run the server from")
    p.add_argument("--label", default="current")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--ping-seconds", type=float, default=3.0,
                   help="how long the pinger runs around each request (longer for slow cases)")
    p.add_argument("--repeat", type=int, default=5, help="same request again, for leaks")
    p.add_argument("--runs", type=int, default=3,
                   help="fresh server processes per case; the table shows the median run")
    p.add_argument("--ping", nargs=2, metavar=("URL", "SECONDS"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.ping:
        _ping_loop(args.ping[0], float(args.ping[1]))
        return
    results: dict[str, Any] = {}
    for name in args.cases.split(","):
        body = CASES[name]()
        runs = []
        for _ in range(args.runs):
            with server(args.source) as (url, pid):
                runs.append(measure(url, pid, body, args.ping_seconds, args.repeat))
            print(name, json.dumps(runs[-1]), flush=True)
        # the run with the median stall stands for the case; every run is kept
        runs.sort(key=lambda r: r["longest_stall_ms"])
        results[name] = {**runs[len(runs) // 2], "stall_ms_all_runs": [r["longest_stall_ms"] for r in runs],
                         "runs": runs}
    out = BENCH / f"results-oversized-{args.label}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n| case ({args.label}) | MB | answer | request s | longest stall ms | peak RSS +MiB "
          "| retained +MiB | after 1+N +MiB | stalls of all runs ms |\n|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['request_mb']} | {r['answer'][:60]} | {r['request_s']} | "
              f"{r['longest_stall_ms']} | {r['peak_growth_mib']} | {r['retained_growth_mib']} | "
              f"{r['retained_after_repeats_mib']} | {r['stall_ms_all_runs']} |")
    print(f"\nwritten: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
