"""The capability summary and the error catalog of a tool surface.

One implementation for both sides: the generator writes them for the whole server
(`summary.md`, `errors.json`), and the running server renders them again for the surface its
exposure flags (or an HTTP request's headers) leave, so they never describe hidden tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghmcp_runtime.core.errors import ENVELOPE_SCHEMA
from ghmcp_runtime.core.model import Annotations, ErrorCode

FINGERPRINT_NOTE = (
    "(covers tools with their descriptions, resources, templates,\n"
    "completions, error codes, this summary and output shapes; it changes whenever any of them does)."
)


def md(text: Any) -> str:
    """One Markdown table/list cell: a single line, `|` escaped."""
    flat = " ".join(str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return flat.replace("|", "\\|").strip()


def hints(a: Annotations) -> str:
    parts = ["read-only" if a.read_only else "mutating"]
    if a.destructive is not None:
        parts.append("destructive" if a.destructive else "non-destructive")
    if a.idempotent is not None:
        parts.append("idempotent" if a.idempotent else "not idempotent")
    parts.append("open-world" if a.open_world else "closed-world")
    return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class ToolLine:
    name: str
    title: str
    annotations: Annotations


@dataclass(frozen=True, slots=True)
class ResourceLine:
    uri: str  # a URI, or an RFC 6570 template
    title: str
    description: str
    tool: str | None = None  # templates: the tool reaching the same content


def summary_markdown(*, title: str, summary: str, fingerprint: str, tools: Sequence[ToolLine],
                     resources: Sequence[ResourceLine], exposure: str | None = None) -> str:
    """The capability-summary resource (`summary.md`)."""
    lines = [f"# {title} — capability summary", "", summary, ""]
    if exposure:
        lines += [exposure, ""]
    lines += [f"Capability fingerprint: `{fingerprint}` {FINGERPRINT_NOTE}", "", "## Tools", ""]
    lines += [f"- `{t.name}` — {md(t.title)} ({hints(t.annotations)})"
              for t in sorted(tools, key=lambda t: t.name)]
    lines += ["", "## Resources", ""]
    for r in resources:
        via = f" Same content through `{r.tool}`." if r.tool else ""
        lines.append(f"- `{r.uri}` — {md(r.title)}: {md(r.description)}{via}")
    return "\n".join(lines) + "\n"


def error_catalog(*, fingerprint: str, codes: Sequence[ErrorCode],
                  users: Mapping[str, Sequence[str]]) -> str:
    """The error-catalog resource (`errors.json`): every code, who emits it, retryability,
    repair, and the envelope schema. `users`: code -> the tools that can emit it (for the codes
    whose own `tools` are None)."""
    catalog = {
        "fingerprint": fingerprint,
        "carriers": {
            "tools": "tools/call result with isError: true; the envelope is structuredContent",
            "resources": "JSON-RPC error whose data is the envelope with code renamed machine_code and "
                         "message renamed human_message (plus resource_uri)",
        },
        "value_echo": "free-form values (titles, bodies, queries, label names, logins) are never "
                      "echoed; details.field/reason locate them",
        "envelope_schema": ENVELOPE_SCHEMA,
        "codes": [{"code": e.code, "temporary": e.temporary, "description": e.description,
                   "repair": e.repair,
                   "tools": sorted(users.get(e.code, ()) if e.tools is None else e.tools)}
                  for e in sorted(codes, key=lambda e: e.code)],
    }
    return json.dumps(catalog, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
