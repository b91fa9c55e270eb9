"""What cleaning untrusted text costs (issue 30 item 2), measured two ways in one run:

1. End to end, the figure the target is about: the server's CPU (user + system, read from /proc
   over `REPS` calls) for `github_get_issue` on an issue whose body and three comments are hostile
   fields of 64 KiB (GitHub's body limit) and 256 KiB, against the same call on plain fields of
   the same size; over HTTP against bench/fake_server.py. Hostile: the costliest text of each
   construct family (tests/support/hostile_markdown.py ADVERSARIAL, picked per field below), the
   security review's n1 and t26 bodies, and the costliest generated document. Target: at most 3x.
2. Per field: `untrusted.sanitize` on every adversarial text, the corpus of
   tests/support/hostile_text.py and generated documents, each the fastest of `runs` interleaved
   runs (thread CPU), next to nh3 (Ammonia, the HTML-sanitizer approach github-mcp-server takes
   with bluemonday) on the same text: what a sanitizer costs, which also eats `Promise<string>`
   and `<id>` and counts nothing.

    .venv/bin/python bench/cleaner_cost.py          # prints both tables
    make bench ONLY=untrusted_text                   # the same into docs/BENCHMARKS.md §10

Nothing here asserts a time (tests/security/test_n1_cleaner_linear.py checks ratios).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import nh3

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ROOT, WORK, base_env, fake_process, free_port, stop, wait_port
from bench.fake_server import OWNER, REPO, TOKEN
from ghmcp_runtime.cleaning.untrusted import sanitize
from tests.support.hostile_markdown import ADVERSARIAL
from tests.support.hostile_text import FIELD, PLAIN, PROSE, corpus, fastest, repeated

# the security review's bodies: n1 (quadratic link-definition titles), t26 (processing instructions)
REVIEW_BODIES = {"n1 '[]:b (' lines": "[]:b (\n", "n1 '[a]: b (' lines": "[a]: b (\n",
                 "t26 '<?\\n' lines": "<?\n"}
# the cleaner before this work (main 5b13345), same machine, the security review's figures
BEFORE = {"n1 64 KiB field (CPU)": "2.9-5.1 s", "n1 get_issue, body + 3 comments": "21.2 s",
          "another caller's ping meanwhile": "20.7 s"}
REPS = 5


def field_costs(runs: int = 5, generated: int = 40) -> dict[str, Any]:
    """Every text's per-field cost, ours and nh3's, against a plain field."""
    texts = {f"{family}: {unit!r}": repeated(unit) for family, units in ADVERSARIAL.items()
             for unit in units}
    texts.update({name: repeated(unit) for name, unit in REVIEW_BODIES.items()})
    texts.update(dict(corpus(generated)))
    texts["plain field"], texts["prose field"] = repeated(PLAIN), repeated(PROSE)
    ours = fastest(runs, sanitize, texts, time.thread_time)
    theirs = fastest(max(1, runs // 2), nh3.clean, texts, time.thread_time)
    plain, prose = ours.pop("plain field"), ours.pop("prose field")
    plain_nh3, _ = theirs.pop("plain field"), theirs.pop("prose field")
    rows = {name: {"ms": seconds * 1000, "x_plain": seconds / plain,
                   "nh3_ms": theirs[name] * 1000, "nh3_x_plain": theirs[name] / plain_nh3}
            for name, seconds in ours.items()}
    return {"plain_ms": plain * 1000, "prose_ms": prose * 1000, "plain_nh3_ms": plain_nh3 * 1000,
            "rows": rows, "runs": runs, "generated": generated}


def hostile_bodies(fields: dict[str, Any]) -> dict[str, str]:
    """The units the end-to-end run uses: the costliest per family, the review's, the costliest
    generated document."""
    rows = fields["rows"]
    chosen = {}
    for family, units in ADVERSARIAL.items():
        costliest = max(units, key=lambda unit: rows[f"{family}: {unit!r}"]["ms"])
        chosen[f"{family}: {costliest!r}"] = costliest
    chosen.update(REVIEW_BODIES)
    generated = max((name for name in rows if name.startswith("generated")), key=lambda n: rows[n]["ms"])
    chosen[generated] = dict(corpus(fields["generated"]))[generated]  # already field-long
    return chosen


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def end_to_end(bodies: dict[str, str], sizes: tuple[int, ...] = (FIELD, 4 * FIELD),
               reps: int = REPS) -> dict[str, Any]:
    """Server CPU per `github_get_issue` (body + 3 comments) for each body at each size."""
    out: dict[str, Any] = {"reps": reps, "sizes": {}}
    with fake_process() as api:
        def seed(helper: str, **kwargs: Any) -> Any:
            return httpx.post(f"{api}/_fake/call/{helper}", json=kwargs, timeout=120).json()["result"]

        issues: dict[int, dict[str, int]] = {}
        for size in sizes:
            issues[size] = {}
            for name, unit in {"plain": PLAIN, **bodies}.items():
                body = repeated(unit, size)
                number = int(seed("add_issue", owner=OWNER, repo=REPO, title="t", body=body,
                                  author="jane-doe"))
                for k in range(3):
                    seed("add_comment", owner=OWNER, repo=REPO, number=number,
                         body=f"c{k}\n" + body[:size - 3], author="jane-doe")
                issues[size][name] = number
        port = free_port()
        log = WORK / "cleaner_cost_server.log"
        env = base_env(GITHUB_API_URL=api, GHMCP_SERVER_SECRET="bench-cleaner-cost")
        with log.open("wb") as sink:
            server = subprocess.Popen([str(ROOT / ".venv" / "bin" / "github-issues-mcp"), "--transport",
                                       "http", "--port", str(port)], env=env, cwd=ROOT,
                                      stdout=sink, stderr=subprocess.STDOUT)
        try:
            wait_port(port, server, what="github-issues-mcp", log=log)
            url = f"http://127.0.0.1:{port}/mcp"
            headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                       "mcp-protocol-version": "2025-11-25", "authorization": f"Bearer {TOKEN}"}
            with httpx.Client(timeout=600) as client:
                def call(number: int) -> None:
                    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                        "name": "github_get_issue",
                        "arguments": {"owner": OWNER, "repo": REPO, "issue_number": number}}}
                    answer = client.post(url, headers=headers, content=json.dumps(request))
                    assert answer.status_code == 200 and b'"isError":false' in answer.content.replace(b" ", b"")

                for size in sizes:
                    for number in issues[size].values():
                        call(number)  # warm: imports, connections, the fake's caches
                    best = dict.fromkeys(issues[size], float("inf"))
                    for _ in range(3):  # interleaved, so a change in load hits every body alike
                        for name, number in issues[size].items():
                            before = _cpu_s(server.pid)
                            for _ in range(reps):
                                call(number)
                            best[name] = min(best[name], (_cpu_s(server.pid) - before) / reps)
                    plain = best.pop("plain")
                    rows = {name: {"ms": s * 1000, "x_plain": s / plain} for name, s in best.items()}
                    worst = max(rows, key=lambda name: rows[name]["x_plain"])
                    out["sizes"][str(size)] = {"plain_ms": plain * 1000, "rows": rows, "worst": worst}
        finally:
            stop(server)
    return out


def measure(runs: int = 5, generated: int = 40) -> dict[str, Any]:
    WORK.mkdir(exist_ok=True)
    fields = field_costs(runs, generated)
    e2e = end_to_end(hostile_bodies(fields))
    worst_field = max(fields["rows"], key=lambda name: fields["rows"][name]["ms"])
    return {"field_chars": FIELD, "fields": fields, "end_to_end": e2e, "worst_field": worst_field,
            "field_median_x_plain": statistics.median(r["x_plain"] for r in fields["rows"].values()),
            "before": BEFORE}


def main() -> None:
    result = measure()
    for size, run in result["end_to_end"]["sizes"].items():
        print(f"end to end, get_issue with 4 fields of {int(size) // 1024} KiB: plain {run['plain_ms']:.1f} ms "
              "server CPU")
        for name, row in sorted(run["rows"].items(), key=lambda item: -item[1]["x_plain"]):
            print(f"  {name:60} {row['ms']:7.1f} ms  {row['x_plain']:5.2f}x plain")
    fields = result["fields"]
    print(f"per field ({FIELD} chars): plain {fields['plain_ms']:.2f} ms (nh3 {fields['plain_nh3_ms']:.2f} ms), "
          f"prose {fields['prose_ms']:.2f} ms")
    for name, row in sorted(fields["rows"].items(), key=lambda item: -item[1]["ms"])[:30]:
        print(f"  {name:60} {row['ms']:6.2f} ms {row['x_plain']:5.2f}x   nh3 {row['nh3_ms']:6.2f} ms "
              f"{row['nh3_x_plain']:5.2f}x")


if __name__ == "__main__":
    main()
