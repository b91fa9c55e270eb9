"""The generator's caches outside the tree, so an unchanged render skips black (and its import)
and Jinja's template compilation.

* `black/`: black's output by sha256 over black's version, the mode and the unformatted source;
  the entry holds the formatted text behind a sha256 of it, so a truncated or edited file is a
  miss, never output. At most MAX_ENTRIES files are kept (oldest removed on flush).
* `packaging/`: the runtime's derived requirements (generator/packaging/requirements.py), by sha256 over
  everything they are derived from.
* `schema/`: docs/overrides.schema.json (pydantic's JSON Schema of the override models), by sha256
  over pydantic's version and the generator's and runtime's sources.
* `jinja/`: Jinja2's bytecode (file names keyed by template name and source checksum; Jinja
  refuses bytecode written by another Python).

`generate()` stays pure: inside it the caches only read files; what it computed is held in memory
and written by `flush()`, which the command line calls after generating. Location:
`$GHMCP_FORMAT_CACHE` (a directory, or `off`), else `$XDG_CACHE_HOME/ghmcp-generator` (default
`~/.cache/ghmcp-generator`). A cache that cannot be read or written is simply not used:
generation never fails because of it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from importlib.metadata import version
from pathlib import Path

import jinja2

ENV = "GHMCP_FORMAT_CACHE"
MAX_ENTRIES = 256


def default_directory(env: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if env is None else env
    chosen = env.get(ENV, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    base = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "ghmcp-generator"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_files(directory: Path, files: Mapping[str, bytes]) -> None:
    """Each file written whole (temporary file, then rename); errors only skip the cache."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    for name, data in files.items():
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, directory / name)
        except OSError:
            Path(tmp).unlink(missing_ok=True)


class TextStore:
    """Text by sha256(salt, source); files in `directory` (None: off), written on flush()."""

    def __init__(self, directory: Path | None, salt: str, suffix: str) -> None:
        self.directory = directory
        self._salt = salt
        self._suffix = suffix
        self._pending: dict[str, str] = {}  # file name -> text, until flush()

    def key(self, source: str) -> str:
        return _digest(self._salt + source) + self._suffix

    def get(self, source: str) -> str | None:
        if self.directory is None:
            return None
        name = self.key(source)
        if name in self._pending:
            return self._pending[name]
        try:
            stored = (self.directory / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        check, _, text = stored.partition("\n")
        return text if check == _digest(text) else None

    def put(self, source: str, formatted: str) -> None:
        if self.directory is not None:
            self._pending[self.key(source)] = formatted

    def flush(self) -> None:
        if self.directory is None or not self._pending:
            return
        pending, self._pending = self._pending, {}
        write_files(self.directory, {name: (_digest(text) + "\n" + text).encode("utf-8")
                                      for name, text in pending.items()})
        try:
            entries = sorted(self.directory.glob("*" + self._suffix), key=lambda p: p.stat().st_mtime)
            for stale in entries[: max(0, len(entries) - MAX_ENTRIES)]:
                stale.unlink(missing_ok=True)
        except OSError:
            return


def sources_text(*directories: Path) -> str:
    """Every `.py` file below `directories` (path and text) as one text: a cache key's input."""
    parts = []
    for directory in directories:
        for path in sorted(directory.rglob("*.py")):
            parts += [path.as_posix(), path.read_text(encoding="utf-8")]
    return "\0".join(parts)


class FormatCache(TextStore):
    """Formatted text by sha256(black version, mode, unformatted text)."""

    def __init__(self, directory: Path | None, mode_key: str) -> None:
        super().__init__(directory, f"black {version('black')}\n{mode_key}\n", ".py.txt")


class TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja2's file bytecode cache, reading as usual but writing only on flush()."""

    def __init__(self, directory: Path) -> None:
        super().__init__(str(directory))
        self.path = directory
        self._pending: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        name = self._get_cache_filename(bucket)
        if name in self._pending:
            bucket.bytecode_from_string(self._pending[name])
        else:
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._pending[self._get_cache_filename(bucket)] = bucket.bytecode_to_string()

    def flush(self) -> None:
        pending, self._pending = self._pending, {}
        write_files(self.path, {Path(name).name: data for name, data in pending.items()})


class Caches:
    """Both caches under one root (None: off)."""

    def __init__(self, root: Path | None, mode_key: str) -> None:
        self.root = root
        self.format = FormatCache(root / "black" if root else None, mode_key)
        self.templates = TemplateCache(root / "jinja") if root else None

    def flush(self) -> None:
        self.format.flush()
        if self.templates is not None:
            self.templates.flush()
