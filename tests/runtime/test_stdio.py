from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio
HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_run_over_stdio_keeps_stdout_clean(mode: str) -> None:
    """A crash logs a traceback to stderr; stdout must stay pure JSON-RPC for the next call."""
    env = {"PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parents[1])]),
           "GITHUB_API_URL": "http://127.0.0.1:9"}  # no GITHUB_TOKEN: the server still starts
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "stdio_main.py")], env=env)
    async with Client(params, mode=mode, cache=None) as c:
        assert [t.name for t in (await c.list_tools()).tools] == ["issues_get", "demo_fail"]
        crash = await c.call_tool("demo_fail", {"mode": "crash"})
        assert crash.is_error and crash.structured_content["code"] == "internal_error"
        ok = await c.call_tool("demo_fail", {"mode": "ok"})
        assert ok.structured_content["identity"] == "anonymous"
        missing = await c.call_tool("issues_get", {"owner": "o", "repo": "r", "issue_number": 1})
        assert missing.structured_content["code"] == "missing_credential"
