"""What an agent waits for against a real network: upstream requests, the sequential round trips
among them, and the rate-limit budget a session spends. Ours next to FastMCP 4.1.6 doing the same
tasks with its one-tool-per-operation surface.

    .venv/bin/python bench/roundtrips.py [--latency 0.1] [--reps 3]     # prints the results JSON

Round trips: the fake GitHub (bench/fake_server.py) answers every request after a fixed delay and
records when each request arrived and when its answer left (`GET /_fake/timeline`). The
sequential round trips of a task are the longest chain of its requests in which each one started
after the previous one ended: measured from those times, not inferred from the code. Both servers
run over stdio (raw JSON-lines driver) against the same fake process; the fake is reset to the
same state before every task.

Rate limit: 200 `github_get_issue` calls over 20 issues (10 passes), 2 of the 20 issues (10 %)
changed (a new comment) before each pass after the first; budget units are the fake's count of
requests that spent primary rate limit (a 304 spends none). Ours with the default in-memory cache
and with GHMCP_HTTP_CACHE=off, FastMCP's `issuesget` beside them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

import httpx  # noqa: E402

from bench.common import BENCH, WORK, RawStdio, base_env, fake_process  # noqa: E402
from bench.fake_server import OWNER, REPO, TOKEN  # noqa: E402
from fakegithub.fake import critical_path  # noqa: E402

PY = sys.executable
OUR_SCRIPT = str(Path(PY).with_name("github-issues-mcp"))
REPO_ARGS = {"owner": OWNER, "repo": REPO}
UNUSED_LABEL = "obsolete"  # added before the checkpoint, so a safe delete may go ahead
RELABELED = 6  # carries `triage` and `bug` in the bench seed
Call = tuple[str, dict[str, Any]]


State = dict[str, Any]  # the fake's /_fake/state/{owner}/{repo}: issues, labels, milestones


@dataclass(frozen=True)
class Task:
    key: str
    what: str
    tool: str  # our tool this task represents
    ours: tuple[Call, ...]
    fastmcp: tuple[Call, ...]
    note: str = ""
    # what the repository must hold after a write task, whoever did it ([] when it does): a call
    # that answers without doing the work would otherwise count as the task done
    done: Callable[[State], list[str]] | None = None


def _issue(number: int, **extra: Any) -> dict[str, Any]:
    return {**REPO_ARGS, "issue_number": number, **extra}


def _issue_in(state: State, number: int) -> dict[str, Any]:
    return next(i for i in state["issues"] if i["number"] == number)


def _labels_of(state: State, number: int) -> set[str]:
    return {label["name"] for label in _issue_in(state, number)["labels"]}


def _label(state: State, name: str) -> dict[str, Any] | None:
    return next((lb for lb in state["labels"] if lb["name"] == name), None)


def _closed_relabeled(state: State) -> list[str]:
    issue, labels = _issue_in(state, RELABELED), _labels_of(state, RELABELED)
    return [problem for problem, bad in (
        (f"issue {RELABELED} is {issue['state']} ({issue['state_reason']})",
         (issue["state"], issue["state_reason"]) != ("closed", "not_planned")),
        (f"issue {RELABELED} lacks `wontfix`", "wontfix" not in labels),
        (f"issue {RELABELED} still has `triage`", "triage" in labels)) if bad]


def _created(state: State) -> list[str]:
    made = [i for i in state["issues"] if i["title"] == "Export fails"]
    return [] if len(made) == 1 and {lb["name"] for lb in made[0]["labels"]} == {"bug"} else [
        f"{len(made)} issues `Export fails`, labels {[lb['name'] for i in made for lb in i['labels']]}"]


def _commented(state: State) -> list[str]:
    bodies = [c["body"] for c in _issue_in(state, 1)["comment_list"]]
    return [] if bodies.count("Reproduced on 2.3.") == 1 else ["issue 1 lacks the comment"]


def _label_is(name: str, color: str | None) -> Callable[[State], list[str]]:
    def check(state: State) -> list[str]:
        found = _label(state, name)
        if color is None:
            return [] if found is None else [f"label `{name}` still exists"]
        return [] if found is not None and found["color"] == color else [f"label `{name}`: {found}"]
    return check


TASKS: tuple[Task, ...] = (
    Task("close_relabel", f"close issue {RELABELED} as not planned, add `wontfix`, remove `triage`",
         "github_update_issue",
         (("github_update_issue", _issue(RELABELED, state="closed", state_reason="not_planned",
                                         add_labels=["wontfix"], remove_labels=["triage"])),),
         (("issuesupdate", _issue(RELABELED, state="closed", state_reason="not_planned")),
          ("issuesadd_labels", _issue(RELABELED, body={"labels": ["wontfix"]})),
          ("issuesremove_label", _issue(RELABELED, name="triage"))),
         "FastMCP: one call per operation (its add-labels tool takes the request body as `body`); "
         "`issuesget` + `issuesupdate` with the whole label list is 2 calls but replaces labels "
         "someone may have changed meanwhile", _closed_relabeled),
    Task("read_issue", "read issue 1 and its comments", "github_get_issue",
         (("github_get_issue", _issue(1)),),
         (("issuesget", _issue(1)), ("issueslist_comments", _issue(1, per_page=30, page=1)))),
    Task("search", "list the open issues labelled `bug`", "github_search_issues",
         (("github_search_issues", {**REPO_ARGS, "labels": ["bug"], "state": "open"}),),
         (("issueslist_for_repo", {**REPO_ARGS, "labels": "bug", "state": "open", "per_page": 30,
                                   "page": 1}),)),
    Task("create_issue", "open an issue labelled `bug`", "github_create_issue",
         (("github_create_issue", {**REPO_ARGS, "title": "Export fails", "labels": ["bug"]}),),
         (("issuescreate", {**REPO_ARGS, "title": "Export fails", "labels": ["bug"]}),),
         "ours checks the labels exist first (GitHub would create unknown ones)", _created),
    Task("comment", "comment on issue 1", "github_add_comment",
         (("github_add_comment", _issue(1, body="Reproduced on 2.3.")),),
         (("issuescreate_comment", _issue(1, body="Reproduced on 2.3.")),), done=_commented),
    Task("list_labels", "list the labels", "github_list_labels",
         (("github_list_labels", dict(REPO_ARGS)),),
         (("issueslist_labels_for_repo", {**REPO_ARGS, "per_page": 100, "page": 1}),)),
    Task("create_label", "create label `regression`", "github_create_label",
         (("github_create_label", {**REPO_ARGS, "name": "regression", "color": "d73a4a"}),),
         (("issuescreate_label", {**REPO_ARGS, "name": "regression", "color": "d73a4a"}),),
         done=_label_is("regression", "d73a4a")),
    Task("update_label", "recolor label `bug`", "github_update_label",
         (("github_update_label", {**REPO_ARGS, "name": "bug", "color": "b60205"}),),
         (("issuesupdate_label", {**REPO_ARGS, "name": "bug", "color": "b60205"}),),
         "ours reads the label first: unchanged fields are not sent, and the result says what changed",
         _label_is("bug", "b60205")),
    Task("delete_label", f"delete label `{UNUSED_LABEL}` unless an issue uses it", "github_delete_label",
         (("github_delete_label", {**REPO_ARGS, "name": UNUSED_LABEL}),),
         (("searchissues_and_pull_requests", {"q": f'repo:{OWNER}/{REPO} label:"{UNUSED_LABEL}"',
                                              "per_page": 1, "page": 1}),
          ("issuesdelete_label", {**REPO_ARGS, "name": UNUSED_LABEL})),
         "FastMCP's `issuesdelete_label` alone would be 1 call with no in-use check",
         _label_is(UNUSED_LABEL, None)),
)


WARM_UP = next(t for t in TASKS if t.key == "list_labels")  # imports, first connection


class Fake:
    """The control API of the bench fake GitHub (another process)."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)

    def post(self, path: str, body: Any = None) -> Any:
        resp = self.http.post(path, json=body)
        resp.raise_for_status()
        return resp.json() if resp.content else None

    def reset(self) -> None:
        self.post("/_fake/reset")

    def latency(self, seconds: float) -> None:
        self.post("/_fake/latency", {"seconds": seconds})

    def state(self) -> State:
        resp = self.http.get(f"/_fake/state/{OWNER}/{REPO}")
        resp.raise_for_status()
        found: State = resp.json()
        return found

    def timeline(self) -> list[dict[str, Any]]:
        resp = self.http.get("/_fake/timeline")
        resp.raise_for_status()
        entries: list[dict[str, Any]] = resp.json()
        self.http.delete("/_fake/timeline").raise_for_status()
        return entries

    def close(self) -> None:
        self.http.close()


def _call(driver: RawStdio, tool: str, args: dict[str, Any]) -> None:
    message = driver.call("tools/call", {"name": tool, "arguments": args})
    result = message.get("result")
    if not result or result.get("isError"):
        raise RuntimeError(f"{tool} failed: {json.dumps(message)[:600]}")


def _run_task(fake: Fake, driver: RawStdio, calls: Sequence[Call],
              done: Callable[[State], list[str]] | None = None) -> dict[str, Any]:
    fake.reset()  # same data for every task and server; also empties the timeline
    t0 = time.perf_counter()
    for tool, args in calls:
        _call(driver, tool, args)
    wall = time.perf_counter() - t0
    entries = fake.timeline()
    problems = done(fake.state()) if done is not None else []
    if problems:
        raise RuntimeError(f"{' + '.join(c[0] for c in calls)} did not do the task: {'; '.join(problems)}")
    return {
        "tool_calls": len(calls),
        "requests": len(entries),
        "round_trips": critical_path([(e["started"], e["ended"]) for e in entries]),
        "budget": sum(1 for e in entries if e["spent"]),
        "wall_s": wall,
        "operations": [e["operation_id"] for e in entries],
        "statuses": [e["status"] for e in entries],
    }


def ours_driver(fake_url: str, http_cache: str = "memory") -> RawStdio:
    return RawStdio([OUR_SCRIPT], base_env(GITHUB_API_URL=fake_url, GITHUB_TOKEN=TOKEN,
                                           GHMCP_CURSOR_SECRET="bench", GHMCP_HTTP_CACHE=http_cache),
                    stderr=WORK / "ours-roundtrips.log")


def peer_driver(peer_py: Path, spec: Path, fake_url: str) -> RawStdio:
    return RawStdio([str(peer_py), str(BENCH / "peer_fastmcp.py"), "stdio", str(spec), fake_url, TOKEN],
                    base_env(), stderr=WORK / "fastmcp-roundtrips.log")


def _pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    first = runs[0]
    return {
        **{k: first[k] for k in ("tool_calls", "requests", "round_trips", "budget", "operations",
                                 "statuses")},
        "round_trips_seen": sorted({r["round_trips"] for r in runs}),
        "requests_seen": sorted({r["requests"] for r in runs}),
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "wall_s_min": min(r["wall_s"] for r in runs),
        "wall_s_max": max(r["wall_s"] for r in runs),
    }


def bench_roundtrips(fake_url: str, peer_py: Path, spec: Path, latency_s: float, reps: int,
                     log: Callable[[str], None] = print) -> dict[str, Any]:
    fake = Fake(fake_url)
    fake.post("/_fake/call/add_label", {"owner": OWNER, "repo": REPO, "name": UNUSED_LABEL})
    fake.post("/_fake/call/checkpoint")
    fake.latency(latency_s)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {t.key: {"ours": [], "fastmcp": []} for t in TASKS}
    drivers = {"ours": ours_driver(fake_url), "fastmcp": peer_driver(peer_py, spec, fake_url)}
    try:
        for name, driver in drivers.items():
            driver.start()
            driver.handshake_and_list()
            _run_task(fake, driver, WARM_UP.ours if name == "ours" else WARM_UP.fastmcp)
        for rep in range(reps):
            order = ["ours", "fastmcp"] if rep % 2 == 0 else ["fastmcp", "ours"]
            for task in TASKS:
                for name in order:
                    calls = task.ours if name == "ours" else task.fastmcp
                    runs[task.key][name].append(_run_task(fake, drivers[name], calls, task.done))
            log(f"round trips: rep {rep + 1}/{reps}")
    finally:
        for driver in drivers.values():
            driver.close()
        fake.latency(0)
        fake.reset()
        fake.close()
    return {
        "latency_s": latency_s, "reps": reps,
        "tasks": [{"key": t.key, "what": t.what, "tool": t.tool, "note": t.note,
                   "ours_calls": [c[0] for c in t.ours], "fastmcp_calls": [c[0] for c in t.fastmcp],
                   "ours": _pooled(runs[t.key]["ours"]), "fastmcp": _pooled(runs[t.key]["fastmcp"])}
                  for t in TASKS],
    }


# -- rate limit -----------------------------------------------------------------------------------

READS, ISSUES, CHANGED_PER_PASS = 200, 20, 2


def _read_workload(fake: Fake, driver: RawStdio, tool: str) -> dict[str, Any]:
    fake.reset()
    t0 = time.perf_counter()
    for call in range(READS):
        number = call % ISSUES + 1
        if number == 1 and call:  # a new pass: 10 % of the issues changed meanwhile
            pass_no = call // ISSUES
            for k in range(CHANGED_PER_PASS):
                changed = (pass_no * CHANGED_PER_PASS + k) % ISSUES + 1
                fake.post("/_fake/call/add_comment", {"owner": OWNER, "repo": REPO, "number": changed,
                                                      "body": f"update {pass_no}.{k}"})
        _call(driver, tool, _issue(number))
    wall = time.perf_counter() - t0
    entries = fake.timeline()
    return {"calls": READS, "requests": len(entries), "budget": sum(1 for e in entries if e["spent"]),
            "not_modified": sum(1 for e in entries if e["status"] == 304), "wall_s": wall}


def bench_rate_limit(fake_url: str, peer_py: Path, spec: Path,
                     log: Callable[[str], None] = print) -> dict[str, Any]:
    fake = Fake(fake_url)
    fake.post("/_fake/call/checkpoint")
    fake.latency(0)
    ways = {
        "ours_cache": (lambda: ours_driver(fake_url, "memory"), "github_get_issue"),
        "ours_no_cache": (lambda: ours_driver(fake_url, "off"), "github_get_issue"),
        "fastmcp": (lambda: peer_driver(peer_py, spec, fake_url), "issuesget"),
    }
    out: dict[str, Any] = {"calls": READS, "issues": ISSUES, "changed_per_pass": CHANGED_PER_PASS}
    try:
        for name, (make, tool) in ways.items():
            with make() as driver:
                driver.handshake_and_list()
                out[name] = _read_workload(fake, driver, tool)
            log(f"rate limit: {name}: {out[name]['budget']} units for {READS} calls")
    finally:
        fake.reset()
        fake.close()
    return out


def main(argv: list[str] | None = None) -> int:
    from bench.peer import ensure_peer_venv, trimmed_spec

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per fake answer (default 0.1)")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    peer_py, spec = ensure_peer_venv(), trimmed_spec()
    with fake_process() as url:
        result = {"roundtrips": bench_roundtrips(url, peer_py, spec, args.latency, args.reps,
                                                 lambda m: print(m, file=sys.stderr)),
                  "rate_limit": bench_rate_limit(url, peer_py, spec, lambda m: print(m, file=sys.stderr))}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
