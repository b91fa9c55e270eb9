"""The generator's caches outside the tree, so an unchanged render skips black (and its import)
and Jinja's template compilation.

* `black/`: black's output by sha256 over black's version, the mode and the unformatted source;
  the entry holds the formatted text behind a sha256 of it, so a truncated or edited file is a
  miss, never output. At most MAX_ENTRIES files are kept (oldest removed on write).
* `jinja/`: Jinja2's own bytecode cache (keyed by template name and source checksum, refused by
  Jinja when written by another Python).

Location: `$GHMCP_FORMAT_CACHE` (a directory, or `off`), else `$XDG_CACHE_HOME/ghmcp-generator`
(default `~/.cache/ghmcp-generator`). A cache that cannot be read or written is simply not used:
generation never fails because of it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from importlib.metadata import version
from pathlib import Path

import jinja2

ENV = "GHMCP_FORMAT_CACHE"
MAX_ENTRIES = 256
_SUFFIX = ".py.txt"


def default_directory(env: dict[str, str] | os._Environ[str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    chosen = env.get(ENV, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    base = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "ghmcp-generator"


def template_cache(root: Path | None) -> jinja2.BytecodeCache | None:
    """Jinja2's file bytecode cache under `root/jinja`, or None when off or not creatable."""
    if root is None:
        return None
    directory = root / "jinja"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(directory))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class FormatCache:
    """Formatted text by sha256(black version, mode, unformatted text); files in `directory`."""

    def __init__(self, directory: Path | None, mode_key: str) -> None:
        self.directory = directory
        self._salt = f"black {version('black')}\n{mode_key}\n"

    def key(self, source: str) -> str:
        return _digest(self._salt + source)

    def get(self, source: str) -> str | None:
        if self.directory is None:
            return None
        try:
            stored = (self.directory / (self.key(source) + _SUFFIX)).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        check, _, text = stored.partition("\n")
        return text if check == _digest(text) else None

    def put(self, source: str, formatted: str) -> None:
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
                out.write(_digest(formatted) + "\n" + formatted)
            os.replace(tmp, self.directory / (self.key(source) + _SUFFIX))
            self._prune()
        except OSError:
            Path(tmp).unlink(missing_ok=True)

    def _prune(self) -> None:
        assert self.directory is not None
        entries = sorted(self.directory.glob("*" + _SUFFIX), key=lambda p: p.stat().st_mtime)
        for stale in entries[: max(0, len(entries) - MAX_ENTRIES)]:
            stale.unlink(missing_ok=True)
