"""Small stable entry points for other parts of the project (tests, the fake GitHub, benches)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.base.diagnostics import DiagnosticError
from generator.base.yamlsrc import load_yaml
from generator.spec.patches import SpecPatch, apply_patches
from generator.spec.pinned import REPO_ROOT, declared_spec, load_pinned_spec, spec_dir

DEFAULT_OVERRIDES = REPO_ROOT / "overrides" / "github_issues.yaml"
OVERRIDES = REPO_ROOT / "overrides"


def patched_spec_document(overrides: Path = DEFAULT_OVERRIDES) -> dict[str, Any]:
    """The description the override file is built on (`server.spec`), with its spec patches
    applied (a fresh copy)."""
    text = overrides.read_text(encoding="utf-8")
    document = load_pinned_spec(spec_dir(declared_spec(text))).document
    located = load_yaml(text, str(overrides))
    patches = [
        (SpecPatch(**raw), located.where(("spec_patches", i)))
        for i, raw in enumerate(located.data.get("spec_patches", []))
    ]
    problems = apply_patches(document, patches)  # copies what it touches
    if problems:
        raise DiagnosticError(problems)
    return document


def forge_spec_document(spec: str | None = None, directory: Path = OVERRIDES) -> dict[str, Any]:
    """The description `spec` names (None: GitHub's) with the spec patches of every override file
    built on it applied, in file order; a patch two files both declare is applied once. What a fake
    forge checks every request and answer against, whichever server's tools call it."""
    document = load_pinned_spec(spec_dir(spec)).document
    seen: set[str] = set()
    patches = []
    for path in sorted(directory.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if declared_spec(text) != spec:
            continue
        located = load_yaml(text, str(path))
        for i, raw in enumerate(located.data.get("spec_patches", [])):
            patch = SpecPatch(**raw)
            key = patch.model_dump_json(exclude={"reason"})
            if key not in seen:
                seen.add(key)
                patches.append((patch, located.where(("spec_patches", i))))
    problems = apply_patches(document, patches)
    if problems:
        raise DiagnosticError(problems)
    return document
