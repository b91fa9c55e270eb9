"""Arbitrary arguments to every tool: always a schema-valid success or error envelope.

Never a JSON-RPC error, never a crash, never the token in any output; upstream requests never
leave /repos/{owner}/{repo}/… or /search/issues. `FUZZ_EXAMPLES` sets the number of calls per
tool (a few dozen in `make test`, thousands in `make fuzz`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp import Client

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.validation import with_checks
from tests.functional.conftest import TOKEN, in_memory_server, seed
from tests.functional.strategies import arguments

PACKAGE = Path(__file__).resolve().parents[2] / "generated" / "github_issues_mcp"
TOOLS = json.loads((PACKAGE / "tools.json").read_text(encoding="utf-8"))["tools"]
# what the server checks beyond the published schemas (patterns kept from the model): values
# are drawn from the checked schema, so most calls get past validation and reach GitHub
CHECKS = json.loads((PACKAGE / "checks.json").read_text(encoding="utf-8"))["tools"]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
# a repository's endpoints, the search, and reading the token's scopes (at start)
ALLOWED_PATH = re.compile(r"^(/repos/[^/]+/[^/]+(/.*)?|/search/issues|/rate_limit)$")


@pytest.fixture(scope="module")
def world() -> FakeGitHub:
    fake = FakeGitHub()
    seed(fake)
    return fake


async def _one(fake: FakeGitHub, name: str, args: Any) -> Any:
    async with Client(in_memory_server(fake), cache=None) as client:
        return await client.call_tool(name, args)


@pytest.mark.parametrize("tool", TOOLS, ids=[t["name"] for t in TOOLS])
def test_arbitrary_arguments_get_an_envelope_or_a_valid_success(world: FakeGitHub, tool: dict[str, Any]) -> None:
    validator = Draft202012Validator(tool["outputSchema"])

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(args=arguments(with_checks(tool["inputSchema"], CHECKS.get(tool["name"], {}))), _=st.just(None))
    def check(args: Any, _: None) -> None:
        seen = len(world.requests)
        result = anyio.run(_one, world, tool["name"], args)
        data = result.structured_content
        assert isinstance(data, dict)
        problems = list(validator.iter_errors(data))
        assert not problems, problems[0].message
        assert result.is_error == ("code" in data)
        wire = json.dumps(result.model_dump(mode="json"))
        assert TOKEN not in wire
        for request in world.requests[seen:]:
            assert ALLOWED_PATH.match(request.path), request.path

    check()
    assert world.violations == [], world.violations[:3]
