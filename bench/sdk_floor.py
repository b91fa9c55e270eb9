"""The SDK floor: a bare `mcp` low-level Server over stdio with N trivial tools and nothing else.

    .venv/bin/python bench/sdk_floor.py N

Same SDK, same interpreter, same stdio transport as the generated server; no HTTP client, no
schemas, no validation. What the generated server costs on top of this is ours.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)


def build(n: int) -> Server[Any]:
    listing = ListToolsResult(tools=[
        Tool(name=f"tool_{i}", description="Does nothing.", input_schema={"type": "object"})
        for i in range(n)
    ])

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
                         ) -> ListToolsResult:
        return listing

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="ok")])

    return Server("sdk-floor", version="0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve, build(int(sys.argv[1]) if len(sys.argv) > 1 else 9))
