"""`python -m generator.packaging.venv_sync`: the development venv holds an editable install of the runtime
(`ghmcp_runtime/`) and of every generated server (`generated/<package>/`), each from its own
pyproject.toml, so a server a new override file adds gets its console script and
`python -m <package>` works from any directory.

Every `make` target runs it; `make generate` runs it again after writing. It asks pip only for what
changed since the last run (a project whose pyproject.toml is new or differs, or whose distribution
is missing), and uninstalls the editable servers whose directory is gone. Builds use the venv's
hatchling (`--no-build-isolation`): the pyprojects set `dev-mode-dirs`, so no `editables` is needed.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution, distributions
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parents[2]
STATE_NAME = ".editable-projects.json"  # in the venv: project directory -> pyproject digest


@dataclass(frozen=True, slots=True)
class Project:
    directory: Path
    name: str  # the distribution
    digest: str  # of its pyproject.toml

    @property
    def shown(self) -> str:
        return self.directory.relative_to(ROOT).as_posix()


def projects(root: Path = ROOT) -> list[Project]:
    """The runtime and every generated server, in that order."""
    found = []
    for pyproject in [root / "ghmcp_runtime" / "pyproject.toml",
                      *sorted((root / "generated").glob("*/pyproject.toml"))]:
        data = pyproject.read_bytes()
        name = tomllib.loads(data.decode("utf-8"))["project"]["name"]
        found.append(Project(pyproject.parent, name, hashlib.sha256(data).hexdigest()))
    return found


def editable_directory(name: str) -> Path | None:
    """Where an installed distribution's editable project lives, None when it is not editable."""
    try:
        text = distribution(name).read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    if not text:
        return None
    info = json.loads(text)
    if not info.get("dir_info", {}).get("editable") or not info.get("url", "").startswith("file:"):
        return None
    return Path(unquote(urlparse(info["url"]).path))


def stale_servers(root: Path = ROOT) -> list[str]:
    """Editable distributions installed from a `generated/` directory that no longer exists."""
    generated = (root / "generated").resolve()
    out = []
    for dist in distributions():
        name = dist.metadata["Name"]
        where = editable_directory(name) if name else None
        if where is not None and where.parent == generated and not (where / "pyproject.toml").is_file():
            out.append(name)
    return sorted(set(out))


def sync(root: Path = ROOT, prefix: Path = Path(sys.prefix)) -> list[str]:
    """Bring the venv in line; returns the lines to print (nothing when it already was)."""
    state_file = prefix / STATE_NAME
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    wanted = projects(root)
    todo = [p for p in wanted
            if state.get(str(p.directory)) != p.digest or editable_directory(p.name) != p.directory]
    gone = stale_servers(root)
    lines = []
    if gone:
        _pip("uninstall", "--yes", *gone)
        lines += [f"uninstalled {name} (its generated/ directory is gone)" for name in gone]
    if todo:
        editables = [arg for p in todo for arg in ("--editable", str(p.directory))]
        _pip("install", "--no-build-isolation", "--constraint", str(root / "constraints.txt"), *editables)
        lines += [f"installed {p.name} (editable, {p.shown})" for p in todo]
    if todo or gone or not state_file.exists():
        state_file.write_text(json.dumps({str(p.directory): p.digest for p in wanted}, indent=1,
                                         sort_keys=True) + "\n", encoding="utf-8")
    return lines


def _pip(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "--quiet", *args], check=False)
    if proc.returncode != 0:
        raise SystemExit(f"venv_sync: `pip {args[0]}` exited {proc.returncode}")


def main() -> int:
    for line in sync():
        print(f"venv: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
