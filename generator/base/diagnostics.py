"""Diagnostics are data: collected, located, printed all at once, compiler-style."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class Where:
    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line else self.file


@dataclass(frozen=True, slots=True)
class Diagnostic:
    level: Level
    where: Where
    message: str
    hint: str = ""
    rule: str = ""

    def render(self) -> str:
        rule = f" [{self.rule}]" if self.rule else ""
        text = f"{self.where}: {self.level.value}{rule}: {self.message}"
        return f"{text}\n    hint: {self.hint}" if self.hint else text


class DiagnosticError(Exception):
    """Raised with every collected diagnostic when a stage cannot go on."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(f"{len(diagnostics)} diagnostic(s)")
        self.diagnostics = diagnostics


def errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.level is Level.ERROR]


def closest(name: str, candidates: list[str] | tuple[str, ...] | set[str]) -> str | None:
    import difflib

    matches = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None
