"""`python -m generator {generate,check,diff,drift,review}`: exit 0 ok, 1 check found a diff (review:
an undeclared breaking change), 2 user error.

Without --overrides, every `overrides/*.yaml` is one server, generated into `generated/<package>/`;
nothing is written unless all of them generate cleanly.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from generator import packaging, render
from generator.diagnostics import Level
from generator.io import compare, write
from generator.overrides import SCHEMA_STORE, schema_text
from generator.packaging import RUNTIME_PYPROJECT, PackagingError, current_packaging
from generator.pipeline import Result, generate, load_inputs, override_files
from generator.render import FileMap, runtime_pyproject
from generator.spec import REPO_ROOT, SPEC_DIR, SpecCache, SpecError

OVERRIDES_DIR = REPO_ROOT / "overrides"
# what `generate` did to a file, by what `check` would have reported
WRITTEN = {"MISSING": "created", "CHANGED": "updated", "EXTRA": "deleted"}
DEFAULT_OUT = REPO_ROOT / "generated"
SCHEMA_FILE = REPO_ROOT / "docs" / "overrides.schema.json"


def _owned_outside(command: str) -> bool:
    """Repository files the generator owns outside generated/ (the override schema follows the
    override models, the runtime's pyproject its imports): `generate` rewrites them."""
    current = True
    owned = ((SCHEMA_FILE, schema_text()), (RUNTIME_PYPROJECT, runtime_pyproject(current_packaging())))
    for path, want in owned:
        have = path.read_text(encoding="utf-8") if path.is_file() else None
        if have == want:
            continue
        shown = path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)
        if command == "generate":
            path.write_text(want, encoding="utf-8", newline="\n")
            print(f"{WRITTEN['CHANGED' if have else 'MISSING']:>8} {shown}")
        else:
            print(f"{'CHANGED' if have else 'MISSING'}: {shown} (run `make generate`)")
            current = False
    return current


def _print_diagnostics(result: Result) -> None:
    for diagnostic in result.diagnostics:
        print(diagnostic.render(), file=sys.stderr)
    errors = sum(d.level is Level.ERROR for d in result.diagnostics)
    warnings = len(result.diagnostics) - errors
    if result.diagnostics:
        print(f"{errors} error(s), {warnings} warning(s)", file=sys.stderr)


def _summary(result: Result) -> None:
    server = result.server
    assert server is not None
    print(f"{server.name} ({server.package}):")
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
    seen, model_budget = result.stats["model_visible_bytes"], server.model_budget_bytes
    print(f"{'model-visible (no outputs)':<28} {'':>3} {seen:>6} {seen // 4:>7} "
          f"{'':>11}  budget {model_budget} ({100 * seen // model_budget}%)")
    print("~tokens = bytes / 4")
    for note in result.notes:
        print(f"breaking change {note}")
    print(f"operations used {len(server.coverage.used)}, excluded {len(server.coverage.excluded)}; "
          f"lint findings {len(result.diagnostics)}; "
          + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.timings.items()))


def _generate_all(paths: list[Path], args: argparse.Namespace) -> list[Result] | None:
    specs = SpecCache(args.spec_dir or SPEC_DIR)
    baseline = args.out if args.command == "generate" else None
    results = []
    for path in paths:
        result = generate(load_inputs(path, specs=specs, baseline_dir=baseline))
        _print_diagnostics(result)
        results.append(result)
    if any(r.files is None for r in results):
        return None
    packages = [r.server.package for r in results if r.server is not None]
    if len(set(packages)) != len(packages):
        print("error: two override files name the same package", file=sys.stderr)
        return None
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator")
    parser.add_argument("command", choices=["generate", "check", "diff", "drift", "review"])
    parser.add_argument("--overrides", type=Path, default=None,
                        help="one override file (default: every overrides/*.yaml)")
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
    paths = [args.overrides] if args.overrides else override_files(OVERRIDES_DIR)
    if args.command == "drift":
        from generator.drift import main as drift_main

        return max((drift_main(path, args.to, args.spec_dir) for path in paths), default=0)
    started = time.perf_counter()
    try:
        results = _generate_all(paths, args)
    except (OSError, SpecError, PackagingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    render.CACHES.flush()  # generate() only read the format and template caches; write what it computed
    if results is None:
        print("generation failed: nothing was written", file=sys.stderr)
        return 2
    files: FileMap = {}
    for result in results:
        assert result.files is not None
        files.update(result.files)
    # one override file owns only its package directory; all of them own the whole tree
    scope = [f"{r.server.package}/" for r in results if r.server] if args.overrides else None
    # the repository's own tree also carries the override schema; a scratch --out does not
    repo_tree = args.out.resolve() == DEFAULT_OUT.resolve()
    owned_ok = _owned_outside(args.command) if repo_tree else True
    packaging.STORE.flush()  # what _owned_outside and generate() derived, kept for the next run
    SCHEMA_STORE.flush()
    if args.command == "generate":
        changes = write(files, args.out, scope)
        if not args.quiet:
            for change in changes:
                print(f"{WRITTEN[change.kind]:>8} {args.out.name}/{change.path}")
            for result in results:
                _summary(result)
            print(f"total {(time.perf_counter() - started) * 1000:.0f} ms for {len(results)} server(s)")
        return 0
    changes = compare(files, args.out, scope=scope)
    for change in changes:
        print(f"{change.kind}: {args.out.name}/{change.path}")
        if change.diff:
            print(change.diff, end="" if change.diff.endswith("\n") else "\n")
    if (changes or not owned_ok) and args.command == "check":
        print(f"{len(changes)} file(s) in {args.out.name}/ differ from what the generator produces; "
              "run `make generate` (never edit generated/ by hand)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
