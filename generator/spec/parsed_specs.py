"""The vendored descriptions, parsed once and kept outside the tree: `make generate` reads an
unchanged description from its parsed form (marshal) instead of decompressing, hashing and
parsing 13 MB of JSON on every run.

An entry is named by the sha256 of the vendored file's bytes (cheap: the compressed file), the
pinned sha256 it was verified against and the Python that wrote it (marshal's format is Python's
own), and is written only after a full load verified that pin on the uncompressed JSON: a
vendored file or a pin that changed in any way names another entry, so it is verified again. Entries live in the format cache's
directory (`$GHMCP_FORMAT_CACHE`, `off` disables them; generator/base/format_cache.py); one that
cannot be read, or reads back as something else, is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from pathlib import Path
from typing import Any

from generator.base.format_cache import default_directory, write_files

KEEP = 4  # entries kept (each description, and the one before an update)


def _directory() -> Path | None:
    root = default_directory()
    return root / "specs" if root else None


def entry_name(vendored: bytes, pinned: str) -> str:
    python = ".".join(map(str, sys.version_info[:3]))
    digest = hashlib.sha256(vendored + b"\0" + pinned.encode("ascii")).hexdigest()
    return f"{digest}-py{python}-m{marshal.version}.marshal"


def read(vendored: bytes, pinned: str) -> dict[str, Any] | None:
    """The parsed description stored for exactly these vendored bytes, verified against exactly
    this pinned sha256; else None."""
    directory = _directory()
    if directory is None:
        return None
    try:
        data = marshal.loads((directory / entry_name(vendored, pinned)).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def store(vendored: bytes, pinned: str, document: dict[str, Any]) -> None:
    """Keep `document` (verified against `pinned`) for these vendored bytes; the oldest go."""
    directory = _directory()
    if directory is None:
        return
    try:
        data = marshal.dumps(document)
    except ValueError:  # not plain JSON data: nothing to keep
        return
    write_files(directory, {entry_name(vendored, pinned): data})
    try:
        entries = sorted(directory.glob("*.marshal"), key=lambda p: p.stat().st_mtime)
        for old in entries[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
