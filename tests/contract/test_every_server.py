"""Every server an override file declares (tests/support/servers.py: `overrides/*.yaml`, so a new
file is covered with no test edit) is installed and answers: its console script serves exactly its
published `tools.json`, and every read-only tool, called with its own example through
`python -m <package>` started outside the repository, answers without an error from Prism serving
GitHub's documented examples (Prism validates each request against the spec; the official client
validates each result against the tool's outputSchema). A declared refusal of the example's data is
an answer too (GitHub's issue example is a pull request, which github_get_issue refuses); a request
Prism refuses (`invalid_field`), a crash or an unreachable upstream is not."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.support.prism import StartPrism
from tests.support.servers import SERVERS, Server, answer_problem, read_operations, read_tools

pytestmark = pytest.mark.anyio
TOKEN = "ghp_everyservertesttoken00000000000000001"


def _env(server: Server, api_url: str) -> dict[str, str]:
    # no PYTHONPATH: the venv alone must find the package, from any directory
    return {"PATH": os.environ.get("PATH", ""), **server.env(api_url, TOKEN)}


def tools_json(listed: Any) -> bytes:
    """A tools/list result in the form `generated/<package>/tools.json` is written in."""
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    return (json.dumps({"tools": tools}, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


@pytest.mark.parametrize("server", SERVERS, ids=str)
async def test_the_console_script_serves_the_published_tools(server: Server, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / server.name
    assert script.is_file(), f"{script} is missing: `make generate` installs every server's console script"
    params = StdioServerParameters(command=str(script), env=_env(server, "https://forge.example.com/api"),
                                   cwd=str(tmp_path))
    async with Client(params, cache=None) as client:
        assert client.server_info is not None and client.server_info.name == server.name
        assert tools_json(await client.list_tools()) == (server.directory / "tools.json").read_bytes()


@pytest.mark.parametrize("server", SERVERS, ids=str)
async def test_every_read_tool_answers_from_githubs_examples(server: Server, prism: StartPrism,
                                                            tmp_path: Path) -> None:
    mock = prism(read_operations(server), overrides=server.overrides)
    params = StdioServerParameters(command=sys.executable, args=["-m", server.package],
                                   env=_env(server, mock.base_url), cwd=str(tmp_path))
    async with Client(params, cache=None) as client:
        for tool in read_tools(server):
            result = await client.call_tool(tool.name, dict(tool.example))
            assert answer_problem(tool, result) is None, (answer_problem(tool, result), mock.log_text()[-2000:])
