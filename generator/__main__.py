"""`python -m generator {generate,check,diff,drift,review}`: exit 0 ok, 1 check found a diff (review:
an undeclared breaking change), 2 user error."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from generator.diagnostics import Level
from generator.io import compare, write
from generator.pipeline import Result, generate, load_inputs
from generator.spec import REPO_ROOT, SpecError

DEFAULT_OVERRIDES = REPO_ROOT / "overrides" / "github_issues.yaml"
DEFAULT_OUT = REPO_ROOT / "generated"


def _print_diagnostics(result: Result) -> None:
    for diagnostic in result.diagnostics:
        print(diagnostic.render(), file=sys.stderr)
    errors = sum(d.level is Level.ERROR for d in result.diagnostics)
    warnings = len(result.diagnostics) - errors
    if result.diagnostics:
        print(f"{errors} error(s), {warnings} warning(s)", file=sys.stderr)


def _summary(result: Result, seconds: float) -> None:
    server = result.server
    assert server is not None
    budget, desc_budget = server.tools_budget_bytes, server.description_budget_bytes
    print(f"{'tool':<28} {'ops':>3} {'bytes':>6} {'~tokens':>7} {'description':>11}  annotations")
    for tool in server.tools:
        size = result.stats[f"tool:{tool.name}"]
        desc = f"{len(tool.description.encode('utf-8'))}/{desc_budget}"
        kind = "read-only" if tool.annotations.read_only else (
            "destructive" if tool.annotations.destructive else "mutating")
        print(f"{tool.name:<28} {len(tool.operations):>3} {size:>6} {size // 4:>7} {desc:>11}  {kind}")
    total = result.stats["tools_list_bytes"]
    print(f"{'total tools/list':<28} {len(server.coverage.used):>3} {total:>6} {total // 4:>7} "
          f"{'':>11}  budget {budget} ({100 * total // budget}%)")
    print("~tokens = bytes / 4")
    for note in result.notes:
        print(f"breaking change {note}")
    print(f"operations used {len(server.coverage.used)}, excluded {len(server.coverage.excluded)}; "
          f"lint findings {len(result.diagnostics)}; "
          + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.timings.items())
          + f"; total {seconds * 1000:.0f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator")
    parser.add_argument("command", choices=["generate", "check", "diff", "drift", "review"])
    parser.add_argument("--overrides", type=Path, default=DEFAULT_OVERRIDES)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--spec-dir", type=Path, default=None)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--to", type=Path, help="drift: the new spec file (.json or .json.gz)")
    parser.add_argument("--base", help="review: the git ref whose committed generated/ is the baseline")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="review: the repository")
    args = parser.parse_args(argv)
    if args.command == "review":
        from generator.review import main as review_main

        return review_main(args.root, args.base)
    if args.command == "drift":
        from generator.drift import main as drift_main

        return drift_main(args.overrides, args.to, args.spec_dir)
    started = time.perf_counter()
    try:
        baseline = args.out if args.command == "generate" else None
        inputs = load_inputs(args.overrides, spec_dir=args.spec_dir, baseline_dir=baseline)
    except (OSError, SpecError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = generate(inputs)
    _print_diagnostics(result)
    if result.files is None:
        print("generation failed: nothing was written", file=sys.stderr)
        return 2
    if args.command == "generate":
        changes = write(result.files, args.out)
        if not args.quiet:
            for change in changes:
                print(f"{change.kind.lower():>8} {args.out.name}/{change.path}")
            _summary(result, time.perf_counter() - started)
        return 0
    changes = compare(result.files, args.out)
    for change in changes:
        print(f"{change.kind}: {args.out.name}/{change.path}")
        if change.diff:
            print(change.diff, end="" if change.diff.endswith("\n") else "\n")
    if changes and args.command == "check":
        print(f"{len(changes)} file(s) in {args.out.name}/ differ from what the generator produces; "
              "run `make generate` (never edit generated/ by hand)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
