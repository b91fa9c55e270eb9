"""The IR's wire form: each tool exactly as `tools/list` publishes it, what a model reads of it
and its compact bytes, the fingerprint over the whole agent-visible surface, the runtime's shapes
and annotations, and the whole server's summary and error-catalog documents. Lint and the
breaking-change check read it; render writes it into the file map."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from generator.build.ir import IRAnnotations, IRServer, IRTool
from ghmcp_runtime.core.model import Annotations, ErrorCode, FieldRule, Shape
from ghmcp_runtime.core.token_scopes import SCOPES_META
from ghmcp_runtime.serving import capability_docs
from ghmcp_runtime.serving.capability_docs import ResourceLine, ToolLine


def wire_tool(tool: IRTool) -> dict[str, Any]:
    """One tool exactly as `tools/list` publishes it."""
    return {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": runtime_annotations(tool.annotations).wire(),
        "_meta": {SCOPES_META: tool.scopes.meta()},
    }


def runtime_fields(fields: Any) -> tuple[FieldRule, ...]:
    return tuple(FieldRule(name=f.name, path=f.path, detail=f.detail, transform=f.transform,
                           computed=f.computed, nested=runtime_fields(f.nested),
                           untrusted=f.untrusted, decode=f.decode, max_bytes=f.max_bytes)
                 for f in fields)


def runtime_shape(shape: Any) -> Shape:
    return Shape(name=shape.name, fields=runtime_fields(shape.fields), version=dict(shape.version),
                 version_field=shape.version_field, lockdown=shape.lockdown)


# what MCP clients hand a model of each tool (outputSchema and annotations stay with the client)
MODEL_VISIBLE = ("name", "description", "inputSchema")


def model_visible(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `tools/list` tools as a model reads them: MODEL_VISIBLE keys only."""
    return [{k: t[k] for k in MODEL_VISIBLE if k in t} for t in tools]


def compact_bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


FINGERPRINT_COVERS = ("tools", "resources", "templates", "completions", "error_codes", "summary", "shapes")


def fingerprint(server: IRServer, wire: Mapping[str, Any]) -> str:
    """`<name>@<version>+<12 hex>` over the whole agent-visible surface (FINGERPRINT_COVERS)."""
    surface = {
        "covers": list(FINGERPRINT_COVERS),
        "tools": wire,
        "resources": [[r.uri, r.name, r.title, r.description, r.mime_type, r.ttl_ms, r.cache_scope]
                      for r in server.resources],
        "templates": [[t.uri_template, t.name, t.title, t.description, t.mime_type, t.tool, t.ttl_ms,
                       t.cache_scope] for t in server.templates],
        "completions": [[t.uri_template, [v for v, _ in t.completions]] for t in server.templates],
        "error_codes": [[e.code, e.temporary, e.description, e.repair, e.tools] for e in server.error_codes],
        "summary": server.summary,
        "shapes": [[s.name, s.schema] for s in server.shapes],
    }
    digest = hashlib.sha256(canonical(surface).encode("utf-8")).hexdigest()[:12]
    return f"{server.name}@{server.version}+{digest}"


def error_catalog(server: IRServer, fp: str) -> str:
    """The error-catalog resource of the whole server (the runtime renders narrowed ones)."""
    return capability_docs.error_catalog(
        fingerprint=fp,
        codes=[ErrorCode(code=e.code, temporary=e.temporary, description=e.description,
                         repair=e.repair) for e in server.error_codes],
        users={e.code: e.tools for e in server.error_codes},
    )


def runtime_annotations(a: IRAnnotations) -> Annotations:
    return Annotations(read_only=a.read_only, open_world=a.open_world, destructive=a.destructive,
                       idempotent=a.idempotent)


def summary_document(server: IRServer, fp: str) -> str:
    """The capability-summary resource of the whole server (the runtime renders narrowed ones)."""
    return capability_docs.summary_markdown(
        title=server.title, summary=server.summary, fingerprint=fp,
        tools=[ToolLine(t.name, t.title, runtime_annotations(t.annotations)) for t in server.tools],
        resources=[*(ResourceLine(r.uri, r.title, r.description) for r in server.resources),
                   *(ResourceLine(t.uri_template, t.title, t.description, t.tool)
                     for t in server.templates)],
    )
