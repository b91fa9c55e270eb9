"""`make generate` as a whole process by number of override files (issue 32 item 5), next to a bare
`python -c 'import json; json.load(...)'` of GitHub's decompressed description in the same run.

    .venv/bin/python bench/generate_files.py [--reps 7] [--counts 1,4,8] [--out bench/results-generate-files.json]

Each count is a directory of its own (`python -m generator generate --quiet --overrides-dir DIR
--out OUT`), a git repository whose generated tree OUT is committed once before timing, as here:
a run is `make generate` in a checkout where nothing changed: 1 = github_issues.yaml; 4 = issues,
milestones, sub-issues and pull requests (issue 32 measured issues, milestones, sub-issues and
Forgejo labels; since issue 34 the issue tools' repairs name github_get_pull_request, so a GitHub
forge without the pulls file does not compose); 8 = every file in overrides/, the comments test case
(tests/generator/cases/forge_comments), and renamed copies of hook-less GitHub files (tool prefix,
names and toolsets renamed: real files with real tools) up to eight. Each has the forge files,
their default toolsets cut to the toolsets present. Runs are interleaved (json, 1, 4, 8, json, ...)
after one warm-up; wall-clock and CPU (user + system of the child) medians with min-max. The
caches are warm (a directory of this run: black's output, Jinja's bytecode, the parsed
description, each unchanged file's result: generator/pipeline/result_cache.py); `one file edited` appends
a comment to one file of the largest set before each run (that file is parsed, built, linted and
rendered again with its peers' facts from the cache); `caches off` sets GHMCP_FORMAT_CACHE=off:
every file parsed, built, linted, rendered and formatted, the JSON parsed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = ROOT / "overrides"
COMMENTS = ROOT / "tests" / "generator" / "cases" / "forge_comments" / "github_comments.yaml"
FOUR = ("github_issues.yaml", "github_milestones.yaml", "github_pulls.yaml", "github_sub_issues.yaml")


def _renamed(text: str, n: int) -> str:
    """A GitHub override file as another server of the same forge: every github_/github- name
    (tools, package, server, repairs) and every toolset renamed."""
    toolsets = list((yaml.safe_load(text).get("toolsets") or {}).keys())
    text = re.sub(r"\bgithub_(?!code\b)", f"ghc{n}_", text).replace("github-", f"ghc{n}-")
    for name in toolsets:
        text = re.sub(rf"(?m)^(  ){name}(:)", rf"\g<1>{name}_{n}\g<2>", text)
        text = re.sub(rf"\btoolset: {name}\b", f"toolset: {name}_{n}", text)
    return text


def file_set(count: int, directory: Path) -> list[str]:
    """`directory`/overrides holding `count` override files (and the forge files); their names."""
    out = directory / "overrides"
    (out / "forges").mkdir(parents=True)
    for hooks in OVERRIDES.glob("*.py"):
        shutil.copy(hooks, out / hooks.name)
    if count == 1:
        names = ["github_issues.yaml"]
    elif count == 4:
        names = list(FOUR)
    else:
        names = sorted(p.name for p in OVERRIDES.glob("*.yaml"))
    for name in names:
        shutil.copy(OVERRIDES / name, out / name)
    if count > 4:
        shutil.copy(COMMENTS, out / COMMENTS.name)
        names.append(COMMENTS.name)
        plain = [p for p in sorted(out.glob("github_*.yaml"))
                 if "hooks:" not in p.read_text(encoding="utf-8")]
        n = 0
        while len(names) < count:
            source = plain[n % len(plain)]
            n += 1
            copy = out / f"ghc{n}_{source.name.removeprefix('github_')}"
            copy.write_text(_renamed(source.read_text(encoding="utf-8"), n), encoding="utf-8")
            names.append(copy.name)
    declared: dict[str, set[str]] = {}  # forge -> the toolsets its files in the set declare
    for p in out.glob("*.yaml"):
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        forge_name = (data.get("server") or {}).get("forge", "github")
        declared.setdefault(forge_name, set()).update(data.get("toolsets") or {})
    for forge in (OVERRIDES / "forges").glob("*.yaml"):
        if forge.stem not in declared:
            continue  # no file of that forge in the set: no forge server
        text = forge.read_text(encoding="utf-8")
        default = yaml.safe_load(text)["default_toolsets"]
        kept = [t for t in default if t in declared[forge.stem]] or sorted(declared[forge.stem])[:1]
        text = re.sub(r"(?m)^default_toolsets: .*$", f"default_toolsets: [{', '.join(kept)}]", text)
        (out / "forges" / forge.name).write_text(text, encoding="utf-8")
    return names


def _child(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, check=False, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _commit(where: Path) -> None:
    """The set as a repository holds it: its generated tree committed, so the breaking-change
    baseline is what is committed (as in this repository), not what the last run wrote."""
    git = ["git", "-C", str(where), "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run([*git, *args], check=True, capture_output=True)


def _summary(samples: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
            "samples": samples}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--counts", default="1,4,8")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results-generate-files.json")
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.counts.split(",")]
    pinned = json.loads((ROOT / "spec" / "PINNED.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="bench-generate-files-") as tmp_name:
        tmp = Path(tmp_name)
        spec_json = tmp / "spec.json"
        spec_json.write_bytes(gzip.decompress((ROOT / "spec" / pinned["vendored_file"]).read_bytes()))
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "GHMCP_FORMAT_CACHE": str(tmp / "cache")}
        cold_env = {**env, "GHMCP_FORMAT_CACHE": "off"}
        baseline = [sys.executable, "-c", f"import json; json.load(open({str(spec_json)!r}, 'rb'))"]
        runs: dict[str, list[str]] = {}
        sets: dict[int, list[str]] = {}
        for count in counts:
            where = tmp / f"files-{count}"
            sets[count] = file_set(count, where)
            runs[f"{count} files"] = [sys.executable, "-m", "generator", "generate", "--quiet",
                                      "--overrides-dir", str(where / "overrides"),
                                      "--out", str(where / "generated")]
        last = runs[f"{counts[-1]} files"]
        edited = tmp / f"files-{counts[-1]}" / "overrides" / "github_milestones.yaml"
        original = edited.read_text(encoding="utf-8")
        samples: dict[str, tuple[list[float], list[float]]] = {
            k: ([], []) for k in ["json.load", *runs, "one file edited", "caches off"]}
        for rep in range(-1, args.reps):  # -1: warm-up (writes each tree, fills the caches)
            order = [("json.load", baseline, env), *((k, v, env) for k, v in runs.items()),
                     ("one file edited", last, env), ("caches off", last, cold_env)]
            for key, cmd, use in order:
                if key == "one file edited":  # as a save does: that file is built and linted again
                    edited.write_text(original + f"# edit {rep}\n", encoding="utf-8")
                wall, cpu = _child(cmd, use)
                if rep < 0 and key.endswith(" files"):
                    _commit(Path(cmd[-1]).parent)
                if rep >= 0:
                    samples[key][0].append(wall)
                    samples[key][1].append(cpu)
    result: dict[str, Any] = {
        "what": "python -m generator generate --quiet (whole process) by number of override files, "
                "vs python -c json.load of the decompressed description",
        "python": sys.version.split()[0], "cpus": os.cpu_count(), "reps": args.reps,
        "load_average": os.getloadavg(),
        "files": {str(c): sets[c] for c in counts},
        "wall": {k: _summary(v[0]) for k, v in samples.items()},
        "cpu": {k: _summary(v[1]) for k, v in samples.items()},
    }
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(table(result))
    return 0


def table(result: dict[str, Any]) -> str:
    lines = ["| override files | wall ms, median (min-max) | x json.load | CPU ms, median (min-max) | "
             "x json.load |", "|---|---:|---:|---:|---:|"]
    wall, cpu = result["wall"], result["cpu"]
    counts = sorted((k for k in wall if k.endswith(" files")), key=lambda k: int(k.split()[0]))
    for key in ["json.load", *counts, "one file edited", "caches off"]:
        w, c = wall[key], cpu[key]
        last = counts[-1]
        label = {"caches off": f"{last}, caches off (every file parsed, built, linted, "
                               "rendered and formatted)",
                 "one file edited": f"{last}, one of them edited (a save)"}.get(key, key)
        lines.append(f"| {label} | {w['median'] * 1000:.0f} ({w['min'] * 1000:.0f}-{w['max'] * 1000:.0f}) | "
                     f"{w['median'] / wall['json.load']['median']:.2f} | "
                     f"{c['median'] * 1000:.0f} ({c['min'] * 1000:.0f}-{c['max'] * 1000:.0f}) | "
                     f"{c['median'] / cpu['json.load']['median']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
