"""What reading the token's scopes at start costs (issue 37): spawn → `tools/list` answered,
`github-mcp` over stdio against the bench fake GitHub on loopback, with the read (the default)
and without it (`GHMCP_TOKEN_SCOPES=0`), interleaved, the order alternating.

    .venv/bin/python bench/scope_read_cost.py [--reps 15]

The read is one `GET /rate_limit` (no rate-limit budget) and, before it, loading the upstream
client the first tool call would load anyway; the table gives the medians (min-max) and the
ratio. Against a real GitHub add one round trip to api.github.com. Writes
bench/results-scope-read.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from bench.common import BENCH, WORK, base_env, fake_process, spawn_to_list, summary  # noqa: E402
from bench.fake_server import TOKEN  # noqa: E402

SCRIPT = str(Path(sys.executable).with_name("github-mcp"))
RESULTS = BENCH / "results-scope-read.json"


def cold_start(fake_url: str, read: bool) -> float:
    env = base_env(GITHUB_API_URL=fake_url, GITHUB_TOKEN=TOKEN, GHMCP_CURSOR_SECRET="bench",
                   **({} if read else {"GHMCP_TOKEN_SCOPES": "0"}))
    return spawn_to_list([SCRIPT], env, stderr=WORK / "scope-read.log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, list[float]] = {"read": [], "off": []}
    with fake_process() as fake_url:
        for rep in range(-1, args.reps):  # -1: one discarded warm-up of each
            for way in (("read", "off") if rep % 2 else ("off", "read")):
                elapsed = cold_start(fake_url, way == "read")
                if rep >= 0:
                    seconds[way].append(elapsed)
    out = {way: summary(samples) for way, samples in seconds.items()}
    out["ratio"] = out["read"]["median"] / out["off"]["median"]
    RESULTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("| github-mcp, stdio | spawn → tools/list, median (min\u2013max) |")
    print("|---|---|")
    for way, label in (("off", "GHMCP_TOKEN_SCOPES=0"), ("read", "token scopes read (default)")):
        s = out[way]
        print(f"| {label} | {s['median'] * 1000:.0f} ms ({s['min'] * 1000:.0f}\u2013{s['max'] * 1000:.0f}) |")
    print(f"\nratio read / off: {out['ratio']:.2f} ({args.reps} interleaved runs each)")


if __name__ == "__main__":
    main()
