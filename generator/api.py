"""Small stable entry points for other parts of the project (tests, the fake GitHub, benches)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.diagnostics import DiagnosticError, Where
from generator.patches import SpecPatch, apply_patches
from generator.spec import REPO_ROOT, declared_spec, load_pinned_spec, spec_dir
from generator.yamlsrc import load_yaml

DEFAULT_OVERRIDES = REPO_ROOT / "overrides" / "github_issues.yaml"


def patched_spec_document(overrides: Path = DEFAULT_OVERRIDES, *more: Path) -> dict[str, Any]:
    """The description the override file is built on (`server.spec`), with its spec patches
    applied (a fresh copy). With `more` files on the same description (a forge's other files, for
    a fake that serves them all), their patches follow, each applied once: two files carrying the
    same patch (each file its own copy, docs/overrides.md) do not apply it twice."""
    text = overrides.read_text(encoding="utf-8")
    document = load_pinned_spec(spec_dir(declared_spec(text))).document
    patches: list[tuple[SpecPatch, Where]] = []
    seen: set[str] = set()
    for path in (overrides, *more):
        located = load_yaml(path.read_text(encoding="utf-8") if path != overrides else text, str(path))
        for i, raw in enumerate(located.data.get("spec_patches", [])):
            key = json.dumps({k: v for k, v in raw.items() if k != "reason"}, sort_keys=True)
            if key not in seen:
                seen.add(key)
                patches.append((SpecPatch(**raw), located.where(("spec_patches", i))))
    problems = apply_patches(document, patches)  # copies what it touches
    if problems:
        raise DiagnosticError(problems)
    return document


def forge_override_files(forge: str, overrides_dir: Path = REPO_ROOT / "overrides") -> list[Path]:
    """The override files whose server talks to `forge` (`server.forge`), in name order."""
    out = []
    for path in sorted(overrides_dir.glob("*.yaml")):
        server = load_yaml(path.read_text(encoding="utf-8"), str(path)).data.get("server") or {}
        if server.get("forge", "github") == forge:
            out.append(path)
    return out
