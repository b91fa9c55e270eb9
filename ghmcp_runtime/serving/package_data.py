"""What a generated package ships beside its code, read once: its texts, its wire tools
(`tools.json`), what the server checks beyond their inputSchemas (`checks.json`) and its error
catalog (`errors.json`), so `server.py` declares only what the override file says and takes
titles, descriptions, schemas and error codes from the files a reviewer reads. Its handlers
(declared steps, hooks) are named here and imported on first use, so a server answers
`initialize` and `tools/list` before the engine loads (issue 24, cold start)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from importlib import resources
from typing import Any

from ghmcp_runtime.base.lazy import LazyCallable, LazySequence
from ghmcp_runtime.core.model import Annotations, ErrorCode, Handler, Operation, ToolSpec


class PackageData:
    def __init__(self, package: str | None) -> None:
        if not package:
            raise ValueError("PackageData needs the generated package's name (__package__)")
        self.package = package

    def text(self, name: str) -> str:
        return resources.files(self.package).joinpath(name).read_text("utf-8")

    # what the generated `handlers` module holds, by tool, resource template and completion
    HANDLERS = "handlers"

    def tool_handler(self, tool: str) -> LazyCallable:
        """The handler of `tool` (handlers.TOOLS), imported on its first call."""
        return LazyCallable(f"{self.package}.{self.HANDLERS}", "TOOLS", tool)

    def resource_handler(self, template: str) -> LazyCallable:
        """The read handler of the resource template named `template` (handlers.READS)."""
        return LazyCallable(f"{self.package}.{self.HANDLERS}", "READS", template)

    def completion(self, name: str) -> LazyCallable:
        """A completion handler (handlers.COMPLETIONS), imported on its first call."""
        return LazyCallable(f"{self.package}.{self.HANDLERS}", "COMPLETIONS", name)

    def error_rules(self) -> LazySequence[Any]:
        """The server-wide on_error rules (handlers.ERROR_RULES), imported on the first read."""
        return LazySequence(f"{self.package}.{self.HANDLERS}", "ERROR_RULES")

    @cached_property
    def _wire(self) -> dict[str, dict[str, Any]]:
        return {tool["name"]: tool for tool in json.loads(self.text("tools.json"))["tools"]}

    @cached_property
    def _checks(self) -> dict[str, dict[str, Any]]:
        """checks.json: what the server checks beyond each tool's published inputSchema."""
        checks: dict[str, dict[str, Any]] = json.loads(self.text("checks.json"))["tools"]
        return checks

    @cached_property
    def _catalog(self) -> list[dict[str, Any]]:
        codes: list[dict[str, Any]] = json.loads(self.text("errors.json"))["codes"]
        return codes

    def error_codes(self) -> tuple[ErrorCode, ...]:
        """The server's error catalog, in the catalog's order, each code with the tools it lists."""
        return tuple(ErrorCode(code=c["code"], temporary=c["temporary"], description=c["description"],
                               repair=c["repair"], tools=tuple(c["tools"])) for c in self._catalog)

    def tool(self, *, name: str, handler: Handler, operations: Sequence[Operation],
             annotations: Annotations, field_map: Mapping[str, str] | None = None,
             echo_safe: Sequence[str] = (), toolset: str | None = None,
             runs: Sequence[str] = (), may_run: Sequence[str] = ()) -> ToolSpec:
        """The tool as tools.json publishes it (title, description, schemas) and errors.json
        lists its codes, with what only Python can carry."""
        wire = self._wire[name]
        return ToolSpec(
            name=name,
            title=wire["title"],
            description=wire["description"],
            input_schema=wire["inputSchema"],
            output_schema=wire["outputSchema"],
            annotations=annotations,
            error_codes=tuple(c["code"] for c in self._catalog if name in c["tools"]),
            operations=tuple(operations),
            handler=handler,
            meta=wire.get("_meta", {}),
            field_map=dict(field_map or {}),
            echo_safe=tuple(echo_safe),
            toolset=toolset,
            input_checks=self._checks.get(name),
            runs=tuple(runs),
            may_run=tuple(may_run),
        )
