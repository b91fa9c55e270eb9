"""The sdists `make dist` builds (hatchling run inside each distribution's directory): a wheel
built from an sdist holds exactly the files of the wheel built from the directory, and the server's
sdist carries its MCP Registry entry and README beside the code."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support.wheels import ROOT, run

HATCHLING = Path(sys.executable).parent / "hatchling"


def _wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {n for n in archive.namelist() if ".dist-info/" not in n}


@pytest.mark.parametrize("directory", ["ghmcp_runtime", "generated/github_sub_issues_mcp"])
def test_a_wheel_from_the_sdist_is_the_wheel_from_the_directory(directory: str, tmp_path: Path) -> None:
    source = ROOT / directory
    subprocess.run([str(HATCHLING), "build", "-t", "sdist", "-d", str(tmp_path / "sdist")], cwd=source,
                   check=True, capture_output=True, timeout=300)
    (sdist,) = (tmp_path / "sdist").glob("*.tar.gz")
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
    run([*pip, "--wheel-dir", tmp_path / "from-sdist", sdist], cwd=tmp_path)
    run([*pip, "--wheel-dir", tmp_path / "from-directory", source], cwd=tmp_path)
    (from_sdist,) = (tmp_path / "from-sdist").glob("*.whl")
    (from_directory,) = (tmp_path / "from-directory").glob("*.whl")
    assert _wheel_files(from_sdist) == _wheel_files(from_directory)
    if directory.startswith("generated/"):
        with tarfile.open(sdist) as archive:
            names = {Path(n).name for n in archive.getnames()}
        assert {"server.json", "README.md", "pyproject.toml"} <= names
