"""Small stable entry points for other parts of the project (tests, the fake GitHub, benches)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.diagnostics import DiagnosticError
from generator.patches import SpecPatch, apply_patches
from generator.spec import REPO_ROOT, declared_spec, load_pinned_spec, spec_dir
from generator.yamlsrc import load_yaml

DEFAULT_OVERRIDES = REPO_ROOT / "overrides" / "github_issues.yaml"


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
