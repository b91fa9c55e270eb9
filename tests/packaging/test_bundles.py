"""Every server's MCP Bundle: its manifest passes the official `mcpb validate`, lists every tool
of the server (its own tools.json and its parts') and asks for the token as a sensitive setting;
one bundle, packed by `make dist`'s path, unpacked by `mcpb unpack`, started with the command the
mcpb library itself resolves from the manifest (what a host runs: uv, user settings substituted),
answers tools/list through the official client with exactly its tools.json."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from generator.packaging.bundle import PREFIX, build, ensure_mcpb, manifest, mcpb
from ghmcp_runtime.core.forges import FORGES
from tests.contract.test_every_server import TOKEN, tools_json
from tests.support.node import node_env
from tests.support.servers import FORGE_SERVERS, SERVERS
from tests.support.uv import ensure_uv
from tests.support.wheels import ROOT, build_wheels

pytestmark = pytest.mark.anyio
ALL = [*SERVERS, *FORGE_SERVERS]
INSTALLED = "github_sub_issues_mcp"  # the smallest server: one bundle installed and started
RESOLVE = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [library, manifestPath, directory, settings] = process.argv.slice(1);
const { getMcpConfigForManifest } = await import(pathToFileURL(library).href);
const config = await getMcpConfigForManifest({
  manifest: JSON.parse(readFileSync(manifestPath, "utf8")), extensionPath: directory,
  systemDirs: {}, userConfig: JSON.parse(settings), pathSeparator: "/" });
process.stdout.write(JSON.stringify(config ?? null));
"""


def _tool_names(*packages: str) -> list[str]:
    names: list[str] = []
    for package in packages:
        path = ROOT / "generated" / package / "tools.json"
        names += [t["name"] for t in json.loads(path.read_text(encoding="utf-8"))["tools"]]
    return sorted(names)


@pytest.mark.parametrize("server", ALL, ids=str)
def test_the_manifest_passes_mcpb_validate_and_lists_every_tool(server: Any, tmp_path: Path) -> None:
    data = manifest(server.package)
    (tmp_path / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    assert "Manifest schema validation passes" in mcpb(["validate", tmp_path / "manifest.json"])
    parts = [s.package for s in SERVERS if s.forge == server.forge] if server in FORGE_SERVERS else []
    assert [t["name"] for t in data["tools"]] == _tool_names(*(parts or [server.package]))
    forge = FORGES[server.forge]
    token = data["user_config"]["token"]
    assert token["sensitive"] and token["required"]
    assert data["server"]["mcp_config"]["env"][forge.token_env] == "${user_config.token}"
    assert data["user_config"]["api_url"].get("default") == forge.default_api_url


def test_a_bad_manifest_is_refused_by_mcpb_validate(tmp_path: Path) -> None:
    data = manifest(INSTALLED)
    del data["author"]
    (tmp_path / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SystemExit, match="author"):
        mcpb(["validate", tmp_path / "manifest.json"])


def _resolved(installed: Path, settings: dict[str, Any]) -> dict[str, Any]:
    library = PREFIX / "node_modules" / "@anthropic-ai" / "mcpb" / "dist" / "index.js"
    done = subprocess.run(["node", "--input-type=module", "-e", RESOLVE, str(library),
                           str(installed / "manifest.json"), str(installed), json.dumps(settings)],
                          capture_output=True, text=True, env=node_env(), timeout=60, check=True)
    config: dict[str, Any] = json.loads(done.stdout)
    return config


async def test_one_bundle_installed_and_started_lists_its_tools(tmp_path: Path) -> None:
    ensure_mcpb()
    uv = ensure_uv()
    dist = tmp_path / "dist"
    dist.mkdir()
    build_wheels(dist)
    bundle = build(INSTALLED, dist)
    installed = tmp_path / "installed"
    mcpb(["unpack", bundle, installed])
    assert _resolved(installed, {}) is None  # the token is required: a host asks before starting
    config = _resolved(installed, {"token": TOKEN})
    assert config["command"] == "uv"
    assert config["env"]["GITHUB_TOKEN"] == TOKEN
    assert config["env"]["GITHUB_API_URL"] == "https://api.github.com"
    # uv's own cache stays where uv keeps it (the user's cache directory), outside the checkout
    env = {**{k: v for k, v in os.environ.items() if k in ("HOME", "XDG_CACHE_HOME", "SSL_CERT_FILE",
                                                           "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY",
                                                           "UV_INDEX_URL")},
           "PATH": f"{uv.parent}{os.pathsep}{os.environ['PATH']}", "UV_PYTHON_DOWNLOADS": "never",
           "GHMCP_LOG_LEVEL": "WARNING", **config["env"]}
    params = StdioServerParameters(command=str(uv), args=config["args"], env=env)
    async with Client(params, cache=None) as client:
        listed = await client.list_tools()
    assert tools_json(listed) == (ROOT / "generated" / INSTALLED / "tools.json").read_bytes()
