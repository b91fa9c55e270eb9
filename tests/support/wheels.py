"""The runtime's and every generated server's wheel, built from their own directories, installed
into a fresh venv with the pinned dependencies and nothing else (tests/packaging, bench/)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.support.servers import discover, discover_forges

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
SERVERS = [s.package for s in discover()]  # one per overrides/*.yaml
FORGES = [f.package for f in discover_forges()]  # one per overrides/forges/*.yaml
PROJECTS = [ROOT / "ghmcp_runtime", *(ROOT / "generated" / s for s in [*SERVERS, *FORGES])]


def clean_env(**extra: str) -> dict[str, str]:
    """This machine's environment without anything that could reach the checkout's code."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, **extra}


def run(args: list[Any], cwd: Path) -> str:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=clean_env(), capture_output=True,
                          text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{args} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def project(server: str) -> dict[str, Any]:
    """The `[project]` table of a generated server's pyproject.toml."""
    with (ROOT / "generated" / server / "pyproject.toml").open("rb") as handle:
        table: dict[str, Any] = tomllib.load(handle)["project"]
    return table


def build_wheels(dist: Path) -> list[Path]:
    """What `make dist` does: one wheel per project directory, with the dev venv's hatchling."""
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", dist, *PROJECTS], cwd=dist.parent)
    return sorted(dist.glob("*.whl"))


def install_servers(dist: Path, venv: Path, *, with_pip: bool = True) -> Path:
    """A new venv holding every server from `dist` and their pinned dependencies; its python.
    Without pip, the dev venv's pip installs into it (as the Dockerfile's build stage does)."""
    run([sys.executable, "-m", "venv", *([] if with_pip else ["--without-pip"]), venv], cwd=dist.parent)
    python = venv / "bin" / "python"
    pip = [python, "-m", "pip"] if with_pip else [sys.executable, "-m", "pip", "--python", python]
    run([*pip, "install", "--quiet", "--constraint", CONSTRAINTS, "--find-links", dist,
         *(project(s)["name"] for s in SERVERS)], cwd=dist.parent)
    return python
