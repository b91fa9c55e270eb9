"""The installed distributions next to the dev checkout: wheel sizes, venv sizes, and cold start
(spawn → `tools/list` answered over stdio) of the installed console script vs `python -m` in the
checkout, interleaved, median of N. Writes bench/results-installed.json.

    .venv/bin/python bench/installed.py [--reps 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from bench.common import base_env, spawn_to_list  # noqa: E402
from tests.support.wheels import ROOT, SERVERS, build_wheels, install_servers, project  # noqa: E402

DEV_VENV = ROOT / ".venv"
OUT = ROOT / "bench" / "results-installed.json"


def tree_bytes(path: Path) -> int:
    total = 0
    for base, _, names in os.walk(path):
        for name in names:
            file = Path(base) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def cold_start(argv: list[str], cwd: Path) -> float:
    return spawn_to_list(argv, base_env(GITHUB_TOKEN="ghp_bench", GITHUB_API_URL="http://127.0.0.1:9"),
                         cwd=cwd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ghmcp-installed-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "dist").mkdir()
        wheels = build_wheels(tmp / "dist")
        python = install_servers(tmp / "dist", tmp / "venv")
        bare = install_servers(tmp / "dist", tmp / "venv-nopip", with_pip=False)
        home = tmp / "home"
        home.mkdir()
        sizes = {
            "wheels": {w.name: w.stat().st_size for w in wheels},
            "installed_venv": tree_bytes(python.parent.parent),
            "installed_venv_without_pip": tree_bytes(bare.parent.parent),
            "dev_venv": tree_bytes(DEV_VENV),
        }
        ways: dict[str, tuple[list[str], Path]] = {}
        for server in SERVERS:
            (script,) = project(server)["scripts"]
            ways[f"{server}: installed {script}"] = ([str(python.parent / script)], home)
            ways[f"{server}: dev python -m"] = ([str(DEV_VENV / "bin" / "python"), "-m", server], ROOT)
        seconds: dict[str, list[float]] = {k: [] for k in ways}
        for rep in range(-1, args.reps):  # -1: one discarded warm-up of each
            order = list(ways) if rep % 2 else list(reversed(ways))
            for name in order:
                elapsed = cold_start(*ways[name])
                if rep >= 0:
                    seconds[name].append(elapsed)
    median = {k: statistics.median(v) for k, v in seconds.items()}
    results: dict[str, Any] = {"reps": args.reps, "sizes": sizes,
                               "cold_start_median_s": median,
                               "cold_start_samples_s": seconds}
    OUT.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    mib = 1024 * 1024
    for name, size in sizes["wheels"].items():
        print(f"wheel {name}: {size / 1024:.1f} KiB")
    print(f"installed venv {sizes['installed_venv'] / mib:.1f} MiB "
          f"({sizes['installed_venv_without_pip'] / mib:.1f} MiB without pip, as in the image); "
          f"dev venv {sizes['dev_venv'] / mib:.1f} MiB: "
          f"{sizes['installed_venv'] / sizes['dev_venv']:.2f}x")
    for server in SERVERS:
        installed = next(v for k, v in median.items() if k.startswith(f"{server}: installed"))
        dev = median[f"{server}: dev python -m"]
        print(f"{server} cold start (median of {args.reps}): installed {installed * 1000:.0f} ms, "
              f"dev checkout {dev * 1000:.0f} ms: {installed / dev:.2f}x")


if __name__ == "__main__":
    main()
