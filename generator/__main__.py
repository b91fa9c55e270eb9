"""`python -m generator {generate,check,diff,drift,review}`: exit 0 ok, 1 check found a diff (review:
an undeclared breaking change), 2 user error.

Without --overrides, every `overrides/*.yaml` is one server, generated into `generated/<package>/`;
nothing is written unless all of them generate cleanly.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from generator.base.diagnostics import Diagnostic, Level
from generator.language.overrides import SCHEMA_STORE, schema_text
from generator.lint.baseline import BaselineError
from generator.lint.rules import BUDGET_RULES
from generator.packaging import requirements as packaging
from generator.packaging.requirements import RUNTIME_PYPROJECT, PackagingError, current_packaging
from generator.pipeline.forge_server import forge_table
from generator.pipeline.generate import override_files
from generator.pipeline.io import Change, compare, write
from generator.pipeline.report import tool_table
from generator.pipeline.result_cache import ResultCache
from generator.pipeline.run_all import Run, generate_all
from generator.render import doc_sections
from generator.render import files as render
from generator.render.files import FileMap, runtime_pyproject
from generator.spec.pinned import REPO_ROOT, SPEC_DIR, SpecCache, SpecError

OVERRIDES_DIR = REPO_ROOT / "overrides"
# what each unchanged override file generated last time (generator/pipeline/result_cache.py)
RESULTS = ResultCache.default(packaging.derivation_inputs())
# what `generate` did to a file, by what `check` would have reported
WRITTEN = {"MISSING": "created", "CHANGED": "updated", "EXTRA": "deleted"}
DEFAULT_OUT = REPO_ROOT / "generated"
SCHEMA_FILE = REPO_ROOT / "docs" / "overrides.schema.json"
DOCS_FILE = REPO_ROOT / "docs" / "overrides.md"  # its generated sections (generator/render/doc_sections.py)


def _owned_outside(command: str) -> bool:
    """Repository files the generator owns outside generated/ (the override schema follows the
    override models, the runtime's pyproject its imports): `generate` rewrites them."""
    current = True
    docs = DOCS_FILE.read_text(encoding="utf-8") if DOCS_FILE.is_file() else None
    owned = ((SCHEMA_FILE, schema_text()), (RUNTIME_PYPROJECT, runtime_pyproject(current_packaging())),
             *(((DOCS_FILE, doc_sections.render(docs)),) if docs is not None else ()))
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


def _print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    for diagnostic in diagnostics:
        print(diagnostic.render(), file=sys.stderr)
    errors = sum(d.level is Level.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    if diagnostics:
        print(f"{errors} error(s), {warnings} warning(s)", file=sys.stderr)


def edited_inputs(files: FileMap, changes: list[Change], out: Path) -> list[str]:
    """The files a human edits (override file, hooks) whose hash differs from the one the committed
    MANIFEST.json records: named before the diffs of what they generate."""
    lines = []
    for change in changes:
        if change.kind != "CHANGED" or not change.path.endswith("MANIFEST.json"):
            continue
        try:
            have = json.loads((out / change.path).read_text(encoding="utf-8"))
        except ValueError:
            continue
        want = json.loads(files[change.path])
        package = change.path.rpartition("/")[0]
        since = f"since {out.name}/{package + '/' if package else ''} was generated"
        for key in ("overrides", "hooks"):  # what a human edits
            if (have.get(key) or {}) != (want.get(key) or {}):
                lines.append(f"EDITED: {(want.get(key) or have.get(key))['file']} {since}")
        for key in ("spec", "generator"):
            was, now = have.get(key) or {}, want.get(key) or {}
            if was.get("version") != now.get("version"):
                name = now.get("package") or now.get("name")
                lines.append(f"INPUT: {key} {name} {was.get('version')} -> {now.get('version')} {since}")
    return lines


def _generate_all(args: argparse.Namespace) -> Run | None:
    directory = args.overrides.parent if args.overrides else args.overrides_dir
    run = generate_all(directory, specs=SpecCache(args.spec_dir or SPEC_DIR), baseline_dir=args.out,
                       only=args.overrides, cache=RESULTS)
    for result in run.results:
        _print_diagnostics(result.diagnostics)
        if result.server is not None and any(d.rule in BUDGET_RULES for d in result.diagnostics):
            print(tool_table(result.server), file=sys.stderr, end="")
    _print_diagnostics(run.forge_problems)
    if not run.ok:
        return None
    packages = [r.package for r in run.results if r.package]
    packages += [decl.file.server.package for decl, _ in run.forges]
    if len(set(packages)) != len(packages):
        print("error: two override files name the same package", file=sys.stderr)
        return None
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator")
    parser.add_argument("command", choices=["generate", "check", "diff", "drift", "review"])
    parser.add_argument("--overrides", type=Path, default=None,
                        help="one override file (default: every overrides/*.yaml)")
    parser.add_argument("--overrides-dir", type=Path, default=OVERRIDES_DIR,
                        help="the directory of the override files and their forges/ (default: overrides/)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--spec-dir", type=Path, default=None)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--to", type=Path, help="drift: the new spec file (.json or .json.gz)")
    parser.add_argument("--base", help="review: the git ref whose committed generated/ is the baseline")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="review: the repository")
    args = parser.parse_args(argv)
    if args.command == "review":
        from generator.review.sides import main as review_main

        return review_main(args.root, args.base)
    if args.command == "drift":
        paths = [args.overrides] if args.overrides else override_files(args.overrides_dir)
        from generator.review.drift import main as drift_main

        return max((drift_main(path, args.to, args.spec_dir) for path in paths), default=0)
    started = time.perf_counter()
    try:
        run = _generate_all(args)
    except (OSError, SpecError, PackagingError, BaselineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    render.CACHES.flush()  # generate() only read the format and template caches; write what it computed
    RESULTS.flush()
    if run is None:
        print("generation failed: nothing was written", file=sys.stderr)
        return 2
    results = run.results
    files: FileMap = {}
    for result in results:
        assert result.files is not None
        files.update(result.files)
    files.update(run.forge_files)
    # one override file owns only its package directory; all of them own the whole tree
    scope = [f"{r.package}/" for r in results if r.package] if args.overrides else None
    # the repository's own tree also carries the override schema; a scratch --out does not
    repo_tree = args.out.resolve() == DEFAULT_OUT.resolve()
    owned_ok = _owned_outside(args.command) if repo_tree else True
    packaging.STORE.flush()  # what _owned_outside and generate() derived, kept for the next run
    packaging.IMPORTS.flush()
    SCHEMA_STORE.flush()
    if args.command == "generate":
        changes = write(files, args.out, scope)
        if not args.quiet:
            for change in changes:
                print(f"{WRITTEN[change.kind]:>8} {args.out.name}/{change.path}")
            for result in results:
                print(result.report or f"{result.package}: unchanged inputs, reused", end="")
            for decl, members in run.forges:
                forge_table(decl, members, sys.stdout)
            print(f"total {(time.perf_counter() - started) * 1000:.0f} ms for {len(results)} "
                  f"override file(s), {len(run.forges)} forge server(s)")
        return 0
    changes = compare(files, args.out, scope=scope)
    for line in edited_inputs(files, changes, args.out):
        print(line)
    # what a reviewer reads first; MANIFEST.json only records hashes of the rest
    for change in sorted(changes, key=lambda c: (c.path.endswith("MANIFEST.json"), c.path)):
        print(f"{change.kind}: {args.out.name}/{change.path}")
        if change.diff and not change.path.endswith("MANIFEST.json"):
            print(change.diff, end="" if change.diff.endswith("\n") else "\n")
    if (changes or not owned_ok) and args.command == "check":
        print(f"{len(changes)} file(s) in {args.out.name}/ differ from what the generator produces; "
              "run `make generate` (never edit generated/ by hand)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
