"""tools/list bytes per exposure surface (what a client preloads into the model's context).

    .venv/bin/python bench/surfaces.py

For each generated server and a set of exposure flags, the compact JSON of the `tools/list`
result the runtime serves for that surface (`{"tools": [...]}`, the measure `tools.json` and
TOOLS.md use), its share of the whole surface, and ~tokens (bytes / 4). The same bytes go to an
HTTP request whose X-MCP-* headers select the same surface. Deterministic: no timing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from ghmcp_runtime.exposure import ExposureFlags, ExposurePolicy  # noqa: E402
from ghmcp_runtime.model import ServerSpec  # noqa: E402
from ghmcp_runtime.surface import SurfaceViews  # noqa: E402

SURFACES: list[tuple[str, dict[str, Any]]] = [
    ("(no flags)", {}),
    ("--read-only", {"read_only": True}),
    ("--toolsets issues", {"toolsets": ("issues",)}),
    ("--toolsets labels", {"toolsets": ("labels",)}),
    ("--read-only --toolsets issues", {"read_only": True, "toolsets": ("issues",)}),
    ("--tools github_search_issues,github_get_issue",
     {"tools": ("github_search_issues", "github_get_issue")}),
    ("--toolsets milestones --read-only", {"read_only": True, "toolsets": ("milestones",)}),
]


def tools_list_bytes(views: SurfaceViews, policy: ExposurePolicy) -> tuple[int, int]:
    tools = views.view(policy.base).tools
    wire = {"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]}
    return len(json.dumps(wire, separators=(",", ":"), ensure_ascii=False).encode("utf-8")), len(tools)


def rows(spec: ServerSpec) -> list[tuple[str, int, int, int]]:
    views = SurfaceViews(spec)
    whole, _ = tools_list_bytes(views, ExposurePolicy(spec.tools, spec.toolsets, ExposureFlags()))
    out = []
    for label, flags in SURFACES:
        if any(name not in spec.toolsets for name in flags.get("toolsets", ())) or any(
                name not in {t.name for t in spec.tools} for name in flags.get("tools", ())):
            continue
        size, count = tools_list_bytes(views, ExposurePolicy(spec.tools, spec.toolsets,
                                                             ExposureFlags(**flags)))
        out.append((label, count, size, round(100 * size / whole)))
    return out


def main() -> None:
    from github_issues_mcp import SERVER as ISSUES
    from github_milestones_mcp import SERVER as MILESTONES

    print("| server | flags (or the same X-MCP-* headers) | tools | tools/list bytes | share | ~tokens |")
    print("|---|---|---:|---:|---:|---:|")
    for spec in (ISSUES, MILESTONES):
        for label, count, size, share in rows(spec):
            print(f"| {spec.name} | `{label}` | {count} | {size:,} | {share} % | {size // 4:,} |")


if __name__ == "__main__":
    main()
