"""`python -m generator review --base REF`: what a change does to the published tool surfaces.

Compares the review artifacts committed at REF (`generated/*/tools.json`, `generated/*/errors.json`,
`generated/*/MANIFEST.json`) with the working tree, checks breaking changes against the declarations
in the working tree's `overrides/*.yaml`, lints those override files, and prints Markdown. Exit 0,
1 when a breaking change is undeclared, 2 when the inputs cannot be read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from generator.diagnostics import Diagnostic, DiagnosticError, Level, Where
from generator.overrides import parse_overrides
from generator.pipeline import generate, load_inputs, override_files
from generator.review_report import Contract, Side, Surface, review
from generator.spec import SpecError, load_pinned_spec

OUT = "generated"
ARTIFACTS = ("tools.json", "errors.json", "MANIFEST.json")


class ReviewError(Exception):
    pass


def _wanted(path: str) -> bool:
    """`<package>/{tools,errors,MANIFEST}.json`, or the single-server layout's `MANIFEST.json`."""
    parts = PurePosixPath(path).parts
    return parts == ("MANIFEST.json",) or (len(parts) == 2 and parts[1] in ARTIFACTS)


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except OSError as exc:
        raise ReviewError(f"git is not available: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise ReviewError(f"`git {' '.join(args)}` failed: {message}")
    return done.stdout.decode("utf-8")


def read_ref(root: Path, ref: str) -> dict[str, str]:
    """The review artifacts committed at `ref`, by path relative to generated/."""
    try:
        commit = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").strip()
    except ReviewError:
        raise ReviewError(f"{ref!r} names no commit in {root} (in a shallow clone, fetch the base "
                          "first)") from None
    names = _git(root, "ls-tree", "-r", "-z", "--name-only", commit, "--", OUT).split("\0")
    files = {}
    for name in names:
        relative = name.removeprefix(f"{OUT}/")
        if name.startswith(f"{OUT}/") and _wanted(relative):
            files[relative] = _git(root, "show", f"{commit}:./{name}")
    return files


def read_worktree(root: Path) -> dict[str, str]:
    out = root / OUT
    paths = [out / "MANIFEST.json", *(p for name in ARTIFACTS for p in out.glob(f"*/{name}"))]
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in sorted(paths)
            if p.is_file()}


def _json(files: Mapping[str, str], path: str, where: str) -> Any:
    try:
        return json.loads(files[path])
    except ValueError as exc:
        raise ReviewError(f"{OUT}/{path} ({where}) does not parse: {exc}") from None


def _specs(node: Any) -> set[str]:
    """Every `spec: {package, version}` in a MANIFEST.json."""
    found: set[str] = set()
    if isinstance(node, dict):
        spec = node.get("spec")
        if isinstance(spec, dict) and "version" in spec:
            found.add(f"{spec.get('package', 'spec')} {spec['version']}")
        for child in node.values():
            found |= _specs(child)
    elif isinstance(node, list):
        for child in node:
            found |= _specs(child)
    return found


def _surface(files: Mapping[str, str], package: str, where: str) -> Surface:
    path = f"{package}/tools.json"
    try:
        tools = {t["name"]: t for t in _json(files, path, where)["tools"]}
        if f"{package}/errors.json" not in files:
            return Surface(tools, None)
        path = f"{package}/errors.json"
        codes: dict[str, list[str]] = {name: [] for name in tools}
        for entry in _json(files, path, where)["codes"]:
            for tool in entry["tools"]:
                codes.setdefault(tool, []).append(entry["code"])
    except (KeyError, TypeError) as exc:
        raise ReviewError(f"{OUT}/{path} ({where}) is not shaped like generator output: "
                          f"{type(exc).__name__} {exc}") from None
    return Surface(tools, {tool: tuple(sorted(found)) for tool, found in codes.items()})


def read_side(files: Mapping[str, str], where: str) -> Side:
    packages = sorted(p.partition("/")[0] for p in files if p.endswith("/tools.json"))
    specs = set().union(*(_specs(_json(files, p, where)) for p in files if p.endswith("MANIFEST.json")))
    return Side({p: _surface(files, p, where) for p in packages}, tuple(sorted(specs)))


def read_overrides(root: Path) -> tuple[dict[str, Contract], list[Diagnostic], int]:
    """Per package, what the working tree's override file declares; every lint finding."""
    contracts: dict[str, Contract] = {}
    findings: list[Diagnostic] = []
    files = override_files(root / "overrides")
    try:
        spec = load_pinned_spec(root / "spec") if files else None
    except (OSError, SpecError) as exc:
        return contracts, [Diagnostic(Level.ERROR, Where("spec"), f"cannot load: {exc}")], len(files)
    for path in files:
        display = path.relative_to(root).as_posix()
        try:
            inputs = load_inputs(path, root=root, spec=spec)
        except OSError as exc:
            findings.append(Diagnostic(Level.ERROR, Where(display), f"cannot load: {exc}"))
            continue
        findings.extend(generate(inputs).diagnostics)
        try:
            overrides, _ = parse_overrides(inputs.overrides_text, display)
        except DiagnosticError:
            continue  # its problems are already among the findings
        renames = {t.renamed_from: t.name for t in overrides.tools if t.renamed_from}
        contracts[overrides.server.package] = Contract(display, tuple(overrides.breaking_changes), renames)
    return contracts, findings, len(files)


def main(root: Path, base: str | None) -> int:
    if not base:
        print("error: review needs --base <git ref>, e.g. --base origin/main", file=sys.stderr)
        return 2
    try:
        before = read_side(read_ref(root, base), base)
        after = read_side(read_worktree(root), "working tree")
    except ReviewError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    contracts, findings, count = read_overrides(root)
    report, undeclared = review(before, after, contracts, findings, base, count)
    sys.stdout.write(report)
    return 1 if undeclared else 0
