"""Render docs/BENCHMARKS.md from the results of bench/run.py (also: `python bench/report.py`
re-renders from bench/results.json without measuring anything)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from bench import surfaces  # noqa: E402
from bench.charts import chart_path  # noqa: E402
from bench.rows import Row  # noqa: E402

CMD_RUN = "`make bench` (`.venv/bin/python bench/run.py`)"
TOOL_GOAL = 2000  # tools/list bytes per tool, on average (issue 12; generator/build/builder.py DEFAULT_TOOL_BUDGET)


def _ms(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f} ms"


def _s(x: float) -> str:
    return f"{x:.3f} s"


def _b(x: float) -> str:
    return f"{round(x):,} B"


def _mm(row: dict[str, Any], fmt: Callable[[float], str], scale: float = 1.0) -> str:
    """median (min\u2013max)"""
    return f"{fmt(row['median'] * scale)} ({fmt(row['min'] * scale).split(' ')[0]}\u2013{fmt(row['max'] * scale)})"


def _span(row: dict[str, Any]) -> str:
    return f"{row['min']:+.2f} \u2026 {row['max']:+.2f}"


def _levels(tp: dict[str, Any]) -> list[str]:
    return sorted(tp["levels"], key=int)


def _ratio(x: float) -> str:
    return f"{x:.2f}\u00d7"


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def summary_rows(r: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    gen = r["generation"]["seconds"]
    servers = len(r["generation"].get("servers", ["github_issues"]))
    rows.append(Row(
        "generation", f"Generation: generator run (load → write) on the full pinned spec, {servers} server(s)",
        _mm(gen["total"], _ms, 1000), "`json.load` " + _mm(gen["json.load"], _ms, 1000),
        gen["total"]["median"] / gen["json.load"]["median"], "lower", "a few \u00d7 `json.load`", None,
        "`python bench/generate.py --reps 7 --cli-reps 7`"))
    if "cli generate" in gen:
        rows.append(Row(
            "generation_cli", f"Generation, whole process: `python -m generator generate` ({servers} server(s))",
            _mm(gen["cli generate"], _ms, 1000), "`python -c json.load(...)` "
            + _mm(gen["cli json.load"], _ms, 1000),
            gen["cli generate"]["median"] / gen["cli json.load"]["median"], "lower",
            "≤ 5\u00d7", gen["cli generate"]["median"] / gen["cli json.load"]["median"] <= 5,
            "same (format cache warm: an unchanged render)"))
    if "cli generate (caches off)" in gen:
        cold = gen["cli generate (caches off)"]
        rows.append(Row(
            "generation_cli_cold", "… the same with every file re-formatted and every template compiled (GHMCP_FORMAT_CACHE=off)",
            _mm(cold, _ms, 1000), "`python -c json.load(...)` " + _mm(gen["cli json.load"], _ms, 1000),
            cold["median"] / gen["cli json.load"]["median"], "lower", "—", None, "same"))
    cs = r["cold_start"]["seconds"]
    mem = r["cold_start"]["peak_rss_mib"]
    rows.append(Row(
        "cold_floor", "Cold start: spawn → `tools/list` answered (stdio), vs the SDK floor "
        f"(bare low-level `mcp` server, {r['cold_start']['tools']} trivial tools)",
        _mm(cs["ours"], _s), _mm(cs["sdk_floor"], _s), cs["ours"]["median"] / cs["sdk_floor"]["median"],
        "lower", "≤ 1.10\u00d7", cs["ours"]["median"] / cs["sdk_floor"]["median"] <= 1.10,
        f"`github-issues-mcp` vs `python bench/sdk_floor.py {r['cold_start']['tools']}`, raw JSON-lines driver"))
    rows.append(Row(
        "cold_fastmcp", "Cold start vs FastMCP 4.1.6 `from_openapi` (17 issue operations)",
        _mm(cs["ours"], _s), _mm(cs["fastmcp"], _s), cs["ours"]["median"] / cs["fastmcp"]["median"],
        "lower", "—", None, "`bench/.peer-venv/bin/python bench/peer_fastmcp.py stdio …`"))
    rows.append(Row(
        "rss_fastmcp", "Peak RSS of the server at `tools/list`", f"{mem['ours']['median']:.1f} MiB",
        f"FastMCP {mem['fastmcp']['median']:.1f} MiB (floor {mem['sdk_floor']['median']:.1f})",
        mem["ours"]["median"] / mem["fastmcp"]["median"], "lower", "—", None, "`/proc/PID/status` VmHWM"))
    sf = r["surface"]
    ours_b, fm_b, gh_b = (sf[k]["array_bytes"] for k in ("ours", "fastmcp", "github_mcp_server"))
    rows.append(Row(
        "surface_fastmcp", "`tools/list` bytes vs FastMCP on the same operations",
        f"{_b(ours_b)} ({sf['ours']['tools']} tools)", f"{_b(fm_b)} ({sf['fastmcp']['tools']} tools)",
        ours_b / fm_b, "lower", "a fraction", ours_b < fm_b, "tools array, compact JSON; ours as served (bench/surfaces.py), FastMCP's from the "
        "cold-start runs"))
    rows.append(Row(
        "surface_ghmcp", "`tools/list` bytes vs github-mcp-server's 8 equivalent tools",
        _b(ours_b), f"{_b(gh_b)} ({sf['github_mcp_server']['tools']} tools, no outputSchema)",
        ours_b / gh_b, "lower", "≤ 1.00\u00d7", ours_b <= gh_b,
        "vendored `__toolsnaps__` (bench/peers/github-mcp-server)"))
    rows.append(Row(
        "surface_ghmcp_noout", "… the same without our outputSchemas (like for like)",
        _b(sf["ours"]["bytes_without_output_schemas"]), _b(gh_b),
        sf["ours"]["bytes_without_output_schemas"] / gh_b, "lower", "—", None, "same"))
    if "model_visible_bytes" in sf["ours"]:
        mine, theirs = sf["ours"], sf["github_mcp_server"]
        mv, gmv = mine["model_visible_bytes_comparable"], theirs["model_visible_bytes"]
        rows.append(Row(
            "surface_model_ghmcp", "Model-visible bytes (name, description, inputSchema) vs "
            "github-mcp-server's 8 equivalent tools at 64a49f34 (issue 24's measure)",
            f"{_b(mv)} ({mine['comparable_tools']} tools)", f"{_b(GHMCP_MODEL_VISIBLE_AT_ISSUE)} (8 tools)",
            mv / GHMCP_MODEL_VISIBLE_AT_ISSUE, "lower", "≤ 1.00\u00d7", mv <= GHMCP_MODEL_VISIBLE_AT_ISSUE,
            "`.venv/bin/python bench/surfaces.py`; compact tools array, outputSchemas and annotations "
            "left with the client; also a test (tests/generator/test_surface_size.py)"))
        rows.append(Row(
            "surface_model_vendored", "… vs the newest versions of those 8 tools found (vendored snapshots)",
            _b(mv), f"{_b(gmv)} ({theirs['tools']} tools)", mv / gmv, "lower", "—", None,
            "bench/peers/github-mcp-server (files of several later commits)"))
        rows.append(Row(
            "surface_model_whole", "… the whole issues server (with the batch tool github_update_issues)",
            f"{_b(mine['model_visible_bytes'])} ({mine['tools']} tools)", _b(gmv),
            mine["model_visible_bytes"] / gmv, "lower", "—", None, "same"))
    for name, now in sf.get("servers", {}).items():
        was = sf["before"].get(name)
        if was is None:
            continue
        n, b = now["result_bytes"], was["result_bytes"]
        rows.append(Row(
            f"surface_tool_{name}", f"`tools/list` bytes per tool, {name}: now vs before the cuts "
            f"({sf['before_ref']})", f"{_b(n / now['tools'])} ({_b(n)}, {now['tools']} tools)",
            f"{_b(b / was['tools'])} ({_b(b)})", n / b, "lower", f"≤ {_b(TOOL_GOAL)} per tool",
            n / now["tools"] <= TOOL_GOAL, "`make bench ONLY=surface` (bench/surfaces.py)"))
    narrow = next((t for t in sf.get("tokens", []) if t["server"] == "github-mcp"
                   and t["selection"] == "default toolsets" and t["token"].startswith("classic, no scope")), None)
    if narrow is not None:
        whole = narrow["model_visible_bytes"] + narrow["saved"]
        rows.append(Row(
            "surface_token", "Model-visible bytes, github-mcp's default toolsets, for a classic token "
            "with neither `repo` nor `public_repo` (issue 37: what it cannot use is hidden) vs every tool",
            f"{_b(narrow['model_visible_bytes'])} ({narrow['tools']} tools)", f"{_b(whole)} (every tool)",
            narrow["model_visible_bytes"] / whole, "lower", "—", None,
            "`.venv/bin/python bench/surfaces.py` (token table)"))
    pc = r["per_call"]
    ov, ovr = pc["overhead_ms"], pc["overhead_rep_ms"]
    lay = pc["layers"]
    for key, label, target in (
        ("inmem_auto", "in memory, official `Client` (auto → 2026-07-28)", "< 0.3 ms"),
        ("inmem_legacy", "in memory, official `Client` (legacy, 2025-11-25)", "—"),
        ("stdio", "over stdio (raw JSON-lines driver)", "—"),
    ):
        o, f = ov[f"ours_{key}"], ov[f"fastmcp_{key}"]
        rows.append(Row(
            f"call_{key}", f"Per-call overhead over direct httpx, {label}: `github_get_issue` vs "
            "FastMCP `issuesget`",
            f"+{o:.2f} ms (per rep {_span(ovr[f'ours_{key}'])})",
            f"+{f:.2f} ms (per rep {_span(ovr[f'fastmcp_{key}'])})",
            o / f, "lower", target, (o < 0.3) if target != "—" else None,
            f"{pc['reps']} interleaved reps \u00d7 {pc['calls_per_rep']} calls; direct = "
            f"{_ms(lay['ours_direct']['median_ms'])} (ours: 2 requests) / "
            f"{_ms(lay['fastmcp_direct']['median_ms'])} (FastMCP: 1)"))
    rs = r["response_size"]
    raw = rs["raw_page"]["bytes"]
    rows.append(Row(
        "resp_summary", "Response: 30-issue page, `detail: summary` (structuredContent) vs GitHub's raw JSON",
        _b(rs["ours_summary"]["structured_bytes"]), _b(raw), rs["ours_summary"]["structured_bytes"] / raw,
        "lower", "≤ 0.10\u00d7", rs["ours_summary"]["structured_bytes"] / raw <= 0.10,
        "`github_search_issues` vs `GET /repos/o/r/issues?per_page=30` on the fake"))
    rows.append(Row(
        "resp_full", "Response: the same page, `detail: full`", _b(rs["ours_full"]["structured_bytes"]),
        _b(raw), rs["ours_full"]["structured_bytes"] / raw, "lower", "—", None, "same"))
    rows.append(Row(
        "resp_fastmcp_wire", "Response on the wire (one stdio line) vs FastMCP `issueslist_for_repo`, same page",
        _b(rs["ours_summary"]["wire_line_bytes"]), _b(rs["fastmcp_list"]["wire_line_bytes"]),
        rs["ours_summary"]["wire_line_bytes"] / rs["fastmcp_list"]["wire_line_bytes"], "lower", "—", None,
        "text content + structuredContent, as sent"))
    tp = r["throughput"]
    for op, label in (("get_issue", "get an issue"), ("list_labels", "list labels")):
        for c in _levels(tp):
            o, f = tp[op]["ours"][c], tp[op]["fastmcp"][c]
            rows.append(Row(
                f"http_{op}_{c}", f"HTTP throughput, {label}, concurrency {c} (calls/s, higher is better)",
                f"{o['calls_per_s']['median']:.0f}/s ({o['calls_per_s']['min']:.0f}\u2013{o['calls_per_s']['max']:.0f});"
                f" p50 {_ms(o['p50_ms'], 1)}, p99 {_ms(o['p99_ms'], 1)}",
                f"{f['calls_per_s']['median']:.0f}/s ({f['calls_per_s']['min']:.0f}\u2013{f['calls_per_s']['max']:.0f});"
                f" p50 {_ms(f['p50_ms'], 1)}, p99 {_ms(f['p99_ms'], 1)}",
                o["calls_per_s"]["median"] / f["calls_per_s"]["median"], "higher", "—", None,
                f"{tp['levels'][c]} calls \u00d7 {tp['reps']} interleaved reps, streamable HTTP (stateless, JSON)"))
    for op, task in tp.get("tasks", {}).items():
        for c in _levels(tp):
            o, f = tp[op]["ours"][c], tp[op]["fastmcp"][c]
            n_ours, n_peer = task["calls_per_task"]["ours"], task["calls_per_task"]["fastmcp"]
            rows.append(Row(
                f"http_{op}_{c}", f"Per-task HTTP throughput, {task['what']}, concurrency {c} "
                f"(tasks/s; ours {n_ours} call, FastMCP {n_peer})",
                f"{o['calls_per_s']['median']:.0f}/s ({o['calls_per_s']['min']:.0f}\u2013{o['calls_per_s']['max']:.0f});"
                f" p50 {_ms(o['p50_ms'], 1)}",
                f"{f['calls_per_s']['median']:.0f}/s ({f['calls_per_s']['min']:.0f}\u2013{f['calls_per_s']['max']:.0f});"
                f" p50 {_ms(f['p50_ms'], 1)}",
                o["calls_per_s"]["median"] / f["calls_per_s"]["median"], "higher", "≥ 1.00\u00d7",
                o["calls_per_s"]["median"] >= f["calls_per_s"]["median"],
                f"{tp['levels'][c]} tasks \u00d7 {tp['reps']} interleaved reps, `make bench ONLY=http`"))
    ld = r["load"]
    o, f = ld["ours"], ld["fastmcp"]
    rows.append(Row(
        "load", f"Load: {o['calls']:,} calls at concurrency {o['concurrency']} (get an issue), calls/s",
        f"{o['calls_per_s']:.0f}/s, {o['failures']} failed, p50 {_ms(o['p50_ms'], 1)}, p99 {_ms(o['p99_ms'], 1)}, "
        f"RSS {o['rss_before_mib']:.1f} → {o['rss_after_mib']:.1f} MiB",
        f"{f['calls_per_s']:.0f}/s, {f['failures']} failed, p50 {_ms(f['p50_ms'], 1)}, p99 {_ms(f['p99_ms'], 1)}, "
        f"RSS {f['rss_before_mib']:.1f} → {f['rss_after_mib']:.1f} MiB",
        o["calls_per_s"] / f["calls_per_s"], "higher", "0 failed", o["failures"] == 0, "one run"))
    rows.extend(_budget_rows(r))
    rows.extend(_trial_rows(r))
    rows.extend(_coverage_surface_rows(r))
    rows.extend(_forge_rows(r))
    return rows


FORGE_CMD = "`make bench ONLY=forge` (bench/generate_files.py, bench/toolsets.py)"


def _forge_rows(r: dict[str, Any]) -> list[Row]:
    """Issue 32: generation by number of override files; github-mcp's dynamic start."""
    f = r.get("forge")
    if not f:
        return []
    g = f["generation_files"]
    cpu, base = g["cpu"], g["cpu"]["json.load"]["median"]
    counts = [k for k in cpu if k.endswith(" files")]
    rows = []
    for key, label in ((counts[-1], f"unchanged tree, {counts[-1]}"),
                       ("one file edited", f"{counts[-1]}, one of them edited (a save)")):
        x = cpu[key]
        rows.append(Row(
            f"generation_files_{key.replace(' ', '_')}",
            f"Generation, whole process (CPU), {label}: `python -m generator generate`",
            f"{_ms(x['median'] * 1000, 0)} ({_ms(x['min'] * 1000, 0)}\u2013{_ms(x['max'] * 1000, 0)})",
            f"`python -c json.load(...)` {_ms(base * 1000, 0)}", x["median"] / base, "lower", "≤ 5\u00d7",
            x["median"] / base <= 5, FORGE_CMD))
    t = f["toolsets"]["rows"]
    start = t["--dynamic-toolsets at start"]
    default = next(v for k, v in t.items() if k.startswith("default set"))
    rows.append(Row(
        "surface_dynamic_start", "Model-visible bytes: github-mcp --dynamic-toolsets at start vs "
        "without flags (its default toolsets)", f"{_b(start['model_visible_bytes'])} ({start['tools']} tools)",
        f"{_b(default['model_visible_bytes'])} ({default['tools']} tools)",
        start["model_visible_bytes"] / default["model_visible_bytes"], "lower", "≤ 5 tools at start",
        start["tools"] <= 5, FORGE_CMD))
    return rows


def _forge_details(r: dict[str, Any], w: Callable[[str], None]) -> None:
    f = r.get("forge")
    if not f:
        return
    g = f["generation_files"]
    w("## One server per forge: generation by number of override files, and what a model reads\n")
    w(f"{FORGE_CMD}. Whole processes, interleaved, {g['reps']} runs each after a warm-up, load "
      f"average {g['load_average'][0]:.1f} at the end. The sets: "
      + "; ".join(f"{k}: {', '.join(v)}" for k, v in g["files"].items()) + ". Each set is a git "
      "repository with its generated tree committed, so the breaking-change baseline is the "
      "committed one, as in this repository. *Unchanged*: nothing changed since the last run, each "
      "file's result comes from the result cache (generator/pipeline/result_cache.py; every input in its "
      "key); *one edited*: a comment appended to one file before each run, which is then parsed, "
      "built, linted and rendered again against its peers' cached facts; *caches off*: "
      "GHMCP_FORMAT_CACHE=off, every file parsed, built, linted, rendered and formatted by black, "
      "the description parsed as JSON. CPU is user + system of the process and its children (git); "
      "on this shared 2-CPU box it is steadier than wall time, which the same table gives.\n")
    from bench.generate_files import table as files_table
    from bench.toolsets import table as toolsets_table

    w(files_table(g) + "\n")
    w("What a model reads of github-mcp's tools/list by how it starts (the official client, in "
      "memory; model-visible = name, description and inputSchema of each listed tool, compact JSON). "
      "With --dynamic-toolsets the instructions are those of the start (a client reads them at "
      "`initialize`); an enabled toolset's tools arrive with the next tools/list.\n")
    w(toolsets_table(f["toolsets"]) + "\n")


PEER_SURFACE_CMD = "`make bench ONLY=coverage_surface` (bench/peer_surface.py); also a test"


def _coverage_surface_rows(r: dict[str, Any]) -> list[Row]:
    """Issue 33: per-tool and default-surface model-visible bytes against github-mcp-server."""
    c = r.get("coverage_surface")
    if not c:
        return []
    worst_name, worst = max(c["per_tool"].items(), key=lambda kv: kv[1]["ours"] / kv[1]["theirs"])
    d = c["default"]
    return [
        Row("surface_peer_tools", "Model-visible bytes per pull-request, repository and context tool vs "
            f"github-mcp-server's comparable tool at {c['peer_commit']} (the closest of "
            f"{len(c['per_tool'])}: `{worst_name}`)", _b(worst["ours"]), f"{_b(worst['theirs'])} "
            f"(`{worst['peer']}`)", worst["ours"] / worst["theirs"], "lower", "≤ 1.00\u00d7 each",
            all(x["ours"] <= x["theirs"] for x in c["per_tool"].values()), PEER_SURFACE_CMD),
        Row("surface_peer_default", "Model-visible bytes of the default surface: github-mcp without "
            f"flags vs github-mcp-server's default toolsets at {c['peer_commit']}",
            f"{_b(d['ours'])} ({d['ours_tools']} tools)", f"{_b(d['theirs'])} ({d['theirs_tools']} tools)",
            d["ours"] / d["theirs"], "lower", "≤ 1.00\u00d7", d["ours"] <= d["theirs"], PEER_SURFACE_CMD),
    ]


def _coverage_surface_details(r: dict[str, Any], w: Callable[[str], None]) -> None:
    c = r.get("coverage_surface")
    if not c:
        return
    d = c["default"]
    w("## Pull requests, repositories and context: what a model reads\n")
    w(f"{PEER_SURFACE_CMD}: name, description and inputSchema of each tool, compact JSON, against "
      f"github-mcp-server's tool doing the same, from its own snapshots at {c['peer_commit']} "
      "(bench/peers/github-mcp-server/64a49f34). Ours also publish outputSchemas, which clients keep "
      "for validation and models do not read.\n")
    w("| our tool | bytes | github-mcp-server | bytes | ratio |")
    w("|---|---:|---|---:|---:|")
    for ours, x in c["per_tool"].items():
        w(f"| `{ours}` | {x['ours']:,} | `{x['peer']}` | {x['theirs']:,} | {_ratio(x['ours'] / x['theirs'])} |")
    w("")
    w(f"The default surface (no `--toolsets`): github-mcp serves {d['ours_tools']} tools, "
      f"{_b(d['ours'])} of model-visible bytes; github-mcp-server's default toolsets (context, repos, "
      f"issues, pull_requests, users; no feature flags) serve {d['theirs_tools']}, {_b(d['theirs'])} "
      f"({_ratio(d['ours'] / d['theirs'])}).\n")


TRIAL_CMD = "`make bench ONLY=agent_trial` (bench/agent_trial.py)"


def _trial_rows(r: dict[str, Any]) -> list[Row]:
    t = r.get("agent_trial")
    if not t:
        return []
    ours, peer = t["ours"], t["peer"]
    tasks = len(ours["calls_per_task"])
    checks = f"; end state {ours['checks_passed']}/{ours['checks_total']}"
    peer_checks = f"; end state {peer['checks_passed']}/{peer['checks_total']}"
    return [
        *_code_trial_rows(t),
        Row("trial_calls", f"Agent trial, {tasks} tasks (single, triage, batch): tool calls, ours vs the "
            "peer's best sequence", f"{ours['tool_calls']}{checks}", f"FastMCP {peer['tool_calls']}{peer_checks}",
            ours["tool_calls"] / peer["tool_calls"], "lower", "≤ 0.70\u00d7",
            ours["tool_calls"] / peer["tool_calls"] <= 0.7
            and ours["checks_passed"] == ours["checks_total"], TRIAL_CMD),
        Row("trial_bytes", "Agent trial: result bytes the agent read", _b(ours["result_bytes"]),
            _b(peer["result_bytes"]), ours["result_bytes"] / peer["result_bytes"], "lower", "≤ 0.25\u00d7",
            ours["result_bytes"] / peer["result_bytes"] <= 0.25, "same"),
        Row("trial_tools", "Agent trial: `tools/list` the agent read", _b(ours["tools_list_bytes"]),
            _b(peer["tools_list_bytes"]), ours["tools_list_bytes"] / peer["tools_list_bytes"], "lower", "—",
            None, "same"),
    ]


def _code_trial_rows(t: dict[str, Any]) -> list[Row]:
    code = t.get("code")
    if not code:
        return []
    ours, peer = code["ours"], code["peer"]
    end = f"; end state {ours['checks_passed']}/{ours['checks_total']}"
    peer_end = f"; end state {peer['checks_passed']}/{peer['checks_total']}"
    return [
        Row("trial_code_calls", "Agent trial, pull-request and file tasks (review and merge; edit a file "
            "and open a pull request): tool calls", f"{ours['tool_calls']}{end}",
            f"FastMCP {peer['tool_calls']}{peer_end}", ours["tool_calls"] / peer["tool_calls"], "lower",
            "< 1.00\u00d7", ours["tool_calls"] < peer["tool_calls"]
            and ours["checks_passed"] == ours["checks_total"], "`make bench ONLY=agent_trial` "
            "(bench/code_trial.py)"),
        Row("trial_code_bytes", "Agent trial, pull-request and file tasks: result bytes the agent read",
            _b(ours["result_bytes"]), _b(peer["result_bytes"]), ours["result_bytes"] / peer["result_bytes"],
            "lower", "< 1.00\u00d7", ours["result_bytes"] < peer["result_bytes"], "same"),
    ]


def _code_trial_details(t: dict[str, Any], w: Callable[[str], None]) -> None:
    code = t.get("code")
    if not code:
        return
    ours, peer = code["ours"], code["peer"]
    w("### Pull-request and file tasks\n")
    w("`bench/code_trial.py`: the same scripted agent on github-mcp's `pull_requests` and `repos` "
      "toolsets, and the fewest calls an agent that knows FastMCP's tools needs over the same 13 "
      "operations (bench/peer.py `CODE_OPERATIONS`), each against the same seeded fake (the demo "
      "repository with code on main, an open pull request fixing it with a green `ci` check run, main "
      "protected by one approving review and `ci`), reset between them. *review*: find the pull "
      "request from a branch, read it with its files, reviews and checks, approve it, merge it "
      "(squash) guarded by the head it read. *edit*: read a file, commit a one-line change on a new "
      "branch guarded by the file's sha, open a pull request. FastMCP's agent decodes and encodes the "
      "base64 content itself and reads the pull request, files, reviews, check runs and statuses "
      "one call each.\n")
    w("| task | ours: calls | FastMCP: calls |")
    w("|---|---:|---:|")
    for task, n in ours["calls_per_task"].items():
        w(f"| {task} | {n} | {peer['calls_per_task'].get(task, 0)} |")
    w("")
    w("| | ours | FastMCP 4.1.6 | ratio |")
    w("|---|---:|---:|---:|")
    for key, label in (("tool_calls", "tool calls"), ("result_bytes", "result bytes"),
                       ("tools_list_bytes", "`tools/list` bytes")):
        w(f"| {label} | {ours[key]:,} | {peer[key]:,} | {_ratio(ours[key] / peer[key])} |")
    w(f"| end-state checks | {ours['checks_passed']}/{ours['checks_total']} | "
      f"{peer['checks_passed']}/{peer['checks_total']} | |")
    w(f"| error results | {ours['errors']} | {peer['errors']} | |")
    w("")


def _trial_details(r: dict[str, Any], w: Callable[[str], None]) -> None:
    t = r.get("agent_trial")
    if not t:
        return
    ours, peer = t["ours"], t["peer"]
    w("## 9. Agent trial: tasks in calls\n")
    w(f"{TRIAL_CMD}: a careful scripted agent on this server (official client, in memory) and the "
      "best sequence of calls on FastMCP's one-tool-per-operation server over the same 17 operations "
      "(bench/peer_fastmcp.py `trial`: it lists with the listing's own filters, reads labels off the "
      "rows it found and writes each issue once), each against the same seeded fake (the demo "
      "repository plus three closed issues about exports and two labels), which is reset between "
      "them. Result bytes are the text content of each result (what a model reads); `tools/list` "
      "is the tools array as each client received it. Every end-state check reads the fake.\n")
    w("| task | kind | ours: calls | FastMCP: calls |")
    w("|---|---|---:|---:|")
    from bench.agent_trial import KINDS
    order = list(KINDS)  # the trial's task order: results.json keeps keys sorted
    for task, n in sorted(ours["calls_per_task"].items(),
                          key=lambda item: order.index(item[0]) if item[0] in order else len(order)):
        w(f"| {task} | {KINDS.get(task, '?')} | {n} | {peer['calls_per_task'].get(task, 0)} |")
    w(f"| **total** | | **{ours['tool_calls']}** | **{peer['tool_calls']}** |")
    w("")
    w("| | ours | FastMCP 4.1.6 | ratio |")
    w("|---|---:|---:|---:|")
    for kind in ("single", "triage", "batch"):
        a, b = ours["calls_per_kind"].get(kind, 0), peer["calls_per_kind"].get(kind, 0)
        w(f"| calls, {kind} tasks | {a} | {b} | {_ratio(a / b) if b else '—'} |")
    w(f"| result bytes | {ours['result_bytes']:,} | {peer['result_bytes']:,} | "
      f"{_ratio(ours['result_bytes'] / peer['result_bytes'])} |")
    w(f"| `tools/list` bytes | {ours['tools_list_bytes']:,} | {peer['tools_list_bytes']:,} | "
      f"{_ratio(ours['tools_list_bytes'] / peer['tools_list_bytes'])} |")
    w(f"| end-state checks | {ours['checks_passed']}/{ours['checks_total']} | "
      f"{peer['checks_passed']}/{peer['checks_total']} | |")
    w(f"| error results | {ours['errors']} | {peer['errors']} | |")
    w("")
    w("**What limits it: tasks on one issue.** The batch and triage tasks are where calls go: each "
      "batch is one `github_update_issues` call (a search's filters in `match`, or a list of "
      "numbers) where the peer lists and then writes every issue; a triage question is one "
      "`github_search_issues` with its filters. On single-issue tasks both need about one call a "
      "step; ours pays one more where the agent learns a label is missing from the error it gets "
      "(the peer's sequence is told in advance), and one less where a read brings the comments "
      "along.\n")


def _rt(side: dict[str, Any]) -> str:
    return (f"{side['tool_calls']} tool call{'s' if side['tool_calls'] > 1 else ''}, "
            f"{side['requests']} requests, {side['round_trips']} sequential, {_s(side['wall_s'])}")


def _budget_rows(r: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    rt = r.get("roundtrips")
    if rt:
        lat = f"{rt['latency_s'] * 1000:.0f} ms"
        tasks = rt["tasks"]
        tot = {side: {k: sum(t[side][k] for t in tasks) for k in ("tool_calls", "requests", "round_trips")}
               for side in ("ours", "fastmcp")}
        rows.append(Row(
            "rt_all", f"Round trips, {len(tasks)} tasks (one per tool), fake GitHub answering after {lat}: "
            "sequential upstream round trips, summed", f"{tot['ours']['round_trips']} "
            f"({tot['ours']['tool_calls']} tool calls, {tot['ours']['requests']} requests)",
            f"FastMCP {tot['fastmcp']['round_trips']} ({tot['fastmcp']['tool_calls']} tool calls, "
            f"{tot['fastmcp']['requests']} requests)",
            tot["ours"]["round_trips"] / tot["fastmcp"]["round_trips"], "lower", "—", None,
            "`make bench ONLY=roundtrips` (bench/roundtrips.py; fake `/_fake/timeline`)"))
        first = tasks[0]
        rows.append(Row(
            "rt_close_relabel", f"Round trips: {first['what']} (`github_update_issue` vs FastMCP "
            + " + ".join(f"`{c}`" for c in first["fastmcp_calls"]) + ")",
            _rt(first["ours"]), _rt(first["fastmcp"]),
            first["ours"]["round_trips"] / first["fastmcp"]["round_trips"], "lower", "—", None, "same"))
    rl = r.get("rate_limit")
    if rl:
        on, off = rl["ours_cache"], rl["ours_no_cache"]
        rows.append(Row(
            "rl_cache", f"Rate-limit units for {rl['calls']} `github_get_issue` calls over {rl['issues']} "
            f"issues, {100 * rl['changed_per_pass'] // rl['issues']} % changed between passes: "
            "conditional requests vs none", f"{on['budget']} units ({on['not_modified']} of "
            f"{on['requests']} requests answered 304)", f"cache off {off['budget']} units "
            f"({off['requests']} requests); FastMCP `issuesget` {rl['fastmcp']['budget']} (1 request a call)",
            on["budget"] / off["budget"], "lower", "a 304 costs no budget",
            on["not_modified"] > 0 and on["budget"] < off["budget"],
            "`make bench ONLY=rate_limit` (GHMCP_HTTP_CACHE=memory vs off)"))
    ut = r.get("untrusted_text")
    if ut:
        sizes = ut["end_to_end"]["sizes"]
        field, big = sizes[str(ut["field_chars"])], sizes[str(4 * ut["field_chars"])]
        worst, worst_big = field["rows"][field["worst"]], big["rows"][big["worst"]]
        rows.append(Row(
            "untrusted_text", "Hostile untrusted text end to end: server CPU for `github_get_issue` "
            "with a hostile 64 KiB body and 3 comments (the costliest of each construct family, the "
            "security reviews' bodies) vs the same call on plain ones",
            f"{worst['ms']:.0f} ms ({field['worst']})", f"plain {field['plain_ms']:.0f} ms; 256 KiB "
            f"fields {worst_big['x_plain']:.2f}\u00d7 ({worst_big['ms']:.0f} vs {big['plain_ms']:.0f} ms)",
            worst["x_plain"], "lower", "\u2264 3\u00d7 at 64 and 256 KiB",
            worst["x_plain"] <= 3 and worst_big["x_plain"] <= 3,
            "`make bench ONLY=untrusted_text` (bench/cleaner_cost.py)"))
    return rows


# the summary's themes, in order: (title, row key prefixes)
THEMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Generation", ("generation",)),
    ("Start-up and memory", ("cold_", "rss_")),
    ("Tool surface: what a client and a model read", ("surface_",)),
    ("Per call and response size", ("call_", "resp_")),
    ("HTTP throughput, per call and per task", ("http_", "load")),
    ("Round trips and rate limit", ("rt_", "rl_")),
    ("Untrusted text", ("untrusted_",)),
    ("Agent trial", ("trial_",)),
)


def themed(rows: list[Row]) -> list[tuple[str, list[Row]]]:
    out: list[tuple[str, list[Row]]] = [(title, []) for title, _ in THEMES]
    for x in rows:
        index = next((i for i, (_, prefixes) in enumerate(THEMES) if x.key.startswith(prefixes)), None)
        if index is None:
            out.append((x.key, [x]))
        else:
            out[index][1].append(x)
    return [(title, xs) for title, xs in out if xs]


def with_peer(x: Row) -> bool:
    """A row whose other side is a peer (not our own earlier surface or a plain baseline)."""
    return not x.key.startswith(("generation", "surface_tool_", "surface_token")) and x.key != "untrusted_text"


def _advantage(x: Row) -> str:
    a, other = 1 / x.disadvantage, "peer" if with_peer(x) else "baseline"
    return f"ours {a:.2f}\u00d7" if a >= 1 else f"{other} {1 / a:.2f}\u00d7"


def _status(met: bool | None) -> str:
    return "" if met is None else (" ✔" if met else " ✘")


def weakest(rows: list[Row]) -> Row:
    """The peer comparison we lose by the widest factor (generation compares with json.load, not
    a peer, the like-for-like surface row restates the surface row, the per-tool surface rows
    compare with our own earlier surface, and the cleaner with a plain field, so all of those are
    left out)."""
    peers = [x for x in rows if not x.key.startswith(("generation", "rl_", "surface_tool_", "surface_token"))
             and x.key not in ("surface_ghmcp_noout", "surface_model_whole", "surface_model_vendored", "rt_all",
                                 "untrusted_text")]
    return max(peers, key=lambda x: x.disadvantage)


# github-mcp-server's 8 comparable tools at 64a49f34, name + description + inputSchema, compact
# (the measure issue 24 set as the target; bench/peers holds later versions of the same files)
GHMCP_MODEL_VISIBLE_AT_ISSUE = 11_380


def _explain_model_visible(ours: dict[str, Any], gh: dict[str, Any]) -> str:
    per = {name: p["model_visible"] for name, p in ours["per_tool"].items()}
    top = sorted(per.items(), key=lambda kv: -kv[1])[:3]
    return (
        f"**What limits it: the input contract, not the prose.** What a model reads of our "
        f"{ours['comparable_tools']} comparable tools is {_b(ours['model_visible_bytes_comparable'])} "
        f"(github-mcp-server's {gh['tools']}, newest snapshots: {_b(gh['model_visible_bytes'])}); the "
        "largest are " + ", ".join(f"`{n}` {_b(b)}" for n, b in top)
        + f". Parameter descriptions take {_b(ours['input_parameter_description_bytes'])} (every "
        "optional parameter says what omitting it means, every enum value is named: contract rules "
        "`[3.required-optional]` and enum-explained), then closed schemas with their length bounds "
        "and one example call per description (`[3.descriptions]`). Issue 24 dropped descriptions "
        "that repeat the name or the schema, restated defaults, and the identifier patterns (owner, "
        "repo, logins, label names: `advertise_pattern: false`, checked by the server, not advertised).")


def _sniffio_note(b: dict[str, Any]) -> str:
    if b.get("sniffio_installed", True):
        return ""
    saved = b["httpx_request_as_installed_us"] - b["httpx_request_with_sniffio_us"]
    return (f" Every upstream request of ours (and the httpx direct baseline, so it cancels out of "
            f"the overhead) pays a library cost: `httpx` 0.28's `httpcore` runs "
            f"`import sniffio` on each connection-pool lock, `sniffio` is not installed, and a failed "
            f"import is retried (a sys.path scan) every time: one loopback request takes "
            f"{b['httpx_request_as_installed_us'] / 1000:.2f} ms as installed vs "
            f"{b['httpx_request_with_sniffio_us'] / 1000:.2f} ms with `sniffio` importable "
            f"({saved:.0f} µs per request, twice per `github_get_issue`; FastMCP's `httpx2` stack "
            f"does not pay it).")


def explain(row: Row, r: dict[str, Any]) -> str:
    sf = r["surface"]
    ours, gh = sf["ours"], sf["github_mcp_server"]
    key = row.key
    if key.startswith("surface_ghmcp"):
        t, g = ours["totals"], gh["totals"]
        pd, gpd = ours["input_parameter_description_bytes"], gh["input_parameter_description_bytes"]
        return (
            f"**What limits it: the contract we publish.** Our {ours['tools']} tools take "
            f"{_b(ours['array_bytes'])}: inputSchemas {_b(t['inputSchema'])} ({_pct(ours['share']['inputSchema'])}; "
            f"{_b(pd)} of it parameter descriptions), outputSchemas {_b(t['outputSchema'])} "
            f"({_pct(ours['share']['outputSchema'])}; {_b(ours['error_branch_bytes'])} of it the error-envelope "
            f"branch repeated in each tool's `oneOf`), tool descriptions {_b(t['description'])} "
            f"({_pct(ours['share']['description'])}). github-mcp-server's {gh['tools']} tools "
            f"({_b(gh['array_bytes'])}) publish no outputSchema and no error contract, open "
            f"inputSchemas ({gh['closed_input_schemas']} of {gh['tools']} closed; ours "
            f"{ours['closed_input_schemas']} of {ours['tools']}) without patterns or length limits, "
            f"{_b(gpd)} of parameter descriptions and {_b(g['description'])} of tool descriptions. "
            f"Without our outputSchemas we are at {_b(ours['bytes_without_output_schemas'])} "
            f"({ours['bytes_without_output_schemas'] / gh['array_bytes']:.2f}\u00d7); of that remaining "
            f"gap, tool descriptions account for {_b(t['description'] - g['description'])} (each of ours "
            "says when to use it and carries one example call), inputSchemas for "
            f"{_b(t['inputSchema'] - g['inputSchema'])} (closed schemas with `pattern`/`maxLength` limits "
            "that let the server refuse bad input before any request, and for every optional parameter "
            "what omitting it means), the rest titles and annotations. The target (no larger while "
            "carrying outputSchemas) is not met: with every description removed, our schemas alone take "
            f"{_b(ours['bytes_without_any_description'])} "
            f"({ours['bytes_without_any_description'] / gh['result_bytes']:.2f}\u00d7 github-mcp-server's "
            "whole surface)."
        )
    if key.startswith("surface_model_"):
        return _explain_model_visible(ours, gh)
    if key.startswith("surface_tool_"):
        return _explain_tool_budget(r)
    if key == "cold_floor":
        imp = r["cold_start"].get("imports")
        detail = ""
        if imp:
            parts = ", ".join(f"`{k}` {v:.0f} ms" for k, v in list(imp["extra_ms"].items())[:5])
            detail = (f" `python -X importtime` in the same run: {imp['ours_ms']:.0f} ms of imports for "
                      f"the server vs {imp['floor_ms']:.0f} ms for the floor; packages only the server imports: {parts}.")
        scopes = ""
        read = Path(__file__).resolve().parent / "results-scope-read.json"
        if read.exists():
            sr = json.loads(read.read_text(encoding="utf-8"))
            scopes = (f" Since issue 37 the server also reads the token's scopes before it answers "
                      f"tools/list (one request, and the upstream client it needs): "
                      f"`bench/scope_read_cost.py` measured github-mcp's spawn → tools/list at "
                      f"{sr['read']['median'] * 1000:.0f} ms with the read and "
                      f"{sr['off']['median'] * 1000:.0f} ms with `GHMCP_TOKEN_SCOPES=0` "
                      f"({sr['ratio']:.2f}\u00d7; bench/results-scope-read.json).")
        return (
            "**What limits it: imports, and the token's scopes.** Apart from the scope read, "
            "nothing is computed at start-up (the tools/list answer is prebuilt), so the rest of "
            "the gap to the floor is the modules the server needs beyond the SDK. Since issue 24 "
            "those are only what `initialize` and `tools/list` need (settings and their checks, "
            "the caller's surface, discovery, the package's tools.json); the engine, the "
            "idempotency store, the declared steps and hooks (the generated `handlers.py`) load "
            "with the first tools/call, resources/read or completion." + detail + scopes
        )
    if key.startswith("call_"):
        b = r.get("breakdown", {})
        extra = ""
        if b:
            extra = (f" Measured separately in the same run: the official client's revalidation of "
                     f"our structuredContent against the `oneOf` outputSchema costs "
                     f"{b['client_output_validation_us']:.0f} µs, our argument validation "
                     f"{b['argument_validation_us']:.0f} µs, the three JSON log lines per call "
                     f"{b['log_lines_us']:.0f} µs, the projection {b['projection_us']:.0f} µs.")
            if "answer_check_us" in b:
                extra += (f" Our own check of the answer against that outputSchema (compiled) costs "
                          f"{b['answer_check_us']:.0f} µs.")
            extra += _sniffio_note(b)
            if "upstream_get_cached_us" in b:
                extra += (f" The conditional-request cache (hishel, on by default) costs client CPU: one "
                          f"revalidated GET takes {b['upstream_get_cached_us']:.0f} µs against "
                          f"{b['upstream_get_plain_us']:.0f} µs without it (in-process transport, no "
                          "network), mostly hishel parsing Cache-Control headers; `github_get_issue` "
                          "pays it twice.")
        return (
            "**What limits it: the SDK round trip and validation on both ends.** The overhead is "
            "the MCP layer (JSON-RPC framing, pydantic models, the client's output validation) plus "
            f"our handler (argument validation, projection, logging: +{r['per_call']['overhead_ms']['ours_handler']:.2f} ms "
            f"over the two direct requests; FastMCP's `call_tool` adds +{r['per_call']['overhead_ms']['fastmcp_handler']:.2f} ms "
            f"over its one)." + extra
        )
    if key.startswith("http_task_triage"):
        ours = next((t["ours"] for t in r.get("roundtrips", {}).get("tasks", []) if t["key"] == "close_relabel"), None)
        sent = (f" (the round-trip section: ours {ours['requests']} upstream requests in "
                f"{ours['round_trips']} round trips, FastMCP 3 in 3)") if ours else ""
        return (
            "**What limits it: upstream requests per task on a CPU-bound box.** Server, fake GitHub "
            "and load generator share two CPUs, so the side sending fewer HTTP requests wins under "
            "load. One `github_update_issue` sends five requests where FastMCP's three calls send "
            f"three{sent}: the label catalog (a cached revalidation) and the issue are read first, "
            "so a missing label is refused before any write, only differing fields are written and "
            "the answer reports what GitHub shows (FastMCP writes blind and cannot tell). At "
            "concurrency 1 the single call wins (one MCP round trip instead of three); the medians' "
            "ranges overlap at 8 and 32, and across runs this ratio moved between 0.8\u00d7 and 1.5\u00d7."
        )
    if key.startswith("http_") or key == "load":
        return (
            "**What limits it: CPU shared on a 2-CPU box.** Server, fake GitHub and load generator "
            "share two CPUs, so throughput is CPU-bound; `github_get_issue` makes two upstream "
            "requests (the issue and its first comments page, in one tool call) where `issuesget` "
            "makes one, and every call writes three JSON log lines. The list-labels rows (one "
            "upstream request each) isolate the server overhead."
        )
    if key.startswith("rt_"):
        return _explain_roundtrips(r)
    if key == "resp_summary":
        rs = r["response_size"]
        extra = rs["ours_summary"].get("triage_fields_bytes")
        if extra is not None:
            raw = rs["raw_page"]["bytes"]
            bare = rs["ours_summary"]["structured_bytes"] - extra
            full = rs["ours_full"]["structured_bytes"] / rs["ours_summary"]["structured_bytes"]
            return ("**What limits it: the triage fields.** Summary rows carry each issue's assignees and "
                    f"milestone (issue 21), {_b(extra)} on this page ({_b(extra / rs['ours_summary']['issues'])} "
                    f"a row); without them the page is {_b(bare)} ({bare / raw:.3f}\u00d7 raw). They let "
                    "one search answer \"unassigned\" or \"no milestone\" without a `detail: full` read "
                    f"of every row, which costs {full:.1f}\u00d7 the summary page.")
    if key.startswith("generation"):
        return _explain_generation(r)
    return "See the section below."


def _explain_tool_budget(r: dict[str, Any]) -> str:
    sf = r["surface"]
    floors = "; ".join(
        f"{name} {_b(s['bytes_without_any_description'])} ({_b(s['bytes_without_any_description'] / s['tools'])} "
        f"per tool), leaving {_b(s['result_bytes'] - s['bytes_without_any_description'])} for words"
        for name, s in sf["servers"].items())
    was = sum(s["error_branch_bytes"] for s in sf["before"].values())
    now = sum(sf["servers"][name]["error_branch_bytes"] for name in sf["before"])
    return (
        "**What limits it: the schemas themselves, not the words.** With every description removed "
        "(tool descriptions, examples, parameter and output-field descriptions) the schemas alone take "
        f"{floors}. They are closed inputSchemas with their `pattern`/length limits, outputSchemas whose "
        "rows list every field with its type, nullability, format and presence (`required`) plus the "
        "untrusted-content fields (`hidden_removed`, `withheld`), the error branch, titles and "
        "annotations. The words left say when to use each tool, give one example call, and say for "
        f"every optional parameter what omitting it means. Cut since {sf['before_ref']}: the errors "
        "sentence every description repeated (each outputSchema's error branch names the envelope's "
        "fields; the error-catalog resource lists every tool's codes), the typed envelope copy in "
        f"each `oneOf` (now the names of its always-present fields: {_b(was)} \u2192 {_b(now)} over "
        "both servers), spec enums in output rows (a validating client would reject a value GitHub "
        "adds later), one shorter wording for owner, repo, issue_number, cursor and idempotency_key, "
        "descriptions of output fields whose name says it all, example values equal to the defaults, "
        "and the spaces in examples. Reaching 2,000 B per tool would take dropping schema structure "
        "(formats, row fields, the error branch, input limits), which the contract keeps."
    )


def _explain_roundtrips(r: dict[str, Any]) -> str:
    tasks = r["roundtrips"]["tasks"]
    first = tasks[0]
    operations = first["ours"]["operations"]
    ops = ", ".join(f"`{o}`" for o in operations)
    repeated = sorted({o for o in operations if operations.count(o) > 1})
    again = (" " + ", ".join(f"`{o}`" for o in repeated) + " is requested more than once."
             if repeated else "")
    paired = ", ".join(f"`{t['tool']}`" for t in tasks[1:] if t["ours"]["round_trips"] > 1)
    return (
        "**What limits it: a write waits for the reads that may refuse it.** "
        f"`github_update_issue` makes {first['ours']['requests']} requests ({ops}) and the fake's "
        f"timeline shows {first['ours']['round_trips']} of them on the critical path: one wave of "
        "reads (the label catalog, the milestone when named by title, and the issue, whose version "
        "is checked), then the writes together (the issue's fields, the lock and every label request "
        "but one: they touch disjoint state), then the last label request alone, whose answer is "
        "GitHub's final label list, so nothing is read back. With at most one label request the "
        f"writes are one wave (2 round trips).{again} The other tools above one round trip "
        f"({paired}) read what their write depends on first. FastMCP needs "
        f"{first['fastmcp']['tool_calls']} tool calls for the same task (one agent turn each, which "
        "costs far more than a round trip) and checks nothing."
    )


def _explain_generation(r: dict[str, Any]) -> str:
    secs = r["generation"]["seconds"]
    base = secs["json.load"]["median"]
    parts = ", ".join(f"{k} {secs[k]['median'] / base:.2f}\u00d7" for k in ("load", "lint", "render", "format (caches off)")
                      if k in secs)
    return (
        "**What limits it: black when files change, then imports.** In-process, every file built, "
        f"linted and rendered (no result cache), relative to `json.load`: {parts}. A whole process "
        "reuses what did not change: each unchanged override file's result (generator/pipeline/result_cache.py, "
        "keyed by everything it reads, its forge peers' facts included), black's output and Jinja's "
        "compiled templates (generator/base/format_cache.py), the parsed description (read, not parsed: "
        "generator/spec/parsed_specs.py), the runtime's derived requirements and the override schema; "
        "what is left of an unchanged run is mostly importing the generator (~0.45 s of CPU), and an "
        "edited file adds its own build, lint and render with the description read. The forge "
        "section below gives it by number of override files."
    )


def write_charts(r: dict[str, Any], docs: Path) -> list[Path]:
    """The summary's charts (bench/charts.py), one per theme with a peer, into docs/benchmarks/."""
    from bench.charts import write

    return write([(theme, [x for x in xs if with_peer(x)]) for theme, xs in themed(summary_rows(r))], docs)


def render(r: dict[str, Any]) -> str:
    env = r["environment"]
    rows = summary_rows(r)
    weak = weakest(rows)
    out: list[str] = []
    w = out.append
    w("# Benchmarks — measured side by side\n")
    w(f"Generated by {CMD_RUN}; do not edit by hand. Run on {env['date']}: Python {env['python']}, "
      f"{env['cpus']} CPUs ({env['cpu']}), {env['platform']}; load average "
      f"{env['loadavg_start']:.1f} at the start and {env['loadavg_end']:.1f} at the end "
      f"(a shared machine: compare ratios, not absolute times). Whole run: {r['runtime_s']:.0f} s. "
      "All samples: `bench/results.json`.\n")
    w("Every peer figure comes from the same run, interleaved with ours. Times are medians with "
      "the min\u2013max over the runs (≥ 5). **Ratio = ours ÷ peer** (the unit's own direction: the "
      "*better* column says which wins; targets are written against it); **ahead** turns every "
      "ratio the same way: who is better, by how many times. ✔/✘ mark numeric targets from "
      "DESIGN.md §6 and the issues. Each theme's chart (`docs/benchmarks/`, rendered by the run) "
      "draws ours and the peer with the better one at full length.\n")
    w("## Summary\n")
    for theme, xs in themed(rows):
        w(f"### {theme}\n")
        if any(with_peer(x) for x in xs):
            w(f"![{theme}: ours vs peer, longer is better]({chart_path(theme)})\n")
        w("| what | ours | peer (same run) | ratio | better | ahead | target | command |")
        w("|---|---|---|---:|---|---|---|---|")
        for x in xs:
            w(f"| {x.what} | {x.ours} | {x.peer} | {_ratio(x.ratio)} | {x.better} | {_advantage(x)} | "
              f"{x.target}{_status(x.met)} | {x.command} |")
        w("")
    w(f"**Weakest ratio: {weak.what} — {_ratio(weak.ratio)}** ({weak.ours} vs {weak.peer}). "
      + explain(weak, r) + "\n")
    missed = [x for x in rows if x.met is False]
    if missed:
        w("Targets not met in this run: " + "; ".join(f"{x.what} ({_ratio(x.ratio)}, target {x.target})"
                                                     for x in missed) + ".\n")
        said = {explain(weak, r)}
        for x in missed:
            if explain(x, r) not in said:
                said.add(explain(x, r))
                w(f"*{x.what}*: " + explain(x, r) + "\n")
    _details(r, w)
    return "\n".join(out).rstrip() + "\n"


def _cache_cpu(r: dict[str, Any]) -> str:
    b = r.get("breakdown", {})
    if "upstream_get_cached_us" not in b:
        return ""
    return (f" (the cache's client CPU per request: {b['upstream_get_cached_us']:.0f} µs vs "
            f"{b['upstream_get_plain_us']:.0f} µs without it, section 4; GitHub answers in 100\u2013400 ms)")


def _roundtrip_details(r: dict[str, Any], w: Callable[[str], None]) -> None:
    rt = r.get("roundtrips")
    if rt:
        w("## 8. Round trips against a slow GitHub\n")
        w(f"`bench/roundtrips.py` (`make bench ONLY=roundtrips`): the fake GitHub answers every request "
          f"after {rt['latency_s'] * 1000:.0f} ms and records when each request arrived and when its "
          "answer left (`GET /_fake/timeline`). *Sequential* is the longest chain of a task's requests "
          "in which each started after the previous one ended, measured from those times. Both servers "
          "over stdio against the same fake, which is reset to the same data before every task; "
          f"{rt['reps']} interleaved reps, wall time is the median (client side, all the task's tool "
          "calls, one after another as an agent awaits each result). Ours runs with its default "
          "in-memory conditional-request cache (a 304 is still a round trip).\n")
        w("| task | ours: tool → requests / sequential / wall | FastMCP 4.1.6: tool calls | requests / sequential / wall | sequential ratio |")
        w("|---|---|---|---|---:|")
        for t in rt["tasks"]:
            o, f = t["ours"], t["fastmcp"]
            note = f" ({t['note']})" if t["note"] else ""
            seen = "" if len(o["round_trips_seen"]) == 1 else f" (reps: {o['round_trips_seen']})"
            w(f"| {t['what']}{note} | `{t['tool']}` → {o['requests']} / {o['round_trips']}{seen} / "
              f"{_s(o['wall_s'])} | " + " + ".join(f"`{c}`" for c in t["fastmcp_calls"])
              + f" | {f['requests']} / {f['round_trips']} / {_s(f['wall_s'])} | "
              f"{o['round_trips'] / f['round_trips']:.2f} |")
        w("")
        w(_explain_roundtrips(r) + "\n")
        w("Our requests per task, in the order the fake received them:\n")
        for t in rt["tasks"]:
            w(f"* `{t['tool']}`: " + ", ".join(f"`{op}` {st}" for op, st in
                                              zip(t["ours"]["operations"], t["ours"]["statuses"], strict=True)))
        w("")
    _forgejo_round_trip_details(r, w)
    rl = r.get("rate_limit")
    if rl:
        w("## 9. Rate-limit budget of a repeated-read session\n")
        w(f"{rl['calls']} `github_get_issue` calls over issues 1\u2013{rl['issues']} (10 passes), "
          f"{rl['changed_per_pass']} of the {rl['issues']} issues given a new comment before each pass "
          "after the first; one server process per way, the fake reset before each. Units = requests "
          "the fake counted against the token's primary rate limit (a 304 counts none, as on GitHub). "
          "Wall time is against a fake answering at once, so it shows CPU, not what a network costs"
          + _cache_cpu(r) + ".\n")
        w("| way | requests | answered 304 | rate-limit units | units per call | wall |")
        w("|---|---:|---:|---:|---:|---:|")
        for k, label in (("ours_cache", "ours, `GHMCP_HTTP_CACHE=memory` (default)"),
                         ("ours_no_cache", "ours, `GHMCP_HTTP_CACHE=off`"),
                         ("fastmcp", "FastMCP `issuesget` (issue only, no comments)")):
            x = rl[k]
            w(f"| {label} | {x['requests']} | {x['not_modified']} | {x['budget']} | "
              f"{x['budget'] / x['calls']:.2f} | {_s(x['wall_s'])} |")
        w("")


def _forgejo_round_trip_details(r: dict[str, Any], w: Callable[[str], None]) -> None:
    f = r.get("forgejo_round_trips")
    if not f:
        return
    w("### Forgejo issues: round trips of each tool\n")
    w(f"`make bench ONLY=forgejo_round_trips` (bench/forgejo_round_trips.py, issue 38): the Forgejo fake "
      f"seeded with `demo_fake()` answers every request after {f['latency_s'] * 1000:.0f} ms; *sequential* "
      "is measured from the fake's timeline as above, the server in process (official client). Every "
      "name a call gives is resolved or checked in the first wave, beside the issue's read; writes "
      "follow in one wave, and a second only for the last label request.\n")
    w("| task | tool | requests | sequential |")
    w("|---|---|---:|---:|")
    for t in f["tasks"]:
        w(f"| {t['what']} | `{t['tool']}` | {len(t['operations'])} | {t['sequential']} |")
    w("")
    w("The update reads the issue, the repository's labels (one walk for `add_labels` and "
      "`remove_labels` together) and the open milestones at once, then sends the PATCH and both label "
      "removals together and the add alone last (its answer is the issue's label list). What a model "
      f"reads of the five tools (name, description, inputSchema; compact JSON): {f['model_visible_bytes']:,} B, "
      f"against {f['github_counterparts_bytes']:,} B for github-issues-mcp's five counterparts.\n")
    w("Requests per task, in the order the fake received them:\n")
    for t in f["tasks"]:
        w(f"* {t['what']} (`{t['tool']}`): " + ", ".join(f"`{op}`" for op in t["operations"]))
    w("")


def _untrusted_text_details(r: dict[str, Any], w: Callable[[str], None]) -> None:
    ut = r.get("untrusted_text")
    if not ut:
        return
    w("## 10. Cleaning untrusted text\n")
    w("`bench/cleaner_cost.py` (`make bench ONLY=untrusted_text`). The cleaner decides what GitHub's "
      "page hides from a parse (pulldown-cmark through pyromark, docs/markdown-parsers.md) and bounds "
      "its own work per character (docs/ARCHITECTURE.md). Before (main 5b13345, the security "
      "review's n1 figures): " + "; ".join(f"{k} {v}" for k, v in ut["before"].items()) + ".\n")
    e2e = ut["end_to_end"]
    for size, run in e2e["sizes"].items():
        w(f"**End to end, fields of {int(size) // 1024} KiB**: server CPU (user + system from /proc) "
          f"per `github_get_issue` whose body and three comments are the text, the fastest of 3 "
          f"interleaved passes of {e2e['reps']} calls, over HTTP against bench/fake_server.py; plain "
          f"issue: {run['plain_ms']:.1f} ms.\n")
        w("| hostile text | ms | \u00d7 plain |")
        w("|---|---:|---:|")
        for name, row in sorted(run["rows"].items(), key=lambda item: -item[1]["x_plain"]):
            w(f"| {name} | {row['ms']:.1f} | {row['x_plain']:.2f} |")
        w("")
    fields = ut["fields"]
    w(f"**Per field** ({ut['field_chars']:,} characters, GitHub's body limit): `untrusted.sanitize`, "
      f"this thread's CPU, the fastest of {fields['runs']} interleaved runs, next to nh3 0.3.7 "
      "(Ammonia, the HTML-sanitizer approach github-mcp-server takes with bluemonday; it also "
      "removes `Promise<string>` and `<id>`, code included, and counts nothing). Plain issue body: "
      f"ours {fields['plain_ms']:.2f} ms, nh3 {fields['plain_nh3_ms']:.2f} ms; prose without a markup "
      f"character: {fields['prose_ms']:.2f} ms. Median of the corpus: {ut['field_median_x_plain']:.2f}"
      "\u00d7 plain.\n")
    w("| field | ours ms | \u00d7 plain | nh3 ms | nh3 \u00d7 its plain |")
    w("|---|---:|---:|---:|---:|")
    ranked = sorted(fields["rows"].items(), key=lambda item: -item[1]["ms"])
    costliest_nh3 = max(fields["rows"].items(), key=lambda item: item[1]["nh3_ms"])
    for name, row in ranked[:20]:
        w(f"| {name} | {row['ms']:.2f} | {row['x_plain']:.2f} | {row['nh3_ms']:.2f} | {row['nh3_x_plain']:.2f} |")
    w(f"| … {len(ranked) - 20} more, all cheaper for us | | | | |")
    name, row = costliest_nh3
    w(f"| nh3's costliest: {name} | {row['ms']:.2f} | {row['x_plain']:.2f} | {row['nh3_ms']:.2f} | "
      f"{row['nh3_x_plain']:.2f} |")
    w("")


def _surface_before_after(sf: dict[str, Any], w: Callable[[str], None]) -> None:
    w(f"Every generated server before the cuts of issue 12 item 4 ({sf['before_ref']}, kept in "
      "`bench/results-surface-before.json` by `bench/surfaces.py --before REF`) and now; bytes of "
      "`{\"tools\": [...]}` as `make generate` prints them. *Schemas alone*: the same tools with every "
      "description removed (tool descriptions, examples, parameter and output-field descriptions).\n")
    w("| server | tools | before | now | per tool, before \u2192 now | descriptions | inputSchemas | "
      "outputSchemas (error branches) | other | schemas alone |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, s in sf["servers"].items():
        if name not in sf["before"]:
            continue  # a server added since
        b, t = sf["before"][name], s["totals"]
        bt = b["totals"]
        w(f"| {name} | {s['tools']} | {b['result_bytes']:,} | {s['result_bytes']:,} | "
          f"{b['result_bytes'] // b['tools']:,} \u2192 {s['result_bytes'] // s['tools']:,} | "
          f"{bt['description']:,} \u2192 {t['description']:,} | {bt['inputSchema']:,} \u2192 "
          f"{t['inputSchema']:,} | {bt['outputSchema']:,} ({b['error_branch_bytes']:,}) \u2192 "
          f"{t['outputSchema']:,} ({s['error_branch_bytes']:,}) | {bt['other']:,} \u2192 {t['other']:,} | "
          f"{b['bytes_without_any_description']:,} \u2192 {s['bytes_without_any_description']:,} |")
    w("")
    if all("model_visible_bytes" in s for s in sf["servers"].values()):
        w("What a model reads, per server (issue 24): each tool's name, description and inputSchema, "
          "compact JSON; the outputSchemas and annotations stay with the client.\n")
        w("| server | tools | model-visible | per tool | whole `tools/list` |")
        w("|---|---:|---:|---:|---:|")
        for name, s in sf["servers"].items():
            w(f"| {name} | {s['tools']} | {s['model_visible_bytes']:,} | "
              f"{s['model_visible_bytes'] // s['tools']:,} | {s['result_bytes']:,} |")
        w("")
    for name, s in sf["servers"].items():
        if name not in sf["before"]:
            continue
        before = sf["before"][name]["per_tool"]
        w(f"{name}, per tool:\n")
        w("| tool | before | now | description | inputSchema | outputSchema |")
        w("|---|---:|---:|---:|---:|---:|")
        for tool, p in s["per_tool"].items():
            was = f"{before[tool]['total']:,}" if tool in before else "—"
            w(f"| `{tool}` | {was} | {p['total']:,} | {p['description']:,} | {p['inputSchema']:,} | "
              f"{p['outputSchema']:,} |")
        w("")


def _token_surfaces(sf: dict[str, Any], w: Callable[[str], None]) -> None:
    if not sf.get("tokens"):
        return
    w("What a model reads of a forge server, per token (issue 37): the tools a token's scopes "
      "cannot use are hidden, as the runtime hides them when the forge tells the scopes (GitHub: "
      "classic and OAuth-app tokens; Forgejo: a token that may read its own account). A token the "
      "forge says nothing of (fine-grained, `no read:user`) keeps every tool; an installation token "
      "loses only the tools acting on the token's own account (`github_get_me`). Each tool's "
      "scopes also ride in its `_meta` (`ghmcp/scopes`, about 110 B per tool of the whole "
      "`tools/list`, column *other* above; a model does not read it). *Saved*: against every tool "
      "of the selection. `.venv/bin/python bench/surfaces.py` prints it.\n")
    w(surfaces.TOKEN_HEADER)
    for row in sf["tokens"]:
        w(surfaces.token_line(row))
    w("")


def _details(r: dict[str, Any], w: Callable[[str], None]) -> None:
    gen = r["generation"]
    secs = gen["seconds"]
    w("## 1. Generation\n")
    w(f"`bench/generate.py` (`make bench` runs it; every server's override file, like the CLI): {gen['spec']['package']} "
      f"{gen['spec']['version']}, {gen['spec']['json_bytes'] / 1e6:.1f} MB of JSON; "
      f"{gen['repetitions']['in_process']} interleaved in-process repetitions. Per-stage and "
      "whole-process samples: `bench/results-generate.json`.\n")
    w("| stage | median (min\u2013max) | \u00d7 json.load |")
    w("|---|---|---:|")
    base = secs["json.load"]["median"]
    for key in ("json.load", "load", "build", "lint", "render", "format", "write", "total",
                "format (caches off)", "total (caches off)"):
        if key in secs:
            w(f"| {key} | {_mm(secs[key], _ms, 1000)} | {secs[key]['median'] / base:.2f} |")
    for key, label in (("cli generate", "whole process `python -m generator generate`"),
                       ("cli generate (caches off)", "the same, caches off")):
        if key in secs:
            w(f"| {label} | {_mm(secs[key], _ms, 1000)} | "
              f"{secs[key]['median'] / secs['cli json.load']['median']:.2f} (vs `python -c json.load`) |")
    w("")
    w("black's output (by the unformatted text), Jinja's compiled templates, the runtime's derived "
      "requirements and the override file's JSON Schema are cached outside the tree "
      "(`GHMCP_FORMAT_CACHE`, default `~/.cache/ghmcp-generator`), each by a digest of all it is "
      "derived from; the plain rows re-run an unchanged render, the *caches off* rows re-format "
      "every file, compile every template and derive everything again (what an edit touching every "
      "template costs).\n")
    w(_explain_generation(r) + "\n")
    cs = r["cold_start"]
    w("## 2. Cold start\n")
    w(f"Process spawn → `tools/list` answer, {cs['reps']} runs per way, interleaved (order alternates), "
      "after one discarded warm-up each. Raw JSON-lines driver (bench/common.py `RawStdio`): "
      "`initialize`, `notifications/initialized` and `tools/list` pipelined, no SDK on the client "
      "side. Bytecode cached, page cache warm: a cold *process*, not a cold disk.\n")
    w("| way | spawn → tools/list | peak RSS (server) | tools/list line |")
    w("|---|---|---|---:|")
    names = {"ours": "generated server (`github-issues-mcp`)", "sdk_floor": "SDK floor (`bench/sdk_floor.py`)",
             "fastmcp": "FastMCP 4.1.6 `from_openapi`, trimmed spec"}
    for k, label in names.items():
        w(f"| {label} | {_mm(cs['seconds'][k], _s)} | {cs['peak_rss_mib'][k]['median']:.1f} MiB | "
          f"{_b(cs['wire_line_bytes'][k])} |")
    w("")
    sf = r["surface"]
    w("## 3. Tool surface\n")
    w("Compact JSON bytes of each tool object as served (`tools/list` `tools` array); description "
      "bytes are the JSON-encoded string. Ours are measured as the runtime serves them "
      "(bench/surfaces.py, the same bytes as over stdio), FastMCP's come from the cold-start runs above; "
      "github-mcp-server's from its vendored tool snapshots (see bench/peers/github-mcp-server/README.md).\n")
    w("| server | tools | bytes | per tool | descriptions | inputSchemas | outputSchemas | other | tools with outputSchema | closed inputSchemas |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k, label in (("ours", "ours (github-issues-mcp)"), ("fastmcp", "FastMCP 4.1.6 (17 operations)"),
                     ("github_mcp_server", "github-mcp-server (8 tools)")):
        s = sf[k]
        t = s["totals"]
        w(f"| {label} | {s['tools']} | {s['array_bytes']:,} | {s['array_bytes'] // s['tools']:,} | "
          f"{t['description']:,} ({_pct(s['share']['description'])}) | {t['inputSchema']:,} "
          f"({_pct(s['share']['inputSchema'])}) | {t['outputSchema']:,} ({_pct(s['share']['outputSchema'])}) | "
          f"{t['other']:,} | {s['with_output_schema']} | {s['closed_input_schemas']} |")
    w("")
    _surface_before_after(sf, w)
    _token_surfaces(sf, w)
    for k, label in (("github_mcp_server", "github-mcp-server"), ("fastmcp", "FastMCP")):
        w(f"{label}, per tool:\n")
        w("| tool | total | description | inputSchema | outputSchema |")
        w("|---|---:|---:|---:|---:|")
        for name, p in sf[k]["per_tool"].items():
            w(f"| `{name}` | {p['total']:,} | {p['description']:,} | {p['inputSchema']:,} | {p['outputSchema']:,} |")
        w("")
    pc = r["per_call"]
    w("## 4. Per-call overhead\n")
    w(f"The same read of one issue (a 4.7 KB issue with 6 comments) against the same fake GitHub "
      f"process over real loopback HTTP. {pc['reps']} interleaved reps \u00d7 ({pc['warmup']} warm-up + "
      f"{pc['calls_per_rep']} timed) sequential calls per layer; the pooled samples give the median "
      "and p90, the per-rep medians the min\u2013max. `github_get_issue` returns the issue *and* its "
      "first comments page, so it makes two upstream requests; its direct baseline makes the same two "
      "(`httpx.AsyncClient`, the client our runtime uses). FastMCP's `issuesget` makes one; its "
      "baseline is one `httpx2.AsyncClient` request in its own venv. Overhead = layer \u2212 direct of "
      "the same stack.\n")
    w("| layer | median | p90 | per-rep medians | overhead vs direct |")
    w("|---|---:|---:|---|---:|")
    labels = {
        "ours_direct": "ours: direct httpx, the 2 requests", "ours_direct_one": "ours: direct httpx, 1 request",
        "ours_handler": "ours: runtime `call_tool` (validation, hooks, HTTP, projection)",
        "ours_inmem_auto": "ours: in memory, official Client, auto",
        "ours_inmem_legacy": "ours: in memory, official Client, legacy",
        "ours_stdio": "ours: stdio, raw driver",
        "fastmcp_direct": "FastMCP: direct httpx2, 1 request",
        "fastmcp_handler": "FastMCP: `FastMCP.call_tool` (middleware, request, parsing)",
        "fastmcp_inmem_auto": "FastMCP: in memory, official Client, auto",
        "fastmcp_inmem_legacy": "FastMCP: in memory, official Client, legacy",
        "fastmcp_stdio": "FastMCP: stdio, raw driver",
    }
    for k, label in labels.items():
        if k not in pc["layers"]:
            continue
        x = pc["layers"][k]
        o = pc["overhead_ms"].get(k.replace("ours_", "ours_").replace("fastmcp_", "fastmcp_"))
        rm = x["rep_median_ms"]
        w(f"| {label} | {_ms(x['median_ms'], 3)} | {_ms(x['p90_ms'], 3)} | {rm['min']:.3f}\u2013{rm['max']:.3f} | "
          f"{'' if o is None else f'+{o:.3f} ms'} |")
    w("")
    b = r.get("breakdown")
    if b:
        w("Pieces of our per-call cost, timed alone in the same run (median of "
          f"{b['n']} repetitions): the official client's revalidation of our `github_get_issue` "
          f"structuredContent against its outputSchema {b['client_output_validation_us']:.0f} µs; "
          f"our argument validation {b['argument_validation_us']:.0f} µs; the three JSON log lines a "
          f"call writes {b['log_lines_us']:.0f} µs; projecting the issue and its comments "
          f"{b['projection_us']:.0f} µs"
          + (f"; our check of the answer against its outputSchema (compiled, B03) {b['answer_check_us']:.0f} µs"
             if "answer_check_us" in b else "") + "." + _sniffio_note(b) + "\n")
    rs = r["response_size"]
    w("## 5. Response size\n")
    w("The first page of open issues of the bench repository (40 issues, no pull requests, "
      "bodies of 0.4\u20131.2 KB), as GitHub's JSON (the fake's `GET /repos/{owner}/{repo}/issues` with "
      "the exact query `github_search_issues` sends) and as our tool returns it.\n")
    w("| response | issues | structured bytes | \u00d7 raw | stdio wire line |")
    w("|---|---:|---:|---:|---:|")
    raw = rs["raw_page"]["bytes"]
    w(f"| GitHub raw JSON page | {rs['raw_page']['issues']} | {raw:,} | 1.00 | — |")
    for k, label in (("ours_summary", "ours, `detail: summary`"), ("ours_full", "ours, `detail: full`")):
        w(f"| {label} | {rs[k]['issues']} | {rs[k]['structured_bytes']:,} | "
          f"{rs[k]['structured_bytes'] / raw:.3f} | {rs[k]['wire_line_bytes']:,} |")
    f = rs["fastmcp_list"]
    w(f"| FastMCP `issueslist_for_repo` | {f['issues']} | {f['structured_bytes']:,} | "
      f"{f['structured_bytes'] / raw:.3f} | {f['wire_line_bytes']:,} |")
    w(f"\nOne issue with its 6 comments, `github_get_issue` `detail: summary`: "
      f"{rs['ours_get_issue_summary']['structured_bytes']:,} B structured. Both servers send the "
      "payload twice on the wire (the text content carries the same JSON as structuredContent).\n")
    tp = r["throughput"]
    w("## 6. HTTP throughput\n")
    w("Both servers as their own processes over streamable HTTP, stateless with JSON responses "
      "(ours: `github-issues-mcp --transport http`; FastMCP: `run('http', stateless_http=True, "
      "json_response=True)`), the token configured server-side, against the same fake process. "
      "The load generator (httpx, one connection per worker) posts legacy-era `tools/call` requests; "
      f"a call fails on a non-200, a JSON-RPC error or `isError`. {tp['reps']} interleaved reps per "
      "level; calls/s median (min\u2013max), latency percentiles over the pooled calls.\n")
    w("| operation | concurrency | calls | ours calls/s | ours p50 / p99 | FastMCP calls/s | FastMCP p50 / p99 | ratio | failed (ours / FastMCP) |")
    w("|---|---:|---:|---|---|---|---|---:|---|")
    for op in ("get_issue", "list_labels"):
        tools = tp["tools"][op]
        for c in _levels(tp):
            n = tp["levels"][c]
            o, f = tp[op]["ours"][c], tp[op]["fastmcp"][c]
            w(f"| `{tools['ours']}` / `{tools['fastmcp']}` | {c} | {n} | {_mm(o['calls_per_s'], lambda v: f'{v:.0f}')} | "
              f"{o['p50_ms']:.1f} / {o['p99_ms']:.1f} ms | {_mm(f['calls_per_s'], lambda v: f'{v:.0f}')} | "
              f"{f['p50_ms']:.1f} / {f['p99_ms']:.1f} ms | "
              f"{o['calls_per_s']['median'] / f['calls_per_s']['median']:.2f} | {o['failures']} / {f['failures']} |")
    w("")
    if tp.get("tasks"):
        w("Per task (issue 24): what one agent step needs, as one call of ours and as the fewest "
          "calls on FastMCP's one-tool-per-operation server, made one after another by the same "
          "worker; a task fails at its first failed call. The triage writes toggle (close as not "
          "planned with a label swapped, then reopen and swap back), each worker on its own issue, "
          "from the same seed for both servers (the fake is reset before each run).\n")
        w("| task | calls (ours / FastMCP) | concurrency | tasks | ours tasks/s | ours p50 | FastMCP tasks/s | FastMCP p50 | ratio | failed (ours / FastMCP) |")
        w("|---|---|---:|---:|---|---:|---|---:|---:|---|")
        for op, task in tp["tasks"].items():
            for c in _levels(tp):
                o, f = tp[op]["ours"][c], tp[op]["fastmcp"][c]
                calls = task["calls_per_task"]
                w(f"| {task['what']} | {calls['ours']} / {calls['fastmcp']} | {c} | {tp['levels'][c]} | "
                  f"{_mm(o['calls_per_s'], lambda v: f'{v:.0f}')} | {o['p50_ms']:.1f} ms | "
                  f"{_mm(f['calls_per_s'], lambda v: f'{v:.0f}')} | {f['p50_ms']:.1f} ms | "
                  f"{o['calls_per_s']['median'] / f['calls_per_s']['median']:.2f} | {o['failures']} / {f['failures']} |")
        w("")
    gi, ll = tp["get_issue"], tp["list_labels"]
    gi_r = [gi["ours"][c]["calls_per_s"]["median"] / gi["fastmcp"][c]["calls_per_s"]["median"] for c in _levels(tp)]
    ll_r = [ll["ours"][c]["calls_per_s"]["median"] / ll["fastmcp"][c]["calls_per_s"]["median"] for c in _levels(tp)]
    w(f"Reading the ratios: on *list labels* (one upstream request on both sides) we run at "
      f"{min(ll_r):.2f}\u2013{max(ll_r):.2f}\u00d7 FastMCP's rate, so the MCP/HTTP serving cost per call is "
      f"about equal. On *get an issue* we are at {min(gi_r):.2f}\u2013{max(gi_r):.2f}\u00d7 because "
      "`github_get_issue` does twice the upstream work (the issue and its first comments page, which "
      "FastMCP's client would need a second `issueslist_comments` call for), and on this 2-CPU box the "
      "fake GitHub, both servers and the load generator compete for the same CPUs."
      + _sniffio_note(r.get("breakdown", {"sniffio_installed": True})) + "\n")
    ld = r["load"]
    w("## 7. Load\n")
    w("After the throughput runs, on the same server processes: one run of "
      f"{ld['ours']['calls']:,} `get an issue` calls at concurrency {ld['ours']['concurrency']}. RSS is "
      "the server process's VmRSS just before and just after.\n")
    w("| server | calls | failed | calls/s | p50 | p99 | RSS before → after |")
    w("|---|---:|---:|---:|---:|---:|---|")
    for k, label in (("ours", "ours"), ("fastmcp", "FastMCP")):
        x = ld[k]
        w(f"| {label} | {x['calls']:,} | {x['failures']} | {x['calls_per_s']:.0f} | {x['p50_ms']:.1f} ms | "
          f"{x['p99_ms']:.1f} ms | {x['rss_before_mib']:.1f} → {x['rss_after_mib']:.1f} MiB |")
    w("")
    _roundtrip_details(r, w)
    _untrusted_text_details(r, w)
    _trial_details(r, w)
    t = r.get("agent_trial")
    if t:
        _code_trial_details(t, w)
    _coverage_surface_details(r, w)
    _forge_details(r, w)
    w("## Method and caveats\n")
    w("* **The fake GitHub** (`bench/fake_server.py`) is the project's stateful `fakegithub`, seeded "
      "deterministically, in its own process on 127.0.0.1, with openapi-core validation switched off "
      "and an unlimited rate-limit budget: validation costs ~50 ms per request here and would swamp "
      "everything (the tests keep it on). Nothing leaves the machine.\n"
      "* **FastMCP 4.1.6** runs from `bench/.peer-venv` (created by `make bench` on first use with "
      "`pip install fastmcp==4.1.6`), so the project's pinned dependencies are untouched; it gets the "
      "pinned description trimmed to the same 17 issue operations (`bench/peer.py`, 126 KB; the same "
      "trim as shared/notes/baseline-fastmcp.md) and an `httpx2.AsyncClient` carrying the token.\n"
      "* **github-mcp-server** is not run (Go, GitHub not reachable); its tool objects are its own "
      "snapshot files, measured in the run.\n"
      "* **Noise**: a 2-CPU VM shared with other work (load average above). Interleaving puts "
      "the same noise on both sides of each ratio; absolute times move between runs.\n"
      "* Tests never assert times. Re-render this file and its charts from `bench/results.json` with "
      "`.venv/bin/python bench/report.py > docs/BENCHMARKS.md`.\n")


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    data = json.loads((root / "bench" / "results.json").read_text())
    write_charts(data, root / "docs")
    sys.stdout.write(render(data))
