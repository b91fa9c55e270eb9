"""FastMCP 4.1.6's OpenAPI provider on the trimmed spec; runs under bench/.peer-venv/bin/python.

    peer_fastmcp.py stdio  SPEC BASE_URL TOKEN          # a stdio server (cold start, stdio calls)
    peer_fastmcp.py http   SPEC BASE_URL TOKEN PORT     # streamable HTTP, stateless, JSON responses
    peer_fastmcp.py inmem  SPEC BASE_URL TOKEN ISSUE WARMUP CALLS   # per-call timings -> stdout JSON

The upstream client is `httpx2.AsyncClient(base_url=BASE_URL)` carrying the token and GitHub's
headers, the documented way to point the provider at an API (fastmcp 4.x has no httpx).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import httpx2
from fastmcp import FastMCP

HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
OWNER, REPO = "octo-org", "roadmap"


def server(spec_path: str, base_url: str, token: str) -> FastMCP:
    with open(spec_path, "rb") as f:
        spec = json.load(f)
    client = httpx2.AsyncClient(base_url=base_url, headers={**HEADERS, "Authorization": f"Bearer {token}"},
                                timeout=30)
    return FastMCP.from_openapi(openapi_spec=spec, client=client, name="OpenAPI Server",
                                validate_output=True)


async def _inmem(spec_path: str, base_url: str, token: str, issue: int, warmup: int,
                 calls: int) -> dict[str, Any]:
    from mcp import Client

    mcp = server(spec_path, base_url, token)
    args = {"owner": OWNER, "repo": REPO, "issue_number": issue}
    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(base_url=base_url, headers={**HEADERS, "Authorization": f"Bearer {token}"}) as http:
        async def direct() -> None:
            r = await http.get(f"/repos/{OWNER}/{REPO}/issues/{issue}")
            r.json()

        out["direct"] = await _time(direct, warmup, calls)
    handler: list[float] = []
    real = FastMCP.call_tool

    async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await real(self, *args, **kwargs)
        finally:
            handler.append(time.perf_counter() - t0)

    FastMCP.call_tool = timed  # type: ignore[method-assign]
    for mode in ("auto", "legacy"):
        handler.clear()
        async with Client(mcp._mcp_server, mode=mode, cache=None) as client:
            async def call() -> None:
                result = await client.call_tool("issuesget", args)
                if result.is_error:
                    raise RuntimeError(str(result.content)[:500])

            out[f"inmem_{mode}"] = await _time(call, warmup, calls)
        if mode == "auto":
            out["handler"] = handler[-calls:]  # FastMCP.call_tool: middleware, request, parsing
    FastMCP.call_tool = real  # type: ignore[method-assign]
    return out


async def _time(fn: Any, warmup: int, calls: int) -> list[float]:
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t0)
    return samples


def main(argv: list[str]) -> int:
    mode, spec_path, base_url, token, *rest = argv
    if mode == "stdio":
        server(spec_path, base_url, token).run("stdio", show_banner=False)
    elif mode == "http":
        server(spec_path, base_url, token).run(
            "http", show_banner=False, host="127.0.0.1", port=int(rest[0]), path="/mcp",
            stateless_http=True, json_response=True)
    elif mode == "inmem":
        issue, warmup, calls = (int(x) for x in rest)
        result = asyncio.run(_inmem(spec_path, base_url, token, issue, warmup, calls))
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        raise SystemExit(f"unknown mode {mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
