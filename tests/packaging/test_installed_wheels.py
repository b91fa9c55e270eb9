"""The wheels `make dist` builds (the runtime's and every generated server's), installed into an
empty venv with their pinned dependencies and nothing else, serve every server through the
official MCP client over stdio and HTTP: the published `tools.json` byte for byte, every read-only
tool called with its example against Prism serving GitHub's documented examples (the lazily
imported parts load too), and the container healthcheck. Servers come from `overrides/*.yaml`."""

from __future__ import annotations

import json
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.contract.test_every_server import TOKEN, tools_json
from tests.http.http_support import _wait_for_port, free_port, mcp_client
from tests.support.prism import StartPrism
from tests.support.processes import stop
from tests.support.servers import SERVERS as DECLARED
from tests.support.servers import answer_problem, read_operations, read_tools
from tests.support.wheels import (
    FORGES,
    ROOT,
    SERVERS,
    build_wheels,
    clean_env,
    install_servers,
    project,
    run,
)

pytestmark = pytest.mark.anyio
BY_PACKAGE = {s.package: s for s in DECLARED}
# distributions only the generator, the fake GitHub or development need
GENERATOR_ONLY = {"black", "jinja2", "pyyaml", "openapi-core", "github-issues-mcp-gen"}


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@dataclass(frozen=True)
class Installed:
    python: Path
    home: Path  # an empty working directory for the servers

    @property
    def venv(self) -> Path:
        return self.python.parent.parent

    def script(self, server: str) -> Path:
        (name,) = project(server)["scripts"]
        return self.python.parent / name


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("installed")
    dist = tmp / "dist"
    wheels = build_wheels(dist)
    assert sorted(p.name.split("-")[0] for p in wheels) == sorted(["ghmcp_runtime", *SERVERS, *FORGES])
    python = install_servers(dist, tmp / "venv")
    home = tmp / "home"
    home.mkdir()
    return Installed(python, home)


def _server_env(server: str, api_url: str, token: str | None = None) -> dict[str, str]:
    """The forge's own variables (GITHUB_*, FORGEJO_*) for `server`; the token only when given."""
    forge = BY_PACKAGE[server].env(api_url, token or "")
    return clean_env(GHMCP_CURSOR_SECRET="wheel-tests", GHMCP_SERVER_SECRET="wheel-tests",
                     GHMCP_ALLOW_INSECURE_API_URL="1", **{k: v for k, v in forge.items() if v})


async def _serves_the_published_surface(client: Client, server: str) -> None:
    published = (ROOT / "generated" / server / "tools.json").read_bytes()
    assert tools_json(await client.list_tools()) == published
    for tool in read_tools(BY_PACKAGE[server]):
        result = await client.call_tool(tool.name, dict(tool.example))
        assert answer_problem(tool, result) is None, answer_problem(tool, result)


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
            stop(proc)


def test_the_venv_holds_the_servers_and_no_generator_only_package(installed: Installed) -> None:
    listed = json.loads(run([installed.python, "-m", "pip", "list", "--format", "json"],
                             cwd=installed.home))
    names = {_canonical(p["name"]) for p in listed}
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev_only = {_canonical(r.split("==")[0].split("[")[0])
                for r in dev["project"]["optional-dependencies"]["dev"]}
    assert {"ghmcp-runtime", "mcp", "httpx", *(project(s)["name"] for s in SERVERS)} <= names
    assert names & (GENERATOR_ONLY | (dev_only - {"anyio"})) == set(), sorted(names)
    assert "redis" not in names  # an extra: only `pip install 'github-issues-mcp[redis]'` brings it
    probe = ("import importlib.util as u, ghmcp_runtime as r; "
             "print(r.__file__); print([m for m in ('generator', 'fakegithub', 'black', 'jinja2', "
             "'yaml') if u.find_spec(m)])")
    where, importable = run([installed.python, "-c", probe], cwd=installed.home).splitlines()
    assert where.startswith(str(installed.venv)) and importable == "[]"


@pytest.mark.parametrize("server", SERVERS)
async def test_the_installed_command_serves_tools_json_over_stdio(installed: Installed, server: str,
                                                                   prism: StartPrism) -> None:
    mock = prism(read_operations(BY_PACKAGE[server]), overrides=BY_PACKAGE[server].overrides)
    params = StdioServerParameters(command=str(installed.script(server)),
                                   env=_server_env(server, mock.base_url, TOKEN), cwd=str(installed.home))
    async with Client(params, cache=None) as client:
        await _serves_the_published_surface(client, server)


@pytest.mark.parametrize("server", SERVERS)
async def test_the_installed_command_serves_tools_json_over_http(installed: Installed, server: str,
                                                                 prism: StartPrism) -> None:
    mock = prism(read_operations(BY_PACKAGE[server]), overrides=BY_PACKAGE[server].overrides)
    with _http_server([str(installed.script(server))], _server_env(server, mock.base_url),
                      installed.home) as port:
        async with mcp_client(f"http://127.0.0.1:{port}/mcp", TOKEN) as client:
            await _serves_the_published_surface(client, server)
        health = [str(installed.python), "-m", "ghmcp_runtime.serving.healthcheck", "--port", str(port)]
        alive = subprocess.run(health, env=clean_env(), cwd=installed.home, capture_output=True,
                               text=True, timeout=30, check=False)
        assert alive.returncode == 0, alive.stderr
    down = subprocess.run(health, env=clean_env(), cwd=installed.home, capture_output=True,
                          text=True, timeout=30, check=False)
    assert down.returncode == 1 and "unhealthy" in down.stderr


@pytest.mark.parametrize(("server", "tool", "arguments", "field"), [
    ("github_issues_mcp", "github_search_issues",
     {"owner": "octo-org", "repo": "roadmap", "query": "plan",
      "updated_after": "2000-01-01 repo:octo-org/secret"}, "updated_after"),
    ("github_milestones_mcp", "github_create_milestone",
     {"owner": "octo-org", "repo": "roadmap", "title": "v9", "due_on": "2030-01-01 x"}, "due_on"),
])
async def test_t12_an_installed_server_checks_date_times_itself(
    installed: Installed, server: str, tool: str, arguments: dict[str, str], field: str
) -> None:
    """Security review t12: the wheels lack jsonschema's optional date-time checker, and the
    date was pasted into the search query (a repo: term there escaped owner/repo). The runtime
    checks the format itself; nothing reaches GitHub (its URL here answers nothing)."""
    params = StdioServerParameters(command=str(installed.script(server)), cwd=str(installed.home),
                                   env=_server_env(server, f"http://127.0.0.1:{free_port()}", TOKEN))
    async with Client(params, cache=None) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error and result.structured_content is not None
    assert result.structured_content["code"] == "invalid_field"
    assert result.structured_content["details"] == {"field": field, "reason": "must be a valid date-time"}


def test_one_install_of_github_mcp_gives_the_whole_server(installed: Installed) -> None:
    """`pip install github-mcp` (from the wheels `make dist` builds) and nothing else: its one
    command serves every GitHub override file's tools."""
    dist = installed.venv.parent / "dist"
    venv = installed.venv.parent / "github-mcp-only"
    run([installed.python, "-m", "venv", venv], cwd=installed.home)
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--quiet", "--constraint", ROOT / "constraints.txt",
         "--find-links", dist, "github-mcp"], cwd=installed.home)
    parts = [s for s in DECLARED if s.forge == "github"]
    names = {_canonical(p["name"]) for p in json.loads(
        run([python, "-m", "pip", "list", "--format", "json"], cwd=installed.home))}
    assert {"github-mcp", *(s.name for s in parts)} <= names
    listed = run([python, "-c", "from github_mcp import SERVER; print(' '.join(t.name for t in SERVER.tools))"],
                 cwd=installed.home).split()
    every = sorted(t["name"] for s in parts for t in json.loads(
        (ROOT / "generated" / s.package / "tools.json").read_text(encoding="utf-8"))["tools"])
    assert listed == every
    assert (venv / "bin" / "github-mcp").exists()
    help_text = run([venv / "bin" / "github-mcp", "--help"], cwd=installed.home)
    assert "'default' =" in help_text
