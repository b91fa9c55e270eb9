"""Every tool answer against the tool's own outputSchema, before it leaves the server.

An answer that would fail it (an upstream value of another type than the pinned description
says, a declaration the generator could not judge) is never sent: clients validate
structuredContent and would reject the whole result. The call answers `internal_error`, and the
log names where and which rule failed, never the value.

Each schema is compiled once, on its tool's first answer (fastjsonschema: ~0.3 ms for a 30-issue
page where jsonschema's interpreter takes ~5 ms). `format` is an annotation, as in JSON Schema
2020-12 (the clients' validators do not assert it either).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ghmcp_runtime.core.errors import ENVELOPE_OUTPUT_SCHEMA
from ghmcp_runtime.core.model import ToolSpec
from ghmcp_runtime.guards.validation import plain

_ANNOTATION_ONLY = {"date-time": r".*", "uri": r".*", "email": r".*", "date": r".*"}


def success_branch(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's outputSchema without its error branch: what a successful answer must hold (an
    answer without the envelope's fields matches the error branch never, so it passes the whole
    `oneOf` exactly when it passes this, and failing it names the field that broke it)."""
    whole: dict[str, Any] = plain(schema)
    branches = [b for b in whole.get("oneOf", []) if b != ENVELOPE_OUTPUT_SCHEMA]
    if "oneOf" not in whole or len(branches) != 1:
        return whole
    return {**{k: v for k, v in whole.items() if k != "oneOf"}, **branches[0]}


class OutputCheck:
    """Compiled outputSchema checks of successful answers, one per tool."""

    def __init__(self) -> None:
        self._compiled: dict[str, Callable[[Any], Any]] = {}

    def problem(self, tool: ToolSpec, answer: Mapping[str, Any]) -> str | None:
        """Where `answer` fails `tool`'s outputSchema (a path and a rule), None when it holds."""
        import fastjsonschema  # loaded with the first answer, not at start-up

        if all(key in answer for key in ENVELOPE_OUTPUT_SCHEMA["required"]):
            return "data (an answer that is also an error envelope)"
        check = self._compiled.get(tool.name)
        if check is None:
            check = fastjsonschema.compile(success_branch(tool.output_schema), formats=_ANNOTATION_ONLY)
            self._compiled[tool.name] = check
        try:
            check(answer)
        except fastjsonschema.JsonSchemaValueException as failed:
            return f"{failed.name} ({failed.rule})"
        return None
