"""What a model reads of github-mcp's tools/list by how it is started (issue 32): every toolset,
the default set, `--dynamic-toolsets` at start and after enabling one toolset, measured through
the official MCP client in memory (the wire result, not the declarations).

    .venv/bin/python bench/toolsets.py [--out bench/results-toolsets.json]

Model-visible bytes are each listed tool's name, description and inputSchema as compact JSON
(what clients hand a model; outputSchemas and annotations stay with the client); tools/list bytes
the whole compact result; instructions what `initialize` / `server/discover` carry. Nothing is
timed, so one run is the measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "generated")]

from ghmcp_runtime.guards.exposure import ExposureFlags  # noqa: E402
from ghmcp_runtime.serving.app import Settings, build_server  # noqa: E402
from github_mcp import SERVER  # noqa: E402

MODEL_VISIBLE = ("name", "description", "inputSchema")
TOKEN = "ghp_" + "0" * 36


def _compact(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


async def _surface(flags: ExposureFlags, enable: list[str] | None = None) -> dict[str, Any]:
    server = build_server(SERVER, Settings(token=TOKEN, exposure=flags))
    async with Client(server, mode="legacy", cache=None) as client:
        if enable:
            result = await client.call_tool(SERVER.tools[0].name.split("_", 1)[0] + "_enable_toolsets",
                                            {"toolsets": enable})
            assert not result.is_error, result.structured_content
        listed = await client.list_tools()
        instructions = client.instructions or ""
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    return {"tools": len(tools), "names": [t["name"] for t in tools],
            "model_visible_bytes": _compact([{k: t[k] for k in MODEL_VISIBLE if k in t} for t in tools]),
            "tools_list_bytes": _compact({"tools": tools}),
            "instructions_bytes": len(instructions.encode("utf-8"))}


async def measure() -> dict[str, Any]:
    rows: dict[str, Any] = {
        "all toolsets (--toolsets all)": await _surface(ExposureFlags(toolsets=("all",))),
        f"default set ({','.join(SERVER.default_toolsets or ())})": await _surface(ExposureFlags()),
        "--dynamic-toolsets at start": await _surface(ExposureFlags(dynamic=True)),
    }
    for name in SERVER.toolsets:
        rows[f"--dynamic-toolsets, {name} enabled"] = await _surface(ExposureFlags(dynamic=True), [name])
    return {"server": SERVER.name, "fingerprint": SERVER.fingerprint,
            "toolsets": {n: sum(t.toolset == n for t in SERVER.tools) for n in SERVER.toolsets},
            "rows": rows}


def table(result: dict[str, Any]) -> str:
    lines = ["| github-mcp started with | tools | model-visible bytes | ~tokens | tools/list bytes | "
             "instructions bytes |", "|---|---:|---:|---:|---:|---:|"]
    for label, row in result["rows"].items():
        lines.append(f"| {label} | {row['tools']} | {row['model_visible_bytes']:,} | "
                     f"{row['model_visible_bytes'] // 4:,} | {row['tools_list_bytes']:,} | "
                     f"{row['instructions_bytes']:,} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results-toolsets.json")
    args = parser.parse_args(argv)
    result = anyio.run(measure)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
