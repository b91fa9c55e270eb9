"""How long `make generate`'s generator run takes on the full pinned spec, by stage, next to a plain
`json.load` of the same (decompressed) description measured in the same run.

    .venv/bin/python bench/generate.py [--reps N] [--cli-reps N] [--out bench/results-generate.json]

In-process rows come from `generator.pipeline.generate.generate`'s own `Result.timings` (load = read + gunzip
+ sha256 + JSON parse + override parse; build; lint; render; format = black) plus `write`, timed
here (`generator.pipeline.io.write` into a fresh temporary directory: every file is written). The baseline
is `json.load` of the decompressed spec from a temporary file. The CLI rows time whole processes:
`python -m generator generate --quiet --out <a temporary copy of generated/>` (exactly `make
generate` on an up-to-date tree: interpreter start, imports, baseline read, nothing to write) next to
`python -c "import json; json.load(...)"`. Repetitions are interleaved (baseline, generator,
baseline, ...) after one warm-up of each; the table shows the median and the min-max.

black's output, Jinja's compiled templates, the runtime's derived requirements and the override
schema are cached outside the tree (generator/base/format_cache.py).
Every run here uses a fresh cache root of its own: the plain rows are a re-run over an unchanged
render (caches warm, black not even imported), the "caches off" rows (GHMCP_FORMAT_CACHE=off) what
a run costs when every template and every Python file's unformatted text changed.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from generator.base.format_cache import ENV as FORMAT_CACHE_ENV
from generator.base.format_cache import Caches
from generator.language.overrides import parse_overrides
from generator.pipeline.generate import override_files
from generator.pipeline.io import write
from generator.pipeline.run_all import generate_all
from generator.render import files as render
from generator.spec.pinned import (
    REPO_ROOT,
    SPEC_DIR,
    SpecCache,
    read_document_bytes,
    read_pinned,
)

OVERRIDES_DIR = REPO_ROOT / "overrides"
OVERRIDES = OVERRIDES_DIR / "github_issues.yaml"
GENERATED = REPO_ROOT / "generated"  # `make generate` reads it as the breaking-change baseline
STAGES = ("load", "build", "lint", "render", "format", "write")


def _timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _generator_run(tmp: Path, rep: int) -> dict[str, float]:
    """What `python -m generator generate` does in-process: each description once, every override
    file built, the checks that span each forge, every file linted and rendered, each forge's
    server; stage times are summed over the files."""
    gc.collect()
    t0 = time.perf_counter()
    specs = SpecCache()
    specs.load(SPEC_DIR)
    sample: dict[str, float] = {"load": time.perf_counter() - t0}
    run = generate_all(OVERRIDES_DIR, specs=specs, baseline_dir=GENERATED)
    if not run.ok:
        problems = "\n".join(d.render() for r in run.results for d in r.diagnostics)
        raise SystemExit(f"generation failed; fix the override files first:\n{problems}")
    files: dict[str, str] = dict(run.forge_files)
    for result in run.results:
        assert result.files is not None
        files.update(result.files)
        for stage, seconds in result.timings.items():
            sample[stage] = sample.get(stage, 0.0) + seconds
    t1 = time.perf_counter()
    write(files, tmp / f"out-{rep}")
    t2 = time.perf_counter()
    sample["write"] = t2 - t1
    sample["total"] = t2 - t0
    return sample


def _load_parts(path: Path) -> dict[str, float]:
    """The load stage taken apart (measured separately; not part of the total)."""
    gc.collect()
    t0 = time.perf_counter()
    data = read_document_bytes(path)
    t1 = time.perf_counter()
    hashlib.sha256(data).hexdigest()
    t2 = time.perf_counter()
    json.loads(data)
    t3 = time.perf_counter()
    parse_overrides(OVERRIDES.read_text(encoding="utf-8"), "overrides/github_issues.yaml")
    t4 = time.perf_counter()
    return {"load: read + gunzip": t1 - t0, "load: sha256": t2 - t1, "load: json.loads": t3 - t2,
            "load: override file (YAML with locations + pydantic)": t4 - t3}


def _cli(args: list[str], cwd: Path, format_cache: str = "off") -> float:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", FORMAT_CACHE_ENV: format_cache}
    t0 = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, check=False, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[1:])} exited {proc.returncode}:\n{proc.stderr}")
    return seconds


def _summary(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=9, help="in-process repetitions (>= 7)")
    parser.add_argument("--cli-reps", type=int, default=7, help="whole-process repetitions (0 skips)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results-generate.json")
    args = parser.parse_args(argv)
    if args.reps < 7 or (args.cli_reps and args.cli_reps < 7):
        parser.error("use at least 7 repetitions")

    pinned = read_pinned()
    raw = (SPEC_DIR / pinned.vendored_file).read_bytes()
    plain = gzip.decompress(raw) if pinned.vendored_file.endswith(".gz") else raw
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp_name:
        tmp = Path(tmp_name)
        spec_json = tmp / "spec.json"
        spec_json.write_bytes(plain)
        cache_root = tmp / "generator-cache"
        warm_cache, no_cache = Caches(cache_root, render.BLACK_MODE_KEY), Caches(None, render.BLACK_MODE_KEY)

        def baseline() -> None:
            with spec_json.open("rb") as f:
                json.load(f)

        baseline()
        render.CACHES = warm_cache
        _generator_run(tmp, -1)  # warm-up: imports, template compilation, the format cache
        warm_cache.flush()
        base: list[float] = []
        runs: list[dict[str, float]] = []
        parts: list[dict[str, float]] = []
        for rep in range(args.reps):
            base.append(_timed(baseline))
            render.CACHES = warm_cache
            runs.append(_generator_run(tmp, rep))
            render.CACHES = no_cache
            cold = _generator_run(tmp, rep)
            runs[-1]["format (caches off)"] = cold["format"]
            runs[-1]["total (caches off)"] = cold["total"]
            parts.append(_load_parts(SPEC_DIR / pinned.vendored_file))

        cli_gen: list[float] = []
        cli_cold: list[float] = []
        cli_json: list[float] = []
        if args.cli_reps:
            gen_cmd = [sys.executable, "-m", "generator", "generate", "--quiet"]
            json_cmd = [sys.executable, "-c", f"import json; json.load(open({str(spec_json)!r}, 'rb'))"]
            _cli([*json_cmd], tmp)
            for rep in range(-1, args.cli_reps):  # -1: warm-up
                out = tmp / f"cli-{rep}"
                shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
                json_seconds = _cli(json_cmd, tmp)
                gen_seconds = _cli([*gen_cmd, "--out", str(out)], REPO_ROOT, str(cache_root))
                cold_seconds = _cli([*gen_cmd, "--out", str(out)], REPO_ROOT)
                if rep >= 0:
                    cli_json.append(json_seconds)
                    cli_gen.append(gen_seconds)
                    cli_cold.append(cold_seconds)

    stages = [s for s in STAGES if s in runs[0]] + sorted(set(runs[0]) - {*STAGES, "total"})
    rows: dict[str, dict[str, float]] = {s: _summary([r.get(s, 0.0) for r in runs]) for s in stages}
    rows["total"] = _summary([r["total"] for r in runs])
    part_rows = {k: _summary([p[k] for p in parts]) for k in parts[0]}
    baseline_row = _summary(base)
    result: dict[str, Any] = {
        "what": "python -m generator generate on the full pinned spec, by stage, vs json.load",
        "spec": {"package": pinned.package, "version": pinned.version, "sha256": pinned.sha256,
                 "gzipped_bytes": len(raw), "json_bytes": len(plain)},
        "environment": {"python": platform.python_version(), "implementation": platform.python_implementation(),
                        "platform": platform.platform(), "cpus": os.cpu_count(), "black": version("black")},
        "repetitions": {"in_process": args.reps, "cli": args.cli_reps},
        "servers": [p.stem for p in override_files(OVERRIDES_DIR)],
        "seconds": {"json.load": {**baseline_row, "samples": base},
                    **{k: {**v, "samples": [r.get(k, 0.0) for r in runs]} for k, v in rows.items()},
                    **{k: {**v, "samples": [p[k] for p in parts]} for k, v in part_rows.items()}},
        "ratio_total_to_json_load": rows["total"]["median"] / baseline_row["median"],
    }
    if cli_gen:
        result["seconds"]["cli generate"] = {**_summary(cli_gen), "samples": cli_gen}
        result["seconds"]["cli json.load"] = {**_summary(cli_json), "samples": cli_json}
        result["seconds"]["cli generate (caches off)"] = {**_summary(cli_cold), "samples": cli_cold}
        result["ratio_cli"] = statistics.median(cli_gen) / statistics.median(cli_json)
        result["ratio_cli_caches_off"] = statistics.median(cli_cold) / statistics.median(cli_json)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(_table(result, stages, list(part_rows)))
    print(f"\nraw samples: {args.out.relative_to(REPO_ROOT) if args.out.is_relative_to(REPO_ROOT) else args.out}")
    return 0


def _ms(value: float) -> str:
    return f"{value * 1000:.1f}"


def _table(result: dict[str, Any], stages: list[str], parts: list[str]) -> str:
    secs = result["seconds"]
    base = secs["json.load"]["median"]
    spec = result["spec"]
    env = result["environment"]
    lines = [
        f"`make generate` generator run, {spec['package']} {spec['version']} "
        f"({spec['json_bytes'] / 1e6:.1f} MB JSON, {spec['gzipped_bytes'] / 1e6:.1f} MB gzipped); "
        f"Python {env['python']}, black {env['black']}, {env['cpus']} CPUs; "
        f"{result['repetitions']['in_process']} interleaved repetitions (in-process), "
        f"{result['repetitions']['cli']} (whole process).",
        "",
        "| stage | median ms | min-max ms | x json.load |",
        "|---|---:|---:|---:|",
    ]

    def row(label: str, key: str, ref: float) -> None:
        s = secs[key]
        lines.append(f"| {label} | {_ms(s['median'])} | {_ms(s['min'])}-{_ms(s['max'])} | "
                     f"{s['median'] / ref:.2f} |")

    row("`json.load` of the decompressed spec (baseline)", "json.load", base)
    for stage in stages:
        row(stage, stage, base)
    row("**total** (load -> write)", "total", base)
    lines += ["", "| the load stage taken apart (separate runs) | median ms | min-max ms | x json.load |",
              "|---|---:|---:|---:|"]
    for part in parts:
        row(part.removeprefix("load: "), part, base)
    if "cli generate" in secs:
        cli_base = secs["cli json.load"]["median"]
        lines += ["", "| whole process | median ms | min-max ms | x `python -c json.load` |",
                  "|---|---:|---:|---:|"]
        row("`python -c 'json.load(...)'`", "cli json.load", cli_base)
        row("`python -m generator generate --quiet`", "cli generate", cli_base)
        row("the same, caches off", "cli generate (caches off)", cli_base)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
