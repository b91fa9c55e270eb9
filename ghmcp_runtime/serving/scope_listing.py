"""`<server> list-scopes`: the token scopes a selection of tools needs, before any token exists.

The selection is chosen with the server's own exposure flags (`--toolsets`, `--tools`,
`--exclude-tools`, `--read-only`, and their environment variables), as the server would serve
it; what each tool needs is what its `_meta` publishes (`ghmcp_runtime.core.token_scopes`).
Outputs: `text` (each tool, then the total), `summary` (the total alone: the scopes to give a
token, then the fine-grained permissions), `json` (all of it, for scripts).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, TextIO

from ghmcp_runtime.core.model import ServerSpec, ToolSpec
from ghmcp_runtime.core.token_scopes import ToolScopes, combined
from ghmcp_runtime.guards.exposure import (
    ExposureError,
    ExposureFlags,
    ExposurePolicy,
    add_exposure_arguments,
    exposure_flags,
)


def _parser(spec: ServerSpec) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=f"{spec.name} list-scopes",
        description=f"Print the {spec.forge.display_name} token scopes the selected tools need "
                    "(the same flags select them as when serving).")
    add_exposure_arguments(p, spec.toolsets, spec.forge.display_name, spec.default_toolsets)
    p.add_argument("--output", choices=("text", "summary", "json"), default="text",
                   help="text (default): each tool and the total; summary: the total only; json")
    return p


def selected(spec: ServerSpec, flags: ExposureFlags) -> list[ToolSpec]:
    """The tools the flags expose (--dynamic-toolsets: the most it may enable)."""
    policy = ExposurePolicy(spec.tools, spec.toolsets, flags, spec.default_toolsets)
    return [t for t in spec.tools if t.name in policy.bounds]


def needs(tool: ToolSpec) -> ToolScopes:
    return ToolScopes.of(tool.meta) or ToolScopes()


def report(spec: ServerSpec, tools: Sequence[ToolSpec], flags: ExposureFlags) -> dict[str, Any]:
    model = spec.forge.scopes
    total = combined((needs(t) for t in tools), model)
    return {
        "server": spec.name,
        "toolsets": sorted({t.toolset for t in tools if t.toolset}),
        "read_only": flags.read_only,
        "tools": [{"name": t.name, "toolset": t.toolset, "read_only": t.annotations.read_only,
                   **needs(t).meta()} for t in tools],
        "needs": total.meta(),
        "private_repositories": model.private_scope,
    }


def write(data: dict[str, Any], output: str, out: TextIO) -> None:
    total = ToolScopes.read(data["needs"])
    private = data["private_repositories"]
    if output == "json":
        out.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        return
    if output == "text":
        width = max((len(t["name"]) for t in data["tools"]), default=4)
        for tool in data["tools"]:
            text = ToolScopes.read(tool).text(str)
            kind = "read-only" if tool["read_only"] else "writes"
            out.write(f"{tool['name']:<{width}}  {kind:<9}  {text}\n")
        out.write("\n")
    out.write(f"scopes: {', '.join(total.required) or '(none)'}\n")
    if private:
        out.write(f"private repositories: {private}\n")
    if total.fine_grained:
        alternatives = (" or ".join(f.split("|")) for f in total.fine_grained)
        out.write(f"fine-grained permissions: {', '.join(alternatives)}\n")
    if total.user_context:
        out.write("acts on the token's own account: not with an App installation's token\n")


def list_scopes(spec: ServerSpec, argv: Sequence[str], out: TextIO) -> int:
    parser = _parser(spec)
    args = parser.parse_args(list(argv))
    try:
        flags = exposure_flags(args, ExposureFlags.from_env())
        tools = selected(spec, flags)
    except (ExposureError, ValueError) as exc:
        parser.error(str(exc))
    write(report(spec, tools, flags), args.output, out)
    return 0
