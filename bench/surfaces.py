"""tools/list bytes: per exposure surface, and per tool with where the bytes go.

    .venv/bin/python bench/surfaces.py                  # the per-surface table (README)
    .venv/bin/python bench/surfaces.py --before REF     # write bench/results-surface-before.json

For each generated server and a set of exposure flags, the compact JSON of the `tools/list`
result the runtime serves for that surface (`{"tools": [...]}`, the measure `tools.json` and
TOOLS.md use), its share of the whole surface, and ~tokens (bytes / 4). The same bytes go to an
HTTP request whose X-MCP-* headers select the same surface. Deterministic: no timing.

The token table (issue 37): what a model reads of a forge server's `tools/list` for tokens of
different scopes, the tools those scopes cannot use hidden as the runtime hides them
(`ghmcp_runtime.guards.token_access`), against what every tool costs.

`--before REF` measures every server's committed `generated/<package>/tools.json` at the git
revision REF (the same bytes its runtime served) and keeps them as the "before" that
`make bench ONLY=surface` reports next to the current surface.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from bench.common import BENCH, ROOT, nbytes  # noqa: E402
from generator.build.wire import model_visible  # noqa: E402
from ghmcp_runtime.core.model import ServerSpec  # noqa: E402
from ghmcp_runtime.guards.exposure import ExposureFlags, ExposurePolicy  # noqa: E402
from ghmcp_runtime.guards.token_access import TokenAccess, hidden  # noqa: E402
from ghmcp_runtime.serving.surface import SurfaceViews  # noqa: E402

BEFORE = BENCH / "results-surface-before.json"
# github-issues-mcp's tools beyond what github-mcp-server's 8 comparable tools do (issue 24): the
# model-visible comparison is made without them, and reported with them beside it
BEYOND_GHMCP = ("github_update_issues",)
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
    return nbytes(wire), len(tools)


def served_tools(spec: ServerSpec) -> list[dict[str, Any]]:
    """The whole surface's tools/list `tools` array, as the runtime serves it."""
    views = SurfaceViews(spec)
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in views.view(views.full).tools]


def model_visible_bytes(spec: ServerSpec, names: tuple[str, ...] = ()) -> int:
    """What a model reads of the server's tools (of `names` only, when given)."""
    return nbytes(model_visible([t for t in served_tools(spec) if not names or t["name"] in names]))


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


# tokens by what the forge tells of them: (label, kind, scopes; None = not told)
GITHUB_TOKENS: list[tuple[str, TokenAccess]] = [
    ("classic, repo", TokenAccess("classic", frozenset({"repo"}))),
    ("classic, public_repo", TokenAccess("classic", frozenset({"public_repo"}))),
    ("classic, no scope (read:org only)", TokenAccess("classic", frozenset({"read:org"}))),
    ("fine-grained (not told)", TokenAccess("fine_grained")),
    ("Actions GITHUB_TOKEN (installation)", TokenAccess("installation")),
]
FORGEJO_TOKENS: list[tuple[str, TokenAccess]] = [
    ("all", TokenAccess("classic", frozenset({"all"}))),
    ("write:issue, read:user", TokenAccess("classic", frozenset({"write:issue", "read:user"}))),
    ("read:issue, read:organization, read:user",
     TokenAccess("classic", frozenset({"read:issue", "read:organization", "read:user"}))),
    ("no read:user (not told)", TokenAccess("classic")),
]


def token_rows(spec: ServerSpec, flags: ExposureFlags,
               tokens: list[tuple[str, TokenAccess]]) -> list[tuple[str, int, int, int]]:
    """(token, tools, model-visible bytes, bytes saved) of the surface `flags` select."""
    policy = ExposurePolicy(spec.tools, spec.toolsets, flags, spec.default_toolsets)
    views = SurfaceViews(spec)

    def seen(access: TokenAccess | None) -> tuple[int, int]:
        gone = hidden(spec.tools, access, spec.forge.scopes) if access else frozenset()
        tools = views.view(policy.with_access(policy.base, gone)).tools
        wire = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
        return len(tools), nbytes(model_visible(wire))

    _, whole = seen(None)
    return [(label, *seen(access), whole - seen(access)[1]) for label, access in tokens]


def token_table() -> list[dict[str, Any]]:
    """The forge servers' model-visible bytes per token (bench/run.py keeps them in results.json)."""
    from forgejo_mcp import SERVER as FORGEJO_MCP
    from github_mcp import SERVER as GITHUB_MCP

    out = []
    for spec, tokens in ((GITHUB_MCP, GITHUB_TOKENS), (FORGEJO_MCP, FORGEJO_TOKENS)):
        for label, flags in (("default toolsets", ExposureFlags()),
                             ("--toolsets all", ExposureFlags(toolsets=("all",)))):
            for token, count, size, saved in token_rows(spec, flags, tokens):
                out.append({"server": spec.name, "selection": label, "token": token, "tools": count,
                            "model_visible_bytes": size, "saved": saved})
    return out


# -- where the bytes go ------------------------------------------------------------------------


def tool_parts(tool: dict[str, Any]) -> dict[str, int]:
    total = nbytes(tool)
    parts = {
        "description": nbytes(tool["description"]) if "description" in tool else 0,
        "inputSchema": nbytes(tool["inputSchema"]) if "inputSchema" in tool else 0,
        "outputSchema": nbytes(tool["outputSchema"]) if "outputSchema" in tool else 0,
    }
    parts["other"] = total - sum(parts.values())
    parts["total"] = total
    parts["model_visible"] = nbytes(model_visible([tool])[0])
    return parts


def descriptions_in(schema: Any) -> int:
    """Bytes of every `description` string inside a JSON schema (parameter descriptions)."""
    if isinstance(schema, dict):
        own = nbytes(schema["description"]) if isinstance(schema.get("description"), str) else 0
        return own + sum(descriptions_in(v) for k, v in schema.items() if k != "description")
    if isinstance(schema, list):
        return sum(descriptions_in(v) for v in schema)
    return 0


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items()
                if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def error_branches(tools: list[dict[str, Any]]) -> int:
    """Bytes of outputSchema `oneOf` branches that describe the error envelope (name `code`)."""
    total = 0
    for t in tools:
        for branch in t.get("outputSchema", {}).get("oneOf", []):
            if isinstance(branch, dict) and "code" in {*branch.get("properties", {}), *branch.get("required", [])}:
                total += nbytes(branch)
    return total


def surface(tools: list[dict[str, Any]]) -> dict[str, Any]:
    per_tool = {t["name"]: tool_parts(t) for t in sorted(tools, key=lambda t: str(t["name"]))}
    totals = {k: sum(p[k] for p in per_tool.values()) for k in ("description", "inputSchema",
                                                               "outputSchema", "other", "total")}
    return {
        "tools": len(tools),
        "array_bytes": nbytes(tools),
        "result_bytes": nbytes({"tools": tools}),  # what `make generate` and the table above print
        "per_tool": per_tool,
        "totals": totals,
        "share": {k: totals[k] / totals["total"] for k in ("description", "inputSchema", "outputSchema", "other")},
        "with_output_schema": sum(1 for t in tools if "outputSchema" in t),
        "closed_input_schemas": sum(1 for t in tools if t.get("inputSchema", {}).get("additionalProperties") is False),
        "bytes_without_output_schemas": nbytes([{k: v for k, v in t.items() if k != "outputSchema"} for t in tools]),
        # what MCP clients hand a model: name, description, inputSchema (compact tools array)
        "model_visible_bytes": nbytes(model_visible(tools)),
        "model_visible_bytes_comparable": nbytes(model_visible(
            [t for t in tools if t["name"] not in BEYOND_GHMCP])),
        "comparable_tools": sum(1 for t in tools if t["name"] not in BEYOND_GHMCP),
        "input_parameter_description_bytes": sum(descriptions_in(t.get("inputSchema", {})) for t in tools),
        "output_description_bytes": sum(descriptions_in(t.get("outputSchema", {})) for t in tools),
        "error_branch_bytes": error_branches(tools),
        # every description gone (the tools' and the schemas'): what the schemas alone cost,
        # measured like result_bytes
        "bytes_without_any_description": nbytes({"tools": [_without_descriptions(t) for t in tools]}),
    }


def servers() -> dict[str, dict[str, Any]]:
    """Every generated server's whole surface, measured as served."""
    from forgejo_labels_mcp import SERVER as FORGEJO_LABELS
    from github_issues_mcp import SERVER as ISSUES
    from github_milestones_mcp import SERVER as MILESTONES
    from github_pulls_mcp import SERVER as PULLS
    from github_repos_mcp import SERVER as REPOS
    from github_sub_issues_mcp import SERVER as SUB_ISSUES

    return {spec.name: surface(served_tools(spec))
            for spec in (ISSUES, MILESTONES, SUB_ISSUES, PULLS, REPOS, FORGEJO_LABELS)}


def snapshot_before(ref: str) -> dict[str, Any]:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout

    commit = git("rev-parse", "--short", ref).strip()
    out: dict[str, Any] = {"ref": f"{ref} at {commit}", "servers": {}}
    for path in sorted(git("ls-tree", "--name-only", f"{ref}:generated").split()):
        tools = json.loads(git("show", f"{ref}:generated/{path}/tools.json"))["tools"]
        name = json.loads(git("show", f"{ref}:generated/{path}/MANIFEST.json"))["fingerprint"].split("@")[0]
        out["servers"][name] = surface(tools)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REF", help="write bench/results-surface-before.json from REF")
    args = parser.parse_args()
    if args.before:
        BEFORE.write_text(json.dumps(snapshot_before(args.before), indent=1, sort_keys=True) + "\n",
                          encoding="utf-8")
        print(f"wrote {BEFORE.relative_to(ROOT)}")
        return
    from github_issues_mcp import SERVER as ISSUES
    from github_milestones_mcp import SERVER as MILESTONES

    print("| server | flags (or the same X-MCP-* headers) | tools | tools/list bytes | share | ~tokens |")
    print("|---|---|---:|---:|---:|---:|")
    for spec in (ISSUES, MILESTONES):
        for label, count, size, share in rows(spec):
            print(f"| {spec.name} | `{label}` | {count} | {size:,} | {share} % | {size // 4:,} |")
    print()
    print("| server | tools | model-visible bytes (name, description, inputSchema) | per tool | whole tools/list |")
    print("|---|---:|---:|---:|---:|")
    for name, s in servers().items():
        print(f"| {name} | {s['tools']} | {s['model_visible_bytes']:,} | {s['model_visible_bytes'] // s['tools']:,} "
              f"| {s['result_bytes']:,} |")
    print()
    print(TOKEN_HEADER)
    for row in token_table():
        print(token_line(row))


TOKEN_HEADER = ("| server | selection | token | tools | model-visible bytes | saved |\n"
                "|---|---|---|---:|---:|---:|")


def token_line(row: dict[str, Any]) -> str:
    whole = row["model_visible_bytes"] + row["saved"]
    return (f"| {row['server']} | {row['selection']} | {row['token']} | {row['tools']} | "
            f"{row['model_visible_bytes']:,} | {row['saved']:,} ({round(100 * row['saved'] / whole)} %) |")


if __name__ == "__main__":
    main()
