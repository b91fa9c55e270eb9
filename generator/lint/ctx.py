"""What every contract rule sees (`Ctx`): the server, its wire tools, and locations in the override
file finer than the tool. The rule modules (lint, lint_text, lint_behaviour, lint_examples) share it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.base.diagnostics import Diagnostic, Level, Where
from generator.base.yamlsrc import Located
from generator.build.ir import IRServer, IRTool
from generator.lint.compose import Peer


@dataclass(slots=True)
class Ctx:
    """What every rule sees, plus locations in the override file finer than the tool."""

    server: IRServer
    wire: dict[str, dict[str, Any]]
    located: Located | None
    document: Mapping[str, Any] | None
    out: list[Diagnostic] = field(default_factory=list)
    peers: Sequence[Peer] = ()  # the other override files of the forge

    def _tool_index(self, name: str) -> int | None:
        tools = self.located.data.get("tools", []) if self.located else []
        for i, raw in enumerate(tools):
            if isinstance(raw, dict) and raw.get("name") == name:
                return i
        return None

    def at(self, loc: tuple[str | int, ...]) -> Where:
        return self.located.where(loc) if self.located else Where(self.server.overrides_file)

    def where(self, tool: IRTool, *path: str | int) -> Where:
        index = self._tool_index(tool.name)
        return tool.where if index is None else self.at(("tools", index, *path))

    def param_where(self, tool: IRTool, param: str, *path: str) -> Where:
        index = self._tool_index(tool.name)
        if index is None or self.located is None:
            return tool.where
        for k, raw in enumerate(self.located.data["tools"][index].get("params", [])):
            if raw == param or (isinstance(raw, dict) and param in (raw.get("name"), raw.get("use"))):
                return self.at(("tools", index, "params", k, *path))
        return self.where(tool, "params")

    def error(self, where: Where, rule: str, message: str, hint: str) -> None:
        self.out.append(Diagnostic(Level.ERROR, where, message, hint, rule))
