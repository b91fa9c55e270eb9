"""Cold start (issue 24): a server answers `initialize` and `tools/list` before it loads what only
a call needs (the engine, the upstream client, the idempotency store, the declared steps and hooks
of `handlers.py`), and still refuses a bad configuration or declaration before it answers."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from app_spec import SPEC

from ghmcp_runtime.base.lazy import LazyCallable
from ghmcp_runtime.core.declared import OnError
from ghmcp_runtime.core.model import FieldRule, Shape
from ghmcp_runtime.serving.app import Settings, build_server

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(p.parent.name for p in (ROOT / "generated").glob("*/server.py"))
# what only a call needs (the generated package's own `handlers` and `hooks` are added per package)
CALL_ONLY = ("ghmcp_runtime.serving.tool_calls", "ghmcp_runtime.engine.runner",
             "ghmcp_runtime.engine.batch", "ghmcp_runtime.core.declared", "ghmcp_runtime.calls.context",
             "ghmcp_runtime.calls.upstream", "ghmcp_runtime.stores.idempotency", "httpx",
             "pyromark")  # the Markdown parser of the untrusted-text cleaner

SCRIPT = """
import asyncio, importlib, json, sys
from mcp import Client
from ghmcp_runtime.serving.app import Settings, build_server

package = sys.argv[1]
spec = importlib.import_module(package).SERVER
watched = [*json.loads(sys.argv[2]), package + ".handlers", package + ".hooks"]
loaded = lambda: sorted(m for m in watched if m in sys.modules)

async def main():
    server = build_server(spec, Settings(token="ghp_" + "a" * 36, api_url="http://127.0.0.1:9"))
    async with Client(server, cache=None) as client:
        tools = await client.list_tools()
        listed = loaded()
        result = await client.call_tool(tools.tools[0].name, {"unexpected": 1})
    print(json.dumps({"tools": len(tools.tools), "listed": listed, "called": loaded(),
                      "code": result.structured_content["code"]}))

asyncio.run(main())
"""


@pytest.mark.parametrize("package", PACKAGES)
def test_tools_list_is_answered_before_the_call_machinery_loads(package: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, package, json.dumps(CALL_ONLY)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["tools"] > 0
    assert seen["listed"] == []
    # the first call loads the call machinery (and answers as ever: an unknown argument is
    # invalid_field, refused before any handler runs)
    assert "ghmcp_runtime.serving.tool_calls" in seen["called"]
    assert seen["code"] == "invalid_field"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_handler_a_server_names_is_there(package: str) -> None:
    """What server.py names, handlers.py holds: a misnamed handler would fail only when called."""
    spec = importlib.import_module(package).SERVER
    named = [t.handler for t in spec.tools] + [t.handler for t in spec.templates]
    named += [fn for t in spec.templates for fn in t.completions.values()]
    for handler in named:
        assert isinstance(handler, LazyCallable) and callable(handler.target), handler
    assert all(isinstance(rule, OnError) for rule in spec.error_rules)


def test_a_format_the_runtime_cannot_check_stops_the_build_not_the_first_call() -> None:
    tool = SPEC.tools[0]
    schema = {**tool.input_schema, "properties": {
        **tool.input_schema["properties"], "to": {"type": "string", "format": "email"}}}
    spec = dataclasses.replace(SPEC, tools=(dataclasses.replace(tool, input_schema=schema), *SPEC.tools[1:]))
    with pytest.raises(ValueError, match="email"):
        build_server(spec, Settings(token="ghp_x"))


def test_an_unknown_transform_stops_the_build_not_the_first_call() -> None:
    shape = Shape(name="odd", fields=(FieldRule(name="x", path=("x",), detail="summary", transform="rot13"),))
    with pytest.raises(ValueError, match="rot13"):
        build_server(dataclasses.replace(SPEC, shapes={**SPEC.shapes, "odd": shape}), Settings(token="ghp_x"))
