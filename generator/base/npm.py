"""Node tools the project drives (swagger2openapi for `make update-spec`; MCP Inspector and
Prism in the tests): npm installs each pinned package into a git-ignored prefix on first use.

Standard library only: `.ci/run` calls the installers with the system `python3` before the
virtual environment exists.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

INSTALL_TIMEOUT = 900


class NodeSetupError(RuntimeError):
    """Node or npm is missing, or an install failed: a setup problem to report, never to skip."""


def node_env(home: str | None = None) -> dict[str, str]:
    """The caller's environment (proxies, NODE_EXTRA_CA_CERTS, npm_config_* must reach npm and
    node) with a quiet, non-interactive setup and, when given, a throw-away HOME."""
    env = {**os.environ, "CI": "1", "NO_UPDATE_NOTIFIER": "1",
           "npm_config_update_notifier": "false", "NO_COLOR": "1"}
    if home is not None:
        env["HOME"] = home
    return env


def require_node(what: str) -> None:
    """Raise NodeSetupError unless `node` and `npm` are on PATH."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise NodeSetupError(
                f"`{tool}` is not on PATH: {what} needs Node.js 20+ and npm "
                "(install them, e.g. `apt-get install -y nodejs npm`)")


def installed_version(prefix: Path, package: str) -> str | None:
    manifest = prefix.joinpath("node_modules", *package.split("/"), "package.json")
    if not manifest.exists():
        return None
    version = json.loads(manifest.read_text()).get("version")
    return version if isinstance(version, str) else None


def ensure_npm_package(prefix: Path, package: str, version: str, bin_name: str) -> Path:
    """`prefix/node_modules/.bin/<bin_name>` of `package@version`, installed with
    `npm install --prefix` when `prefix` does not hold exactly that version."""
    require_node(f"{package}@{version}")
    if installed_version(prefix, package) != version:
        print(f"installing {package}@{version} into {prefix} ...", flush=True)
        prefix.mkdir(parents=True, exist_ok=True)
        cmd = ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
               "--loglevel=error", "--save-exact", f"{package}@{version}"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, env=node_env(),
                                  timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise NodeSetupError(
                f"`{' '.join(cmd)}` did not finish in {INSTALL_TIMEOUT // 60} minutes (registry "
                "unreachable? proxy or CA settings such as NODE_EXTRA_CA_CERTS missing?)") from exc
        if done.returncode != 0:
            raise NodeSetupError(f"`{' '.join(cmd)}` failed ({done.returncode}):\n"
                                 f"{done.stderr[-3000:]}")
    binary = prefix / "node_modules" / ".bin" / bin_name
    if not binary.exists():
        raise NodeSetupError(f"{binary} is missing after installing {package}@{version}")
    return binary
