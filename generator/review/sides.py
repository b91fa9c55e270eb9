"""`python -m generator review [--base REF]`: what a change does to the published tool surfaces.

Compares the review artifacts (`generated/*/tools.json`, `errors.json`, `MANIFEST.json`) committed
at the merge base of HEAD and REF (default: `$GENERATOR_BASE`, else HEAD; generator/lint/baseline.py)
with the working tree, checks breaking changes against the declarations in the working tree's
`overrides/*.yaml`, lints those override files, and prints Markdown. Exit 0; 1 when generated/ is
stale for an override or hook file (the report's first line says so) or a breaking change is
undeclared; 2 when the inputs cannot be read.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.base.diagnostics import Diagnostic, DiagnosticError, Level, Where
from generator.language.overrides import parse_overrides
from generator.lint.baseline import BaselineError, base_ref, committed, on_disk
from generator.pipeline.generate import Inputs, generate, load_inputs, override_files, sha256_text
from generator.review.contract import code
from generator.review.report import Contract, Side, Surface, review
from generator.spec.pinned import SpecCache, SpecError

OUT = "generated"


class ReviewError(Exception):
    pass


def read_ref(root: Path, ref: str) -> dict[str, str]:
    """The review artifacts committed at the merge base of HEAD and `ref`, by path relative to
    generated/."""
    return committed(root, OUT, ref)


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
            return Surface(tools, None, _budget(files, package), (_manifest(files, package) or {}).get("review") or {})
        path = f"{package}/errors.json"
        codes: dict[str, list[str]] = {name: [] for name in tools}
        for entry in _json(files, path, where)["codes"]:
            for tool in entry["tools"]:
                codes.setdefault(tool, []).append(entry["code"])
    except (KeyError, TypeError) as exc:
        raise ReviewError(f"{OUT}/{path} ({where}) is not shaped like generator output: "
                          f"{type(exc).__name__} {exc}") from None
    return Surface(tools, {tool: tuple(sorted(found)) for tool, found in codes.items()}, _budget(files, package),
                   (_manifest(files, package) or {}).get("review") or {})


def _budget(files: Mapping[str, str], package: str) -> int | None:
    budget = (_manifest(files, package) or {}).get("budgets", {}).get("tools_list_bytes")
    return budget if isinstance(budget, int) else None


def read_side(files: Mapping[str, str], where: str) -> Side:
    packages = sorted(p.partition("/")[0] for p in files if p.endswith("/tools.json"))
    specs = set().union(*(_specs(_json(files, p, where)) for p in files if p.endswith("MANIFEST.json")))
    return Side({p: _surface(files, p, where) for p in packages}, tuple(sorted(specs)))


@dataclass(slots=True)
class Head:
    """What the working tree's override files say: declarations per package, lint findings, and
    where generated/ was not regenerated after an override (or hook) file changed."""

    contracts: dict[str, Contract] = field(default_factory=dict)
    findings: list[Diagnostic] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    files: int = 0


def _manifest(disk: Mapping[str, str], package: str) -> dict[str, Any] | None:
    try:
        data = json.loads(disk[f"{package}/MANIFEST.json"])
    except (KeyError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _staleness(inputs: Inputs, package: str, disk: Mapping[str, str]) -> list[str]:
    """Compared with the hashes MANIFEST.json records (a hand-made MANIFEST without them says
    nothing); generator, template or spec changes are `make check`'s to find."""
    manifest = _manifest(disk, package)
    if manifest is None:
        return [f"{code(inputs.overrides_display)} has no {code(f'{OUT}/{package}/MANIFEST.json')}"]
    stale = []
    recorded = manifest.get("overrides", {})
    if "sha256" in recorded and recorded["sha256"] != sha256_text(inputs.overrides_text):
        stale.append(f"{code(inputs.overrides_display)} changed after {code(f'{OUT}/{package}/')} was generated")
    hooks = manifest.get("hooks", {})
    if "sha256" in hooks and hooks["sha256"] != sha256_text(inputs.sources.get(hooks.get("file"), "")):
        stale.append(f"{code(str(hooks.get('file')))} changed after {code(f'{OUT}/{package}/')} was generated")
    return stale


def read_overrides(root: Path, disk: Mapping[str, str]) -> Head:
    """The working tree's override files against `disk` (the working tree's generated/)."""
    head = Head()
    files = override_files(root / "overrides")
    head.files = len(files)
    specs = SpecCache(root / "spec")
    generated: set[str] = set()
    for path in files:
        display = path.relative_to(root).as_posix()
        try:
            inputs = load_inputs(path, root=root, specs=specs)
        except (OSError, SpecError) as exc:
            head.findings.append(Diagnostic(Level.ERROR, Where(display), f"cannot load: {exc}"))
            continue
        head.findings.extend(generate(inputs).diagnostics)
        try:
            overrides, _ = parse_overrides(inputs.overrides_text, display)
        except DiagnosticError:
            continue  # its problems are already among the findings
        package = overrides.server.package
        generated.add(package)
        head.stale += _staleness(inputs, package, disk)
        renames = {t.renamed_from: t.name for t in overrides.tools if t.renamed_from}
        head.contracts[package] = Contract(display, tuple(overrides.breaking_changes), renames)
    for package in sorted({n.partition("/")[0] for n in disk if n.endswith("/MANIFEST.json")} - generated):
        recorded = (_manifest(disk, package) or {}).get("overrides", {})
        if "file" in recorded and not (root / recorded["file"]).is_file():
            head.stale.append(f"{code(recorded['file'])} is gone but {code(f'{OUT}/{package}/')} is not")
    return head


def main(root: Path, base: str | None) -> int:
    base = base or base_ref()
    try:
        disk = on_disk(root / OUT)
        before = read_side(read_ref(root, base), base)
        after = read_side(disk, "working tree")
    except (BaselineError, ReviewError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    head = read_overrides(root, disk)
    report, undeclared = review(before, after, head.contracts, head.findings, base, head.files, head.stale)
    sys.stdout.write(report)
    if head.stale:
        print(f"error: {OUT}/ is stale: run `make generate` and commit it (the review shows what "
              f"{OUT}/ holds, not what the override files say)", file=sys.stderr)
        return 1
    return 1 if undeclared else 0
