"""The wheels `make dist` builds (the runtime's and every generated server's), installed into an
empty venv with their pinned dependencies and nothing else, serve every server through the
official MCP client over stdio and HTTP: the published `tools.json` byte for byte, a real tool call
against the fake GitHub (the lazily imported parts load too), and the container healthcheck."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, TOKEN, seed
from tests.http.http_support import _stop, _wait_for_port, free_port, mcp_client

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
SERVERS = sorted(p.parent.name for p in (ROOT / "generated").glob("*/pyproject.toml"))
PROJECTS = [ROOT / "ghmcp_runtime", *(ROOT / "generated" / s for s in SERVERS)]
# one read-only tool per server, called against the fake GitHub
READ_TOOL = {"github_issues_mcp": "github_list_labels", "github_milestones_mcp": "github_list_milestones"}
# distributions only the generator, the fake GitHub or development need
GENERATOR_ONLY = {"black", "jinja2", "pyyaml", "openapi-core", "github-issues-mcp-gen"}


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _project(server: str) -> dict[str, Any]:
    with (ROOT / "generated" / server / "pyproject.toml").open("rb") as handle:
        project: dict[str, Any] = tomllib.load(handle)["project"]
    return project


def _clean_env(**extra: str) -> dict[str, str]:
    """This machine's environment without anything that could reach the checkout's code."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, **extra}


def _run(args: list[Any], cwd: Path) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=_clean_env(), capture_output=True,
                          text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@dataclass(frozen=True)
class Installed:
    venv: Path
    home: Path  # an empty working directory for the servers

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def script(self, server: str) -> Path:
        (name,) = _project(server)["scripts"]
        return self.venv / "bin" / name


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("installed")
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          "--wheel-dir", dist, *PROJECTS], cwd=tmp)
    assert sorted(p.name.split("-")[0] for p in dist.glob("*.whl")) == sorted(
        ["ghmcp_runtime", *SERVERS])
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp)
    names = [_project(s)["name"] for s in SERVERS]
    _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--constraint", CONSTRAINTS,
          "--find-links", dist, *names], cwd=tmp)
    home = tmp / "home"
    home.mkdir()
    return Installed(venv, home)


def _server_env(api_url: str, **extra: str) -> dict[str, str]:
    return _clean_env(GITHUB_API_URL=api_url, GHMCP_CURSOR_SECRET="wheel-tests",
                      GHMCP_SERVER_SECRET="wheel-tests", GHMCP_ALLOW_INSECURE_API_URL="1", **extra)


def _tools_json(listed: Any) -> bytes:
    """A tools/list result in the form `generated/<package>/tools.json` is written in."""
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    return (json.dumps({"tools": tools}, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


async def _serves_the_published_surface(client: Client, server: str) -> None:
    published = (ROOT / "generated" / server / "tools.json").read_bytes()
    assert _tools_json(await client.list_tools()) == published
    result = await client.call_tool(READ_TOOL[server], {"owner": OWNER, "repo": REPO})
    assert not result.is_error, result.structured_content


@contextmanager
def _http_server(command: list[str], env: Mapping[str, str], cwd: Path) -> Iterator[int]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ghmcp-wheel-") as tmp:
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([*command, "--transport", "http", "--port", str(port)],
                                    env=dict(env), stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        try:
            _wait_for_port(port, proc, log, " ".join(command))
            yield port
        finally:
            _stop(proc)


def test_the_venv_holds_the_servers_and_no_generator_only_package(installed: Installed) -> None:
    listed = json.loads(_run([installed.python, "-m", "pip", "list", "--format", "json"],
                             cwd=installed.home))
    names = {_canonical(p["name"]) for p in listed}
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev_only = {_canonical(r.split("==")[0].split("[")[0])
                for r in dev["project"]["optional-dependencies"]["dev"]}
    assert {"ghmcp-runtime", "mcp", "httpx", *(_project(s)["name"] for s in SERVERS)} <= names
    assert names & (GENERATOR_ONLY | (dev_only - {"anyio"})) == set(), sorted(names)
    assert "redis" not in names  # an extra: only `pip install 'github-issues-mcp[redis]'` brings it
    probe = ("import importlib.util as u, ghmcp_runtime as r; "
             "print(r.__file__); print([m for m in ('generator', 'fakegithub', 'black', 'jinja2', "
             "'yaml') if u.find_spec(m)])")
    where, importable = _run([installed.python, "-c", probe], cwd=installed.home).splitlines()
    assert where.startswith(str(installed.venv)) and importable == "[]"


@pytest.mark.parametrize("server", SERVERS)
async def test_the_installed_command_serves_tools_json_over_stdio(installed: Installed, server: str) -> None:
    fake = FakeGitHub()
    seed(fake)
    with fake.serve() as url:
        params = StdioServerParameters(command=str(installed.script(server)),
                                       env=_server_env(url, GITHUB_TOKEN=TOKEN), cwd=str(installed.home))
        async with Client(params, cache=None) as client:
            await _serves_the_published_surface(client, server)
    assert fake.violations == []


@pytest.mark.parametrize("server", SERVERS)
async def test_the_installed_command_serves_tools_json_over_http(installed: Installed, server: str) -> None:
    fake = FakeGitHub()
    seed(fake)
    with fake.serve() as url, _http_server([str(installed.script(server))], _server_env(url),
                                           installed.home) as port:
        async with mcp_client(f"http://127.0.0.1:{port}/mcp", TOKEN) as client:
            await _serves_the_published_surface(client, server)
        health = [str(installed.python), "-m", "ghmcp_runtime.healthcheck", "--port", str(port)]
        alive = subprocess.run(health, env=_clean_env(), cwd=installed.home, capture_output=True,
                               text=True, timeout=30, check=False)
        assert alive.returncode == 0, alive.stderr
    down = subprocess.run(health, env=_clean_env(), cwd=installed.home, capture_output=True,
                          text=True, timeout=30, check=False)
    assert down.returncode == 1 and "unhealthy" in down.stderr
    assert fake.violations == []
