"""`make bench`: every figure side by side with a peer measured in the same run.

    .venv/bin/python bench/run.py [--quick] [--skip-generate] [--only roundtrips,rate_limit]

Writes bench/results.json (all samples) and docs/BENCHMARKS.md (the tables). Sections:
generation (bench/generate.py), cold start, tool-surface size of every server against the
before in bench/results-surface-before.json (bench/surfaces.py; `--only surface` times nothing),
per-call overhead, response size,
HTTP throughput and a 2,000-call load run, round trips against a fake GitHub that answers after a
fixed delay, and the rate-limit budget of a repeated-read workload (bench/roundtrips.py).
`--only` re-measures the named sections and keeps the rest of bench/results.json. Peers: a bare `mcp` low-level server (the SDK floor),
FastMCP 4.1.6's OpenAPI provider on the same 17 issue operations (its own venv,
bench/.peer-venv, created on first use) and github-mcp-server's vendored tool snapshots
(bench/peers/github-mcp-server). Everything talks to a local fake GitHub on loopback
(bench/fake_server.py); nothing leaves the machine. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "generated")]

import httpx  # noqa: E402

from bench import surfaces  # noqa: E402
from bench.common import (  # noqa: E402
    BENCH,
    ROOT,
    WORK,
    RawStdio,
    base_env,
    compact,
    fake_process,
    free_port,
    nbytes,
    percentile,
    rss_kib,
    stop,
    summary,
    wait_port,
)
from bench.fake_server import ISSUE, LABELS, N_ISSUES, OWNER, REPO, TOKEN  # noqa: E402
from bench.peer import FASTMCP_VERSION, ensure_peer_venv, peer_versions, trimmed_spec  # noqa: E402
from bench.roundtrips import Fake, bench_rate_limit, bench_roundtrips  # noqa: E402

PY = sys.executable
OUR_SCRIPT = str(Path(PY).with_name("github-issues-mcp"))
GHMCP_DIR = BENCH / "peers" / "github-mcp-server"
GHMCP_TOOLS = ("issue_read", "issue_write", "search_issues", "list_issues", "add_issue_comment",
               "get_label", "list_label", "label_write")
GET_ISSUE_ARGS = {"owner": OWNER, "repo": REPO, "issue_number": ISSUE}
TRIAGE_FIELDS = ("assignees", "milestone")  # summary-row fields a triage question needs
LIST_QUERY = {"state": "open", "sort": "updated", "direction": "desc", "per_page": 30, "page": 1}
HTTP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                "mcp-protocol-version": "2025-11-25", "authorization": f"Bearer {TOKEN}"}
GH_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
              "Authorization": f"Bearer {TOKEN}"}
RESULTS = BENCH / "results.json"
DOC = ROOT / "docs" / "BENCHMARKS.md"


_CONSOLE = sys.stderr


def log(message: str) -> None:
    print(f"bench: {message}", file=_CONSOLE, flush=True)


def quiet_stderr() -> None:
    """Send this process's fd 2 (the in-process server's JSON logs) to bench/.work/bench.log;
    `log` keeps writing to the console."""
    global _CONSOLE
    _CONSOLE = os.fdopen(os.dup(2), "w", buffering=1)
    target = os.open(WORK / "bench.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(target, 2)
    os.close(target)


# -- processes ---------------------------------------------------------------------------------


def our_stdio(fake_url: str) -> RawStdio:
    return RawStdio([OUR_SCRIPT], base_env(GITHUB_API_URL=fake_url, GITHUB_TOKEN=TOKEN,
                                           GHMCP_CURSOR_SECRET="bench"),
                    stderr=WORK / "ours-stdio.log")


def floor_stdio(n_tools: int) -> RawStdio:
    return RawStdio([PY, str(BENCH / "sdk_floor.py"), str(n_tools)], base_env(),
                    stderr=WORK / "floor-stdio.log")


def peer_stdio(peer_py: Path, spec: Path, fake_url: str) -> RawStdio:
    return RawStdio([str(peer_py), str(BENCH / "peer_fastmcp.py"), "stdio", str(spec), fake_url, TOKEN],
                    base_env(), stderr=WORK / "fastmcp-stdio.log")


@contextmanager
def http_server(argv: list[str], env: dict[str, str], name: str) -> Iterator[tuple[str, int]]:
    port = free_port()
    logf = WORK / f"{name}-http.log"
    with logf.open("wb") as out:
        proc = subprocess.Popen([a.replace("{port}", str(port)) for a in argv], env=env,
                                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_port(port, proc, what=f"{name} HTTP server", log=logf)
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        stop(proc)


# -- 1. generation -----------------------------------------------------------------------------


def bench_generation(quick: bool) -> dict[str, Any]:
    reps = "7"
    out = BENCH / "results-generate.json"
    cmd = [PY, str(BENCH / "generate.py"), "--reps", reps, "--cli-reps", "0" if quick else reps,
           "--out", str(out)]
    log("generation: " + " ".join(Path(c).name if "/" in c else c for c in cmd[1:]))
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def bench_forge(quick: bool) -> dict[str, Any]:
    """One server per forge (issue 32): generation as a whole process by number of override files
    (bench/generate_files.py) and what a model reads of github-mcp by how it starts
    (bench/toolsets.py)."""
    from bench.toolsets import measure

    out = BENCH / "results-generate-files.json"
    cmd = [PY, str(BENCH / "generate_files.py"), "--reps", "5" if quick else "7", "--out", str(out)]
    log("forge: " + " ".join(Path(c).name if "/" in c else c for c in cmd[1:]))
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return {"generation_files": json.loads(out.read_text()), "toolsets": asyncio.run(measure())}


# -- 2. cold start (+ the tools/list answers for the surface section) ------------------------


def bench_cold_start(peer_py: Path, spec: Path, fake_url: str, reps: int) -> dict[str, Any]:
    n_tools = len(json.loads((ROOT / "generated" / "github_issues_mcp" / "tools.json").read_text())["tools"])
    ways: dict[str, Callable[[], RawStdio]] = {
        "ours": lambda: our_stdio(fake_url),
        "sdk_floor": lambda: floor_stdio(n_tools),
        "fastmcp": lambda: peer_stdio(peer_py, spec, fake_url),
    }
    seconds: dict[str, list[float]] = {k: [] for k in ways}
    peak: dict[str, list[float]] = {k: [] for k in ways}
    listing: dict[str, Any] = {}
    wire: dict[str, int] = {}
    for rep in range(-1, reps):  # -1: one discarded warm-up of each
        order = list(ways) if rep % 2 else list(reversed(ways))
        for name in order:
            driver = ways[name]()
            driver.start()
            try:
                message, line_bytes = driver.handshake_and_list()
                elapsed = time.perf_counter() - driver.t0
                mem = rss_kib(driver.pid)
            finally:
                driver.close()
            if "result" not in message:
                raise RuntimeError(f"{name}: tools/list failed: {message}")
            if rep >= 0:
                seconds[name].append(elapsed)
                peak[name].append(mem.get("VmHWM", 0) / 1024)
            listing[name] = message["result"]
            wire[name] = line_bytes
    log(f"cold start: {reps} interleaved runs x {len(ways)} ways done")
    return {
        "reps": reps,
        "tools": n_tools,
        "seconds": {k: summary(v) for k, v in seconds.items()},
        "peak_rss_mib": {k: summary(v) for k, v in peak.items()},
        "wire_line_bytes": wire,
        "_listing": listing,
        "commands": {
            "ours": "github-issues-mcp (stdio; raw driver: initialize + initialized + tools/list)",
            "sdk_floor": f"python bench/sdk_floor.py {n_tools}",
            "fastmcp": "bench/.peer-venv/bin/python bench/peer_fastmcp.py stdio <trimmed spec> ...",
        },
    }


def _import_profile(code: str, reps: int = 3) -> dict[str, float]:
    """Median self import time (ms) per top-level package, from `python -X importtime -c code`."""
    runs: list[dict[str, float]] = []
    for _ in range(reps):
        proc = subprocess.run([PY, "-X", "importtime", "-c", code], capture_output=True, text=True,
                              cwd=ROOT, env={**base_env(), "PYTHONPATH": str(ROOT / "generated")}, check=True)
        per: dict[str, float] = {}
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
                continue
            self_us, _cum, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
            top = name.split(".")[0]
            per[top] = per.get(top, 0.0) + int(self_us) / 1000
        runs.append(per)
    keys = set().union(*runs)
    return {k: statistics.median(r.get(k, 0.0) for r in runs) for k in keys}


def bench_imports() -> dict[str, Any]:
    """What the generated server imports on top of what the SDK floor imports."""
    ours = _import_profile("import github_issues_mcp.__main__")
    floor = _import_profile("import anyio, mcp.server, mcp.server.stdio, mcp.types")
    extra = {k: v for k, v in ours.items() if k not in floor and v > 0.5}  # packages only we import
    return {"ours_ms": sum(ours.values()), "floor_ms": sum(floor.values()),
            "extra_ms": dict(sorted(extra.items(), key=lambda kv: -kv[1])[:8])}


# -- 3. tool-surface size ---------------------------------------------------------------------


def bench_surface(previous: dict[str, Any], fastmcp_tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Every server's surface as served (in process: the same bytes as over stdio), the "before"
    kept in bench/results-surface-before.json, and the peers. FastMCP's tools come from the
    cold-start run; without one (`--only surface`) the previous run's figures are kept."""
    snaps = [json.loads((GHMCP_DIR / f"{name}.snap").read_text(encoding="utf-8")) for name in GHMCP_TOOLS]
    ours = surfaces.servers()
    before = json.loads(surfaces.BEFORE.read_text(encoding="utf-8"))
    return {
        "ours": ours["github-issues-mcp"],
        "servers": ours,
        "before": before["servers"],
        "before_ref": before["ref"],
        "fastmcp": surfaces.surface(fastmcp_tools) if fastmcp_tools is not None else previous["fastmcp"],
        "github_mcp_server": surfaces.surface(snaps),
    }


# -- 4. per-call overhead ---------------------------------------------------------------------


async def _time_calls(fn: Callable[[], Awaitable[Any]], warmup: int, calls: int) -> list[float]:
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t0)
    return samples


async def _ours_in_process(fake_url: str, warmup: int, calls: int) -> dict[str, list[float]]:
    from mcp import Client

    from ghmcp_runtime.serving import tool_calls
    from ghmcp_runtime.serving.app import Settings, build_server
    from github_issues_mcp import SERVER

    out: dict[str, list[float]] = {}
    handler: list[float] = []
    real = tool_calls.ToolRuntime.call_tool

    async def timed(self: Any, *args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await real(self, *args)
        finally:
            handler.append(time.perf_counter() - t0)

    async with httpx.AsyncClient(base_url=fake_url, headers=GH_HEADERS) as http:
        async def direct() -> None:
            # exactly the two requests github_get_issue makes: the issue, then its first comments page
            (await http.get(f"/repos/{OWNER}/{REPO}/issues/{ISSUE}")).json()
            (await http.get(f"/repos/{OWNER}/{REPO}/issues/{ISSUE}/comments",
                            params={"per_page": 30, "page": 1})).json()

        async def direct_one() -> None:
            (await http.get(f"/repos/{OWNER}/{REPO}/issues/{ISSUE}")).json()

        out["direct"] = await _time_calls(direct, warmup, calls)
        out["direct_one"] = await _time_calls(direct_one, warmup, calls)
    tool_calls.ToolRuntime.call_tool = timed  # type: ignore[method-assign]
    try:
        server = build_server(SERVER, Settings(token=TOKEN, api_url=fake_url,
                                               server_secret=b"bench"))
        for mode in ("auto", "legacy"):
            handler.clear()
            async with Client(server, mode=mode, cache=None) as client:
                async def call() -> None:
                    result = await client.call_tool("github_get_issue", GET_ISSUE_ARGS)
                    if result.is_error:
                        raise RuntimeError(str(result.structured_content))

                out[f"inmem_{mode}"] = await _time_calls(call, warmup, calls)
            if mode == "auto":
                out["handler"] = handler[-calls:]  # the runtime's call_tool: validation, hooks, HTTP
    finally:
        tool_calls.ToolRuntime.call_tool = real  # type: ignore[method-assign]
    return out


def _stdio_calls(driver: RawStdio, tool: str, args: dict[str, Any], warmup: int, calls: int) -> list[float]:
    samples = []
    for i in range(warmup + calls):
        t0 = time.perf_counter()
        message = driver.call("tools/call", {"name": tool, "arguments": args})
        elapsed = time.perf_counter() - t0
        result = message.get("result")
        if not result or result.get("isError"):
            raise RuntimeError(f"{tool} over stdio failed: {str(message)[:500]}")
        if i >= warmup:
            samples.append(elapsed)
    return samples


def bench_per_call(peer_py: Path, spec: Path, fake_url: str, reps: int, warmup: int,
                   calls: int) -> dict[str, Any]:
    layers: dict[str, list[list[float]]] = {}

    def add(name: str, samples: list[float]) -> None:
        layers.setdefault(name, []).append(samples)

    ours = our_stdio(fake_url)
    peer = peer_stdio(peer_py, spec, fake_url)
    for driver in (ours, peer):
        driver.start()
        driver.handshake_and_list()
    try:
        for rep in range(reps):
            for name, samples in asyncio.run(_ours_in_process(fake_url, warmup, calls)).items():
                add(f"ours_{name}", samples)
            add("ours_stdio", _stdio_calls(ours, "github_get_issue", GET_ISSUE_ARGS, warmup, calls))
            proc = subprocess.run(
                [str(peer_py), str(BENCH / "peer_fastmcp.py"), "inmem", str(spec), fake_url, TOKEN,
                 str(ISSUE), str(warmup), str(calls)],
                check=False, capture_output=True, text=True, cwd=ROOT)
            if proc.returncode != 0:
                raise RuntimeError(f"peer in-memory run failed:\n{proc.stderr[-3000:]}")
            for name, samples in json.loads(proc.stdout).items():
                add(f"fastmcp_{name}", samples)
            add("fastmcp_stdio", _stdio_calls(peer, "issuesget", GET_ISSUE_ARGS, warmup, calls))
            log(f"per-call: rep {rep + 1}/{reps}")
    finally:
        ours.close()
        peer.close()
    out: dict[str, Any] = {"reps": reps, "warmup": warmup, "calls_per_rep": calls, "layers": {}}
    for name, runs in layers.items():
        pooled = [s for run in runs for s in run]
        rep_medians = [statistics.median(run) * 1000 for run in runs]
        out["layers"][name] = {
            "median_ms": statistics.median(pooled) * 1000,
            "p90_ms": percentile(pooled, 0.9) * 1000,
            "rep_median_ms": summary(rep_medians),
        }
    pairs = {  # overhead = layer - the direct httpx call(s) of the same stack and process
        "ours_handler": ("ours_handler", "ours_direct"),
        "ours_inmem_auto": ("ours_inmem_auto", "ours_direct"),
        "ours_inmem_legacy": ("ours_inmem_legacy", "ours_direct"),
        "ours_stdio": ("ours_stdio", "ours_direct"),
        "fastmcp_handler": ("fastmcp_handler", "fastmcp_direct"),
        "fastmcp_inmem_auto": ("fastmcp_inmem_auto", "fastmcp_direct"),
        "fastmcp_inmem_legacy": ("fastmcp_inmem_legacy", "fastmcp_direct"),
        "fastmcp_stdio": ("fastmcp_stdio", "fastmcp_direct"),
    }
    lay = out["layers"]
    out["overhead_ms"] = {k: lay[a]["median_ms"] - lay[b]["median_ms"] for k, (a, b) in pairs.items()}
    out["overhead_rep_ms"] = {  # per-rep (layer median - direct median of the same rep): min-max
        k: summary([(statistics.median(x) - statistics.median(y)) * 1000
                    for x, y in zip(layers[a], layers[b], strict=True)])
        for k, (a, b) in pairs.items()}
    return out


async def _cache_cost(issue: Any, n: int) -> dict[str, float]:
    """Client CPU of one upstream GET with and without the conditional-request cache (hishel),
    on an in-process transport that answers like GitHub (ETag, max-age=60; 304 when it matches),
    so no network or fake GitHub is in the figure. Median µs, interleaved."""
    from ghmcp_runtime.calls.context import ToolContext
    from ghmcp_runtime.calls.cursors import HmacCursorCodec
    from ghmcp_runtime.calls.http_cache import HttpCache
    from ghmcp_runtime.calls.upstream import ForgeUpstream
    from ghmcp_runtime.core.model import Operation
    from ghmcp_runtime.core.projection import ShapeProjector
    from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
    from github_issues_mcp import SERVER

    body = compact(issue)
    headers = {"etag": 'W/"bench"', "cache-control": "private, max-age=60, s-maxage=60",
               "vary": "Accept, Authorization, Cookie, X-GitHub-OTP", "content-type": "application/json"}

    def github(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == headers["etag"]:
            return httpx.Response(304, headers=headers)
        return httpx.Response(200, content=body, headers=headers)

    op = Operation(operation_id="issues/get", method="GET", path="/repos/{owner}/{repo}/issues/{issue_number}",
                   not_found="issue_not_found", success_status=(200,))
    samples: dict[str, list[float]] = {"plain": [], "cached": []}
    ways: dict[str, tuple[ForgeUpstream, ToolContext]] = {}
    for name, cache in (("plain", None), ("cached", HttpCache("memory"))):
        up = ForgeUpstream(transport=httpx.MockTransport(github), cache=cache)
        ctx = ToolContext(tool=SERVER.tools[0], request_id="req_bench", identity="u_bench", arguments={},
                          upstream=up, cursors=HmacCursorCodec(b"k"),
                          idempotency=IdempotencyRunner(MemoryStore()), projector=ShapeProjector({}),
                          credential=TOKEN)
        await up.call(ctx, op, path=GET_ISSUE_ARGS, query=None, body=None)  # warm-up; stores the entry
        ways[name] = (up, ctx)
    for _ in range(n):
        for name, (up, ctx) in ways.items():
            t0 = time.perf_counter()
            await up.call(ctx, op, path=GET_ISSUE_ARGS, query=None, body=None)
            samples[name].append(time.perf_counter() - t0)
    for up, _ in ways.values():
        await up.aclose()
    return {"upstream_get_plain_us": statistics.median(samples["plain"]) * 1e6,
            "upstream_get_cached_us": statistics.median(samples["cached"]) * 1e6}


async def _breakdown(fake_url: str, n: int) -> dict[str, Any]:
    """Pieces of our per-call cost, each timed alone: the client's output validation, our argument
    validation, the log lines, the projection of the issue and its comments."""
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for
    from mcp import Client
    from referencing import Registry

    from ghmcp_runtime.core.logs import log_event
    from ghmcp_runtime.core.projection import ShapeProjector
    from ghmcp_runtime.guards.output_check import OutputCheck
    from ghmcp_runtime.guards.validation import ArgumentValidator
    from ghmcp_runtime.serving.app import Settings, build_server
    from github_issues_mcp import SERVER

    tool = next(t for t in SERVER.tools if t.name == "github_get_issue")
    server = build_server(SERVER, Settings(token=TOKEN, api_url=fake_url, server_secret=b"bench"))
    async with Client(server, mode="legacy", cache=None) as client:
        result = await client.call_tool("github_get_issue", GET_ISSUE_ARGS)
        listed = {t.name: t for t in (await client.list_tools()).tools}
    structured = result.structured_content
    schema = listed["github_get_issue"].output_schema
    validator = validator_for(schema)(schema, registry=Registry())
    args_validator = ArgumentValidator(tool.input_schema)
    answer_check = OutputCheck()
    answer_check.problem(tool, structured)  # compiled on a tool's first answer, as in a server
    projector = ShapeProjector(SERVER.shapes)
    async with httpx.AsyncClient(base_url=fake_url, headers=GH_HEADERS) as http:
        raw_issue = (await http.get(f"/repos/{OWNER}/{REPO}/issues/{ISSUE}")).json()
        raw_comments = (await http.get(f"/repos/{OWNER}/{REPO}/issues/{ISSUE}/comments")).json()

    def timed(fn: Callable[[], Any]) -> float:
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples) * 1e6

    def logs() -> None:
        for event in ("upstream", "upstream", "tool_call"):
            log_event(event, op="issues/get", method="GET", status=200, ms=1, attempt=1,
                      request_id="req_000000000000", upstream_request_id="0000:0000")

    def project() -> None:
        projector.project("issue", raw_issue, "full", {"version": "x"})
        for c in raw_comments:
            projector.project("comment", c, "full", {})

    async def one_request(label: str) -> float:
        async with httpx.AsyncClient(base_url=fake_url, headers=GH_HEADERS) as http:
            async def get() -> None:
                (await http.get(f"/repos/{OWNER}/{REPO}/issues/{ISSUE}")).json()

            return statistics.median(await _time_calls(get, 20, n)) * 1e6

    # httpcore 1.0.x runs `import sniffio` on every lock it takes; the package is not installed,
    # and a failed import is not cached, so each request scans sys.path. Measure both ways.
    installed = importlib.util.find_spec("sniffio") is not None
    missing = await one_request("as installed")
    stub = types.ModuleType("sniffio")
    stub.current_async_library = lambda: "asyncio"  # type: ignore[attr-defined]
    had = sys.modules.get("sniffio")
    sys.modules["sniffio"] = stub
    try:
        present = await one_request("with sniffio importable")
    finally:
        if had is None:
            sys.modules.pop("sniffio", None)
        else:
            sys.modules["sniffio"] = had
    return {
        "n": n,
        "httpx_request_as_installed_us": missing,
        "httpx_request_with_sniffio_us": present,
        "sniffio_installed": installed,
        "client_output_validation_us": timed(lambda: best_match(validator.iter_errors(structured))),
        "argument_validation_us": timed(lambda: args_validator.validate(GET_ISSUE_ARGS)),
        "answer_check_us": timed(lambda: answer_check.problem(tool, structured)),
        "log_lines_us": timed(logs),
        "projection_us": timed(project),
        **await _cache_cost(raw_issue, n),
    }


# -- 5. response size -------------------------------------------------------------------------


def bench_response_size(peer_py: Path, spec: Path, fake_url: str) -> dict[str, Any]:
    raw = httpx.get(f"{fake_url}/repos/{OWNER}/{REPO}/issues", params=LIST_QUERY, headers=GH_HEADERS)
    raw.raise_for_status()
    page = raw.json()
    out: dict[str, Any] = {"raw_page": {"issues": len(page), "bytes": len(raw.content),
                                        "compact_bytes": nbytes(page)}}
    with our_stdio(fake_url) as ours:
        ours.handshake_and_list()
        for detail in ("summary", "full"):
            rid = ours.request("tools/call", {"name": "github_search_issues", "arguments": {
                "owner": OWNER, "repo": REPO, "detail": detail}})
            message, line = ours.wait_for(rid)
            structured = message["result"]["structuredContent"]
            out[f"ours_{detail}"] = {"issues": len(structured["issues"]),
                                     "structured_bytes": nbytes(structured), "wire_line_bytes": line}
            if detail == "summary":  # what the triage fields (issue 21) cost on this page
                bare = {**structured, "issues": [{k: v for k, v in row.items() if k not in TRIAGE_FIELDS}
                                                 for row in structured["issues"]]}
                out["ours_summary"]["triage_fields_bytes"] = nbytes(structured) - nbytes(bare)
        rid = ours.request("tools/call", {"name": "github_get_issue", "arguments": {
            **GET_ISSUE_ARGS, "detail": "summary"}})
        message, line = ours.wait_for(rid)
        out["ours_get_issue_summary"] = {"structured_bytes": nbytes(message["result"]["structuredContent"]),
                                         "wire_line_bytes": line}
    with peer_stdio(peer_py, spec, fake_url) as peer:
        peer.handshake_and_list()
        rid = peer.request("tools/call", {"name": "issueslist_for_repo", "arguments": {
            "owner": OWNER, "repo": REPO, **LIST_QUERY}})
        message, line = peer.wait_for(rid)
        result = message["result"]
        out["fastmcp_list"] = {"issues": len(result["structuredContent"]["result"]),
                               "structured_bytes": nbytes(result["structuredContent"]),
                               "wire_line_bytes": line, "is_error": bool(result.get("isError"))}
    log("response size done")
    return out


# -- 6. HTTP throughput and load ----------------------------------------------------------------


def _rpc(tool: str, args: dict[str, Any], rid: int) -> bytes:
    return compact({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                    "params": {"name": tool, "arguments": args}})


# operation -> server -> (tool, arguments); "get_issue": ours makes 2 upstream requests (the issue
# and its first comments page), FastMCP's issuesget 1; "list_labels": 1 upstream request each.
HTTP_OPS: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {
    "get_issue": {"ours": ("github_get_issue", GET_ISSUE_ARGS),
                  "fastmcp": ("issuesget", GET_ISSUE_ARGS)},
    "list_labels": {"ours": ("github_list_labels", {"owner": OWNER, "repo": REPO}),
                    "fastmcp": ("issueslist_labels_for_repo",
                                {"owner": OWNER, "repo": REPO, "per_page": 100, "page": 1})},
}


# per task (issue 24): what one agent step needs, as one call of ours and as the fewest calls on
# FastMCP's one-tool-per-operation server (bench/roundtrips.py's tasks). A plan gives a worker's
# k-th task its calls; the triage writes toggle, each worker on its own issue, so they repeat.
Call = tuple[str, dict[str, Any]]
TaskPlan = Callable[[int, int], Sequence[Call]]
TRIAGE_FIRST = 2  # workers triage issues 2, 3, …: issue 1 is the one every read reads


def _single(tool: str, args: dict[str, Any]) -> TaskPlan:
    return lambda worker, k: ((tool, args),)


def _triage_labels(number: int) -> tuple[str, str]:
    """A label issue `number` carries in the bench seed (fake_server.bench_fake), and one it does
    not; names without spaces (FastMCP sends a path parameter's space as `+`, GitHub reads `+`)."""
    i = number - 1
    seeded = {LABELS[i % len(LABELS)], LABELS[(i * 3 + 1) % len(LABELS)]}
    plain = [x for x in LABELS if " " not in x]
    return next(x for x in plain if x in seeded), next(x for x in plain if x not in seeded)


def _triage(server: str) -> TaskPlan:
    """Close as not planned with one label swapped (even tasks), then undo it (odd ones)."""
    def plan(worker: int, k: int) -> Sequence[Call]:
        number = TRIAGE_FIRST + worker
        seeded, other = _triage_labels(number)
        add, remove = (other, seeded) if k % 2 == 0 else (seeded, other)
        state: dict[str, Any] = {"state": "closed", "state_reason": "not_planned"} if k % 2 == 0 else {"state": "open"}
        issue = {"owner": OWNER, "repo": REPO, "issue_number": number}
        if server == "ours":
            return (("github_update_issue", {**issue, **state, "add_labels": [add], "remove_labels": [remove]}),)
        return (("issuesupdate", {**issue, **state}), ("issuesadd_labels", {**issue, "body": {"labels": [add]}}),
                ("issuesremove_label", {**issue, "name": remove}))
    return plan


COMMENTS_PAGE = {**GET_ISSUE_ARGS, "per_page": 30, "page": 1}
# task -> (what, server -> plan, server -> calls per task)
HTTP_TASKS: dict[str, tuple[str, dict[str, TaskPlan], dict[str, int]]] = {
    "read_issue": ("read an issue with its comments",
                   {"ours": _single("github_get_issue", GET_ISSUE_ARGS),
                    "fastmcp": lambda w, k: (("issuesget", GET_ISSUE_ARGS), ("issueslist_comments", COMMENTS_PAGE))},
                   {"ours": 1, "fastmcp": 2}),
    "triage": ("triage: close as not planned and swap a label (then reopen and swap back)",
               {"ours": _triage("ours"), "fastmcp": _triage("fastmcp")}, {"ours": 1, "fastmcp": 3}),
}


async def _drive(url: str, plan: TaskPlan, total: int, concurrency: int) -> dict[str, Any]:
    """`total` tasks from `concurrency` workers, each task its plan's tools/call POSTs one after
    another (legacy era, no session: both servers run stateless with JSON responses). A task
    fails at its first non-200, JSON-RPC error or isError; `calls_per_s` counts tasks."""
    latencies: list[float] = []
    failures: list[str] = []
    counter = iter(range(total))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60, headers=HTTP_HEADERS) as http:
        async def worker(index: int) -> None:
            for k, rid in enumerate(counter):
                t0 = time.perf_counter()
                for tool, args in plan(index, k):
                    try:
                        resp = await http.post(url, content=_rpc(tool, args, rid + 1))
                        ok = resp.status_code == 200
                        data = resp.json() if ok else None
                        ok = ok and data is not None and "result" in data and not data["result"].get("isError")
                        if not ok:
                            failures.append(f"{tool}: {resp.status_code} {resp.text[:200]}")
                            break
                    except httpx.HTTPError as exc:
                        failures.append(f"{tool}: {exc!r}")
                        break
                latencies.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        wall = time.perf_counter() - t0
    return {"calls": total, "wall_s": wall, "calls_per_s": total / wall, "latencies": latencies,
            "failures": len(failures), "failure_samples": failures[:3]}


def bench_http(peer_py: Path, spec: Path, fake_url: str, reps: int, levels: dict[int, int],
               load_calls: int, load_concurrency: int) -> dict[str, Any]:
    commands = {
        "ours": ([OUR_SCRIPT, "--transport", "http", "--port", "{port}"],  # token per request
                 base_env(GITHUB_API_URL=fake_url, GHMCP_SERVER_SECRET="bench")),
        "fastmcp": ([str(peer_py), str(BENCH / "peer_fastmcp.py"), "http", str(spec), fake_url, TOKEN,
                     "{port}"], base_env()),
    }
    plans: dict[str, dict[str, TaskPlan]] = {
        **{op: {name: _single(*call) for name, call in by_server.items()} for op, by_server in HTTP_OPS.items()},
        **{f"task_{key}": by_server for key, (_, by_server, _) in HTTP_TASKS.items()}}
    runs: dict[str, dict[str, dict[int, list[dict[str, Any]]]]] = {
        op: {name: {c: [] for c in levels} for name in commands} for op in plans}
    fake = Fake(fake_url)
    fake.post("/_fake/call/checkpoint")  # every triage run starts from the seed (writes toggle)
    assert TRIAGE_FIRST + max(levels) <= N_ISSUES
    load: dict[str, Any] = {}
    with http_server(*commands["ours"], "ours") as (ours_url, ours_pid), \
            http_server(*commands["fastmcp"], "fastmcp") as (peer_url, peer_pid):
        endpoints = {"ours": (ours_url, ours_pid), "fastmcp": (peer_url, peer_pid)}
        for op, by_server in plans.items():  # warm-up, and a check that every call succeeds
            for name, (url, _) in endpoints.items():
                fake.reset()
                warm = asyncio.run(_drive(url, by_server[name], 40, 4))
                if warm["failures"]:
                    raise RuntimeError(f"{name} {op} over HTTP failed: {warm['failure_samples']}")
        for rep in range(reps):
            order = list(endpoints) if rep % 2 == 0 else list(reversed(endpoints))
            for op, by_server in plans.items():
                for concurrency, total in levels.items():
                    for name in order:
                        url = endpoints[name][0]
                        if op == "task_triage":
                            fake.reset()
                        runs[op][name][concurrency].append(
                            asyncio.run(_drive(url, by_server[name], total, concurrency)))
            log(f"http throughput: rep {rep + 1}/{reps}")
        fake.reset()
        fake.close()
        for name in ("ours", "fastmcp"):
            url, pid = endpoints[name]
            before = rss_kib(pid).get("VmRSS", 0) / 1024
            run = asyncio.run(_drive(url, _single(*HTTP_OPS["get_issue"][name]), load_calls, load_concurrency))
            after = rss_kib(pid).get("VmRSS", 0) / 1024
            load[name] = {
                "tool": HTTP_OPS["get_issue"][name][0],
                "calls": load_calls, "concurrency": load_concurrency, "failures": run["failures"],
                "failure_samples": run["failure_samples"], "calls_per_s": run["calls_per_s"],
                "wall_s": run["wall_s"],
                "p50_ms": percentile(run["latencies"], 0.5) * 1000,
                "p99_ms": percentile(run["latencies"], 0.99) * 1000,
                "rss_before_mib": before, "rss_after_mib": after,
            }
            log(f"load: {name} {load_calls} calls at {load_concurrency}: {run['failures']} failed")
    throughput: dict[str, Any] = {
        "reps": reps, "levels": {str(c): n for c, n in levels.items()},
        "tools": {op: {k: v[0] for k, v in d.items()} for op, d in HTTP_OPS.items()},
        "tasks": {f"task_{key}": {"what": what, "calls_per_task": calls}
                  for key, (what, _, calls) in HTTP_TASKS.items()}}
    for op, by_server in runs.items():
        throughput[op] = {}
        for name, by_level in by_server.items():
            throughput[op][name] = {}
            for concurrency, rep_runs in by_level.items():
                pooled = [x for r in rep_runs for x in r["latencies"]]
                throughput[op][name][str(concurrency)] = {
                    "calls_per_s": summary([r["calls_per_s"] for r in rep_runs]),
                    "p50_ms": percentile(pooled, 0.5) * 1000,
                    "p99_ms": percentile(pooled, 0.99) * 1000,
                    "failures": sum(r["failures"] for r in rep_runs),
                    "failure_samples": [s for r in rep_runs for s in r["failure_samples"]][:3],
                }
    return {"throughput": throughput, "load": load}


# -- report -------------------------------------------------------------------------------------


def environment(peer: dict[str, str]) -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
        "cpu": cpu, "ours": {p: version(p) for p in ("mcp", "httpx", "pydantic", "uvicorn", "starlette")},
        "peer": peer, "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "loadavg_start": os.getloadavg()[0],
    }


SECTIONS = ("generation", "cold_start", "surface", "per_call", "response_size", "http", "roundtrips",
            "agent_trial", "rate_limit", "untrusted_text", "coverage_surface", "forge", "forgejo_round_trips")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run; still >= 5 runs)")
    parser.add_argument("--skip-generate", action="store_true", help="reuse bench/results-generate.json")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite docs/BENCHMARKS.md")
    parser.add_argument("--only", default="", help="comma-separated sections to re-measure, keeping "
                        f"the others from bench/results.json: {', '.join(SECTIONS)}")
    parser.add_argument("--latency", type=float, default=0.1,
                        help="seconds the fake GitHub waits per answer in the round-trip section")
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    if only - set(SECTIONS):
        parser.error(f"--only: unknown section(s) {sorted(only - set(SECTIONS))}; choose from {SECTIONS}")
    if only and not RESULTS.exists():
        parser.error("--only needs an earlier full run's bench/results.json")
    wanted = only or set(SECTIONS)
    started = time.perf_counter()
    WORK.mkdir(parents=True, exist_ok=True)
    quiet_stderr()
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if only else {}
    # sections that need neither the peer nor the fake
    local = {"generation", "untrusted_text", "coverage_surface", "forge", "forgejo_round_trips"}
    peer_py = ensure_peer_venv() if wanted - local else Path()
    spec = trimmed_spec() if wanted - local else Path()
    reps = 5
    peer = peer_versions() if wanted - local else results["environment"]["peer"]
    results.update({"environment": environment(peer), "fastmcp": FASTMCP_VERSION})
    sections: dict[str, float] = results.get("section_s", {}) if only else {}
    mark = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        sections[name] = round(now - mark, 1)
        mark = now

    lap("setup")
    if "generation" in wanted:
        if args.skip_generate and (BENCH / "results-generate.json").exists():
            results["generation"] = json.loads((BENCH / "results-generate.json").read_text())
        else:
            results["generation"] = bench_generation(args.quick)
        lap("generation")
    with fake_process() if wanted - local else nullcontext("") as fake_url:
        if "cold_start" in wanted:
            cold = bench_cold_start(peer_py, spec, fake_url, 15)
            results["surface"] = bench_surface(results.get("surface", {}), cold["_listing"]["fastmcp"]["tools"])
            cold.pop("_listing")
            cold["imports"] = bench_imports()
            results["cold_start"] = cold
            lap("cold_start")
        if "surface" in wanted and "cold_start" not in wanted:
            results["surface"] = bench_surface(results["surface"], None)
            lap("surface")
        if "per_call" in wanted:
            results["per_call"] = bench_per_call(peer_py, spec, fake_url, reps, 20 if not args.quick else 5,
                                                 200 if not args.quick else 40)
            results["breakdown"] = asyncio.run(_breakdown(fake_url, 200))
            lap("per_call")
        if "response_size" in wanted:
            results["response_size"] = bench_response_size(peer_py, spec, fake_url)
            lap("response_size")
        if "http" in wanted:
            levels = {1: 40, 8: 96, 32: 192} if not args.quick else {1: 20, 8: 48, 32: 96}
            results.update(bench_http(peer_py, spec, fake_url, reps, levels,
                                      2000 if not args.quick else 400, 32))
            lap("http")
        if "roundtrips" in wanted:
            results["roundtrips"] = bench_roundtrips(fake_url, peer_py, spec, args.latency,
                                                     2 if args.quick else 3, log)
            lap("roundtrips")
        if "rate_limit" in wanted:
            results["rate_limit"] = bench_rate_limit(fake_url, peer_py, spec, log)
            lap("rate_limit")
    if "untrusted_text" in wanted:
        from bench.cleaner_cost import measure

        results["untrusted_text"] = measure()
        lap("untrusted_text")
    if "coverage_surface" in wanted:
        from bench.peer_surface import comparison

        results["coverage_surface"] = comparison()
        lap("coverage_surface")
    if "forge" in wanted:
        results["forge"] = bench_forge(args.quick)
        lap("forge")
    if "forgejo_round_trips" in wanted:
        from bench.forgejo_round_trips import results as forgejo_round_trips

        results["forgejo_round_trips"] = forgejo_round_trips()
        lap("forgejo_round_trips")
    if "agent_trial" in wanted:
        from bench.agent_trial import compare

        results["agent_trial"] = compare()
        lap("agent_trial")
    results["section_s"] = sections
    if not only:
        results["runtime_s"] = time.perf_counter() - started
    results["environment"]["loadavg_end"] = os.getloadavg()[0]
    from bench.report import render, write_charts

    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not args.no_doc:
        DOC.write_text(render(results), encoding="utf-8")
        write_charts(results, DOC.parent)
    log(f"wrote {RESULTS.relative_to(ROOT)}" + ("" if args.no_doc else f" and {DOC.relative_to(ROOT)}")
        + f" in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        import traceback

        traceback.print_exc(file=_CONSOLE)
        sys.exit(1)
