"""Every server's MCP Registry entry (`generated/<package>/server.json`): valid against the
registry's vendored schema and its publish rule, naming the distribution, its version and every
variable the runtime reads (secrets flagged), with the `mcp-name` line the registry looks for in
the README PyPI shows; and both forms it lists (stdio, streamable HTTP) start a server that the
official client lists tools from, run exactly as a registry client would resolve them."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gen_support import GENERATED, case
from jsonschema import Draft7Validator
from mcp import Client, StdioServerParameters

from generator.base.diagnostics import DiagnosticError
from generator.packaging.registry_entry import SCHEMA_DIR, registry_problems, registry_schema
from generator.packaging.requirements import current_packaging
from generator.pipeline.generate import generate, load_inputs
from ghmcp_runtime.core.forges import FORGES
from ghmcp_runtime.serving.environment import variables
from tests.http.http_support import _wait_for_port, free_port, mcp_client
from tests.support.processes import stop
from tests.support.servers import FORGE_SERVERS, SERVERS

pytestmark = pytest.mark.anyio
ALL = [*SERVERS, *FORGE_SERVERS]
TOKEN = "ghp_" + "a" * 36
API_URLS = {"github": "https://api.github.com", "forgejo": "https://codeberg.org/api/v1"}


def _entry(package: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GENERATED / package / "server.json").read_text(encoding="utf-8"))
    return data


def _project(package: str) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(
        (GENERATED / package / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project


def test_every_distribution_has_a_registry_entry_and_no_other_exists() -> None:
    packages = {p.parent.name for p in GENERATED.glob("*/pyproject.toml")}
    assert packages == {p.parent.name for p in GENERATED.glob("*/server.json")}
    assert packages == {s.package for s in ALL}


@pytest.mark.parametrize("server", ALL, ids=str)
def test_the_entry_is_valid_and_names_the_distribution_and_its_environment(server: Any) -> None:
    data, project = _entry(server.package), _project(server.package)
    schema = json.loads((SCHEMA_DIR / "server.schema.json").read_text(encoding="utf-8"))
    Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER).validate(data)
    assert registry_problems(data) == []
    assert data["$schema"] == schema["$id"]
    owner = re.fullmatch(r"https://github\.com/([^/]+)/[^/]+", current_packaging().repository)
    assert owner is not None
    assert data["name"] == f"io.github.{owner[1]}/{project['name']}"
    assert (data["version"], data["description"]) == (project["version"], project["description"])
    assert data["repository"]["subfolder"] == f"generated/{server.package}"
    forge = FORGES[server.forge]
    stdio, http = data["packages"]
    for package in (stdio, http):
        assert (package["registryType"], package["identifier"], package["version"]) == (
            "pypi", project["name"], project["version"])
    for package, transport in ((stdio, "stdio"), (http, "http")):
        listed = {e["name"]: e for e in package["environmentVariables"]}
        expected = [v for v in variables(forge) if transport in v.transports]
        assert list(listed) == [v.name for v in expected]
        assert {n for n, e in listed.items() if e.get("isSecret")} == {v.name for v in expected if v.secret}
        assert all(e["description"] for e in listed.values())
    assert stdio["transport"] == {"type": "stdio"}
    assert {forge.token_env, "GHMCP_SERVER_SECRET"} <= {
        e["name"] for e in stdio["environmentVariables"] if e.get("isSecret")}
    assert forge.token_env not in {e["name"] for e in http["environmentVariables"]}
    (header,) = http["transport"]["headers"]
    assert header["name"] == "Authorization" and header["isSecret"]
    readme = (GENERATED / server.package / project["readme"]).read_text(encoding="utf-8")
    assert f"mcp-name: {data['name']}" in readme  # what the registry's PyPI ownership check reads


@pytest.mark.parametrize(("edit", "where"), [
    (lambda d: d.update(description="x" * 101), "description: "),
    (lambda d: d.update(name="no-namespace"), "name: "),
    (lambda d: d["packages"][0].update(version="latest"), "packages/0/version: "),
    (lambda d: d["packages"][1]["transport"].update(url="http://127.0.0.1:{host_port}/mcp"),
     "packages/1/transport/url: {host_port} names no argument"),
])
def test_what_the_registry_would_refuse_is_reported(edit: Any, where: str) -> None:
    data = copy.deepcopy(_entry("github_mcp"))
    edit(data)
    assert [p for p in registry_problems(data) if p.startswith(where)], registry_problems(data)


def test_a_description_over_the_registry_limit_is_located(tmp_path: Path) -> None:
    root = tmp_path / "minimal"
    shutil.copytree(case("minimal").root, root, ignore=shutil.ignore_patterns("expected"))
    overrides = next((root / "overrides").glob("*.yaml"))
    text = overrides.read_text(encoding="utf-8")
    overrides.write_text(text.replace("  version: 0.0.1\n", f"  version: 0.0.1\n  description: {'x' * 101}\n"),
                         encoding="utf-8")
    result = generate(load_inputs(overrides, root=root, spec_dir=root / "spec"))
    assert result.files is None
    (found,) = [d for d in result.diagnostics if "100" in d.message]
    assert found.where.file == "overrides/minimal.yaml" and found.where.line > 0


def test_a_schema_other_than_the_pinned_one_is_refused(tmp_path: Path) -> None:
    copied = tmp_path / "mcp-registry"
    shutil.copytree(SCHEMA_DIR, copied)
    (copied / "server.schema.json").write_text(
        (SCHEMA_DIR / "server.schema.json").read_text(encoding="utf-8").replace("100", "1000"),
        encoding="utf-8")
    with pytest.raises(DiagnosticError) as refused:
        registry_schema(copied)
    (problem,) = refused.value.diagnostics
    assert "sha256" in problem.message and problem.where.file.endswith("server.schema.json")


def _resolved_arguments(package: dict[str, Any], values: dict[str, str]) -> list[str]:
    """What a registry client puts on the command line for `packageArguments`."""
    out: list[str] = []
    for argument in package.get("packageArguments", ()):
        value = argument.get("value") or values.get(argument.get("valueHint", "")) or argument["default"]
        out += [argument["name"], value]
    return out


def _environment(package: dict[str, Any], forge: str) -> dict[str, str]:
    profile = FORGES[forge]
    given = {profile.token_env: TOKEN, profile.api_url_env: API_URLS[forge]}
    return {e["name"]: given[e["name"]] for e in package["environmentVariables"] if e["name"] in given}


@contextmanager
def _listening(command: list[str], env: dict[str, str], port: int, log: Path) -> Iterator[None]:
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, proc, log, " ".join(command))
        yield
    finally:
        stop(proc)


@pytest.mark.parametrize("server", FORGE_SERVERS, ids=str)
async def test_both_forms_of_the_entry_serve_tools(server: Any, tmp_path: Path) -> None:
    """The stdio package as `<identifier>` (what `uvx <identifier>` runs: the console script) with
    its variables; the HTTP one with its arguments, at its URL, with its header."""
    stdio, http = _entry(server.package)["packages"]
    script = Path(sys.executable).parent / stdio["identifier"]
    base = {"PATH": str(Path(sys.executable).parent), "GHMCP_LOG_LEVEL": "WARNING"}
    params = StdioServerParameters(command=str(script), args=_resolved_arguments(stdio, {}),
                                   env={**base, **_environment(stdio, server.forge)})
    async with Client(params, cache=None) as client:
        over_stdio = sorted(t.name for t in (await client.list_tools()).tools)
    assert over_stdio
    port = str(free_port())
    command = [str(script), *_resolved_arguments(http, {"port": port})]
    url = http["transport"]["url"].replace("{port}", port)
    (header,) = http["transport"]["headers"]
    assert header["value"].replace("{token}", TOKEN) == f"Bearer {TOKEN}"
    with _listening(command, {**base, **_environment(http, server.forge)}, int(port), tmp_path / "log"):
        async with mcp_client(url, TOKEN) as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == over_stdio
