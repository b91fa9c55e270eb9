"""Thin shells over the file map: write only changed bytes, check, diff."""

from __future__ import annotations

import difflib
import shutil
from dataclasses import dataclass
from pathlib import Path

from generator.render.files import FileMap


@dataclass(frozen=True, slots=True)
class Change:
    kind: str  # MISSING | EXTRA | CHANGED
    path: str
    diff: str


def existing_files(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith(".pyc") \
                and ".egg-info" not in str(path):
            with path.open(encoding="utf-8", errors="replace", newline="") as handle:
                out[path.relative_to(root).as_posix()] = handle.read()
    return out


def compare(files: FileMap, root: Path, label: str = "generated",
            scope: list[str] | None = None) -> list[Change]:
    """Differences between `files` and the tree; with `scope`, only paths under those prefixes."""
    current = existing_files(root)
    if scope is not None:
        current = {p: t for p, t in current.items() if p.startswith(tuple(scope))}
    changes: list[Change] = []
    for path in sorted(set(files) | set(current)):
        want, have = files.get(path), current.get(path)
        if want == have:
            continue
        if have is None:
            changes.append(Change("MISSING", path, ""))
        elif want is None:
            changes.append(Change("EXTRA", path, ""))
        else:
            diff = "".join(difflib.unified_diff(
                have.splitlines(keepends=True), want.splitlines(keepends=True),
                fromfile=f"{label}/{path} (on disk)", tofile=f"{label}/{path} (regenerated)"))
            changes.append(Change("CHANGED", path, diff))
    return changes


def write(files: FileMap, root: Path, scope: list[str] | None = None) -> list[Change]:
    changes = compare(files, root, scope=scope)
    for change in changes:
        target = root / change.path
        if change.kind == "EXTRA":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[change.path], encoding="utf-8", newline="\n")
    # a directory left with nothing but bytecode (a removed server's package) goes too
    for directory in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if directory.name != "__pycache__" and all(p.name == "__pycache__" for p in directory.iterdir()):
            for cache in directory.iterdir():
                shutil.rmtree(cache)
            directory.rmdir()
    return changes
