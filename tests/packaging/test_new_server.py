"""A new override file is all a maintainer adds to get an installed, tested server: in a temporary
copy of the repository, the complete file of docs/overrides.md dropped into `overrides/` and
`make generate` give a console script that answers `tools/list`, `python -m <package>` from any
directory, a clean `make check`, and the server-generic tests (tests/contract/test_every_server.py,
which discovers servers from `overrides/*.yaml`) passing for it next to the shipped servers.

The copy's venv borrows this venv's third-party packages (a `.pth` file pointing at links to them,
without this checkout's own distributions), so no package index is needed; the copy's own project,
runtime and servers are installed there as `make` installs them (the runtime and servers by
`make generate` itself, through generator/packaging/venv_sync.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.contract.test_every_server import tools_json
from tests.support.doc_example import complete_example
from tests.support.wheels import clean_env

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
NEW = {"name": "github-releases-mcp", "package": "github_releases_mcp"}


def _copy_checkout(to: Path) -> None:
    """The working tree as git sees it (tracked and untracked, ignored files left out)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = ROOT / rel
        if source.is_file():  # a deleted, not yet committed file is still listed
            (to / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / rel)


def _is_ours(entry: Path) -> bool:
    """This checkout's editable installs in site-packages: their metadata and path hooks."""
    if entry.suffix == ".pth" or entry.name.startswith("__editable__"):
        return True
    direct = entry / "direct_url.json"
    return entry.name.endswith(".dist-info") and direct.is_file() and \
        json.loads(direct.read_text(encoding="utf-8")).get("dir_info", {}).get("editable", False)


def _venv(clone: Path, borrowed: Path) -> Path:
    """The copy's .venv: this venv's third-party packages via links, then the copy's own project
    installed editable (what the STAMP rule of the Makefile does, minus the package index)."""
    borrowed.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not _is_ours(entry):
            (borrowed / entry.name).symlink_to(entry)
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_borrowed.pth").write_text(f"{borrowed}\n", encoding="utf-8")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--editable", str(clone)], cwd=clone, env=clean_env(), check=True, timeout=300)
    (venv / ".installed").touch()  # the Makefile's stamp: the project is installed
    return python


def _make(clone: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in clean_env().items() if not k.startswith("MAKE")}
    return subprocess.run(["make", "--no-print-directory", *targets], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=900, check=False)


async def test_a_new_override_file_is_an_installed_tested_server(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    _copy_checkout(clone)
    if (ROOT / ".prism").is_dir():  # the npm-installed Prism, git-ignored: reuse it
        (clone / ".prism").symlink_to(ROOT / ".prism")
    python = _venv(clone, tmp_path / "borrowed")
    (clone / "overrides" / "github_releases.yaml").write_text(complete_example(), encoding="utf-8")

    generated = _make(clone, "generate")
    assert generated.returncode == 0, generated.stdout[-3000:] + generated.stderr[-3000:]
    assert f"venv: installed {NEW['name']} (editable, generated/{NEW['package']})" in generated.stdout
    assert "missing" not in generated.stdout  # a new server's files are "created", not errors
    published = (clone / "generated" / NEW["package"] / "tools.json").read_bytes()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(GITHUB_TOKEN="ghp_newservertesttoken00000000000000000001")
    for command, args in ((python.parent / NEW["name"], []), (python, ["-m", NEW["package"]])):
        params = StdioServerParameters(command=str(command), args=args, env=env, cwd=str(elsewhere))
        async with Client(params, cache=None) as client:
            assert client.server_info is not None and client.server_info.name == NEW["name"]
            assert tools_json(await client.list_tools()) == published

    checked = _make(clone, "check")
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    tests = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "tests/contract/test_every_server.py",
         "tests/generator/test_generated_is_current.py", "tests/generator/test_surface_size.py"],
        cwd=clone, env=clean_env(), capture_output=True, text=True, timeout=900, check=False)
    assert tests.returncode == 0, tests.stdout[-5000:] + tests.stderr[-3000:]
    ran = [line for line in tests.stdout.splitlines() if line.endswith(f"[{NEW['package']}]")]
    assert len(ran) >= 6 and all(line.startswith("PASSED ") for line in ran), ran
    assert sum("test_every_server.py" in line for line in ran) == 2  # both generic tests ran for it

    os.remove(clone / "overrides" / "github_releases.yaml")  # and removing the file removes it
    removed = _make(clone, "generate")
    assert removed.returncode == 0, removed.stderr[-3000:]
    assert f"venv: uninstalled {NEW['name']}" in removed.stdout
    assert not (python.parent / NEW["name"]).exists() and not (clone / "generated" / NEW["package"]).exists()
