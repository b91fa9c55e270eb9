"""One MCP Bundle (`.mcpb`) per generated server, packed by the official `@anthropic-ai/mcpb` CLI
(pinned; npm installs it into the git-ignored `.mcpb/` on first use) from the wheels `make dist`
built:

    python -m generator.packaging.bundle dist        # after the wheels are in dist/

The bundle is `server.type: "uv"` (manifest 0.4): it carries a pyproject.toml naming the server,
the runtime and, for a forge server, its parts, each resolved from the wheel inside the bundle,
and the host runs it with uv, which brings a Python for the platform and the pinned third-party
dependencies (pydantic-core and the like are compiled: a bundled `server/lib` would work on one
platform only). `mcp_config` says how: `uv run --directory <bundle> src/server.py`, the token and
API URL from `user_config`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator.base.npm import ensure_npm_package
from generator.packaging.requirements import canonical_name, current_packaging, toml_string
from generator.spec.pinned import REPO_ROOT
from ghmcp_runtime.core.forges import FORGES

MCPB = "@anthropic-ai/mcpb"
MCPB_VERSION = "2.1.2"
PREFIX = REPO_ROOT / ".mcpb"
GENERATED = REPO_ROOT / "generated"
MANIFEST_VERSION = "0.4"
ENTRY = "src/server.py"


def ensure_mcpb(prefix: Path = PREFIX) -> Path:
    """The `mcpb` bin under `prefix`, installed when missing (NodeSetupError without node/npm)."""
    return ensure_npm_package(prefix, MCPB, MCPB_VERSION, "mcpb")


def _project(package: str) -> dict[str, Any]:
    with (GENERATED / package / "pyproject.toml").open("rb") as handle:
        table: dict[str, Any] = tomllib.load(handle)["project"]
    return table


def _packages_by_name() -> dict[str, str]:
    """Distribution name (canonical) -> generated package directory."""
    return {canonical_name(_project(p.parent.name)["name"]): p.parent.name
            for p in GENERATED.glob("*/pyproject.toml")}


def _generated_requirements(package: str, by_name: dict[str, str]) -> list[str]:
    """The generated packages `package` requires (a forge server's parts), in order."""
    names = [canonical_name(re.split(r"[=<>!~\[; ]", r, maxsplit=1)[0])
             for r in _project(package)["dependencies"]]
    return [by_name[n] for n in names if n in by_name]


def _tools(packages: Sequence[str]) -> list[dict[str, str]]:
    """Every tool of the server, from the `tools.json` of it and of its parts: name and the
    description's first line."""
    out = []
    for package in packages:
        path = GENERATED / package / "tools.json"
        if path.exists():
            for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
                out.append({"name": tool["name"],
                            "description": tool.get("description", "").split("\n", 1)[0]})
    return sorted(out, key=lambda t: t["name"])


def manifest(package: str) -> dict[str, Any]:
    """The bundle manifest of `generated/<package>/`, from its pyproject.toml, server.json and
    tools.json (and its parts')."""
    project, packaging = _project(package), current_packaging()
    entry = json.loads((GENERATED / package / "server.json").read_text(encoding="utf-8"))
    stdio = entry["packages"][0]["environmentVariables"]
    forge = next(f for f in FORGES.values() if f.token_env == stdio[0]["name"])
    by_name = _packages_by_name()
    api_url: dict[str, Any] = {
        "type": "string", "title": "API URL",
        "description": next(e["description"] for e in stdio if e["name"] == forge.api_url_env),
        "required": forge.default_api_url is None}
    if forge.default_api_url:
        api_url["default"] = forge.default_api_url
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": project["name"],
        "display_name": entry["title"],
        "version": project["version"],
        "description": project["description"],
        "author": {"name": packaging.author},
        "repository": {"type": "git", "url": packaging.repository},
        "license": packaging.license,
        "keywords": ["mcp", forge.name],
        "server": {
            "type": "uv",
            "entry_point": ENTRY,
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--quiet", "--directory", "${__dirname}", ENTRY],
                "env": {forge.token_env: "${user_config.token}",
                        forge.api_url_env: "${user_config.api_url}",
                        "GHMCP_READ_ONLY": "${user_config.read_only}"},
            },
        },
        "tools": _tools([package, *_generated_requirements(package, by_name)]),
        "compatibility": {"platforms": ["darwin", "linux", "win32"],
                          "runtimes": {"python": project["requires-python"]}},
        "user_config": {
            "token": {"type": "string", "title": f"{forge.display_name} token",
                      "description": f"a {forge.display_name} token; the server acts with it",
                      "required": True, "sensitive": True},
            "api_url": api_url,
            "read_only": {"type": "boolean", "title": "Read-only",
                          "description": "hide every tool that writes", "required": False,
                          "default": False},
        },
    }


def _wheel(dist: Path, name: str, version: str) -> Path:
    stem = f"{canonical_name(name).replace('-', '_')}-{version}-"
    found = sorted(p for p in dist.glob("*.whl") if p.name.lower().startswith(stem))
    if not found:
        raise SystemExit(f"{dist}: no wheel of {name} {version}; run `make dist`")
    return found[-1]


def _pyproject(name: str, version: str, requires_python: str, wheels: Sequence[tuple[str, Path]]) -> str:
    """What uv runs the bundle from: every bundled wheel a direct dependency, found in wheels/."""
    deps = "".join(f"    {toml_string(n)},\n" for n, _ in wheels)
    sources = "".join(f"{toml_string(n)} = {{ path = {toml_string('wheels/' + w.name)} }}\n"
                      for n, w in wheels)
    return (f"[project]\nname = {toml_string(name + '-bundle')}\nversion = {toml_string(version)}\n"
            f"requires-python = {toml_string(requires_python)}\ndependencies = [\n{deps}]\n\n"
            f"[tool.uv]\npackage = false\n\n[tool.uv.sources]\n{sources}")


def stage(package: str, dist: Path, into: Path) -> dict[str, Any]:
    """Write the bundle directory of `package` into `into` (wheels taken from `dist`)."""
    data, project, packaging = manifest(package), _project(package), current_packaging()
    members = [package, *_generated_requirements(package, _packages_by_name())]
    wheels = [(packaging.runtime_name, _wheel(dist, packaging.runtime_name, packaging.runtime_version)),
              *((_project(m)["name"], _wheel(dist, _project(m)["name"], _project(m)["version"]))
                for m in members)]
    (into / "wheels").mkdir(parents=True)
    for _, wheel in wheels:
        (into / "wheels" / wheel.name).write_bytes(wheel.read_bytes())
    (into / "src").mkdir()
    module = package + ".__main__"
    (into / ENTRY).write_text(f'"""{data["display_name"]} MCP server (uv runs it)."""\n\n'
                              f"from {module} import main\n\nmain()\n", encoding="utf-8")
    (into / "pyproject.toml").write_text(
        _pyproject(project["name"], project["version"], project["requires-python"], wheels),
        encoding="utf-8")
    (into / "manifest.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return data


def mcpb(args: Sequence[str | Path], mcpb_bin: Path | None = None) -> str:
    command = [str(mcpb_bin or ensure_mcpb()), *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise SystemExit(f"`{' '.join(command)}` exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def build(package: str, dist: Path, mcpb_bin: Path | None = None) -> Path:
    """Validate and pack the bundle of `package` into `dist/<name>-<version>.mcpb`."""
    with tempfile.TemporaryDirectory() as tmp:
        data = stage(package, dist, Path(tmp) / "bundle")
        mcpb(["validate", Path(tmp) / "bundle" / "manifest.json"], mcpb_bin)
        out = dist / f"{data['name']}-{data['version']}.mcpb"
        mcpb(["pack", Path(tmp) / "bundle", out], mcpb_bin)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator.packaging.bundle", description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path, help="the directory holding the wheels; bundles go there")
    args = parser.parse_args(argv)
    binary = ensure_mcpb()
    for path in sorted(GENERATED.glob("*/pyproject.toml")):
        print(build(path.parent.name, args.dist.resolve(), binary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
