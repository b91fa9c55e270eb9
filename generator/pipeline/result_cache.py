"""Incremental generation: what an override file whose inputs did not change generated last time,
reused instead of parsed, built, linted and rendered again (`make generate` on every save).

Everything a file's generation reads is in its key:

* the generator, its templates and the runtime (sources), the Python and every installed
  distribution with its version and the pins (what `generator/packaging/requirements.py` derives from);
* the file's own text, the Python modules beside it (hooks and their parts), the description it
  is built on (its PINNED.json and the sha256 of the vendored bytes), the committed baseline of
  the output directory (the breaking-change check's);
* for its lint and render, the facts of the other files of its forge (`generator/pipeline/forge_part.py`):
  a peer that changes what it returns or how its tools are named invalidates the file too.

A file's `Part` is kept by its own key, its result (files, warnings, what `make generate`
prints) by its own key and its peers' facts; a forge package by its forge file and its parts.
Only clean results are kept (a run with an error recomputes). Entries are JSON in the format
cache's directory, written by `flush()` after the run (generator/base/format_cache.py: `off`
disables it, an unreadable or altered entry is a miss).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.base.diagnostics import Diagnostic, Level, Where
from generator.base.format_cache import TextStore, default_directory, sources_text
from generator.pipeline.forge_part import Part, from_json, to_json

GENERATOR_DIR = Path(__file__).resolve().parents[1]
SALT = "results 1\n"


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Cached:
    """A file's result as the run needs it again."""

    files: dict[str, str]
    diagnostics: list[Diagnostic]  # warnings (a result with errors is never kept)
    report: str  # what `make generate` printed about it


def _diagnostics_json(diagnostics: Sequence[Diagnostic]) -> list[list[object]]:
    return [[d.level.value, d.where.file, d.where.line, d.where.col, d.message, d.hint, d.rule]
            for d in diagnostics]


def _diagnostics(data: list[list[object]]) -> list[Diagnostic]:
    return [Diagnostic(Level(str(lv)), Where(str(f), int(str(ln)), int(str(c))), str(m), str(h), str(r))
            for lv, f, ln, c, m, h, r in data]


class ResultCache:
    def __init__(self, root: Path | None, static: str) -> None:
        """`static`: everything every file's generation reads besides its own inputs (the
        packaging inputs: runtime sources, pins, installed distributions, Python)."""
        self.store = TextStore(root / "results" if root else None, SALT, ".json")
        templates = "\0".join(f"{p.name}\0{p.read_text(encoding='utf-8')}"
                              for p in sorted((GENERATOR_DIR.parent / "templates").glob("*")) if p.is_file())
        self.static = _digest(static, sources_text(GENERATOR_DIR), templates, sys.version)

    @classmethod
    def default(cls, static: str) -> ResultCache:
        return cls(default_directory(), static)

    @property
    def on(self) -> bool:
        return self.store.directory is not None

    def file_key(self, display: str, text: str, sources: Mapping[str, str], spec: str,
                 baseline: Mapping[str, str]) -> str:
        return _digest(self.static, display, text, json.dumps(dict(sorted(sources.items()))), spec,
                       json.dumps(dict(sorted(baseline.items()))))

    def part(self, key: str) -> Part | None:
        text = self.store.get("part\0" + key)
        try:
            return from_json(text) if text is not None else None
        except (ValueError, KeyError, TypeError):
            return None

    def put_part(self, key: str, part: Part) -> None:
        self.store.put("part\0" + key, to_json(part))

    @staticmethod
    def result_key(key: str, peers: Sequence[Part]) -> str:
        return _digest(key, *sorted(to_json(p) for p in peers))

    def result(self, key: str) -> Cached | None:
        text = self.store.get("result\0" + key)
        if text is None:
            return None
        try:
            data = json.loads(text)
            return Cached(dict(data["files"]), _diagnostics(data["diagnostics"]), str(data["report"]))
        except (ValueError, KeyError, TypeError):
            return None

    def put_result(self, key: str, cached: Cached) -> None:
        self.store.put("result\0" + key, json.dumps(
            {"files": cached.files, "diagnostics": _diagnostics_json(cached.diagnostics),
             "report": cached.report}, sort_keys=True, ensure_ascii=False))

    def forge_key(self, decl_text: str, parts: Sequence[Part]) -> str:
        return _digest(self.static, decl_text, *(to_json(p) for p in parts))

    def forge(self, key: str) -> dict[str, str] | None:
        text = self.store.get("forge\0" + key)
        try:
            return dict(json.loads(text)) if text is not None else None
        except (ValueError, TypeError):
            return None

    def put_forge(self, key: str, files: Mapping[str, str]) -> None:
        self.store.put("forge\0" + key, json.dumps(dict(files), sort_keys=True, ensure_ascii=False))

    def flush(self) -> None:
        self.store.flush()
