"""The distributions' pyproject.toml files: requirements derived from imports and pinned from
constraints.txt, TOML that survives hostile strings, names and versions a wheel can carry, and a
flat generated directory that builds into a wheel of exactly its package."""

from __future__ import annotations

import email
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from gen_support import case

import generator.__main__ as cli_main
import ghmcp_runtime
from generator.packaging.requirements import (
    RUNTIME_PYPROJECT,
    PackagingError,
    current_packaging,
    imported_modules,
    read_pins,
    runtime_requirements,
    toml_string,
)
from generator.pipeline.generate import Result, generate, load_inputs
from generator.render.files import runtime_pyproject

PINS = read_pins("httpx==0.28.1\nredis==8.1.0\nsniffio==1.3.1\n# comment\n\nPyYAML==6.0.3  # note\n")
MODULES = {"httpx": "httpx==0.28.1", "redis": "redis==8.1.0", "yaml": "PyYAML==6.0.3"}


def test_imports_are_read_at_run_time_only() -> None:
    source = (
        "from __future__ import annotations\n"
        "import json, httpx.client\n"
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n    import jsonschema\nelse:\n    import yaml\n"
        "def f():\n    import redis.asyncio\n    from uvicorn import run\n"
        "class C:\n    def m(self):\n        import httpx\n"
    )
    assert imported_modules(source) == {"__future__": True, "json": True, "httpx": True, "typing": True,
                                        "yaml": True, "redis": False, "uvicorn": False}


def test_runtime_requirements_come_from_imports_with_the_redis_extra() -> None:
    required, extras = runtime_requirements({"httpx": True, "redis": False, "json": True,
                                             "ghmcp_runtime": True}, MODULES, PINS)
    assert required == ("httpx==0.28.1", "sniffio==1.3.1")  # sniffio: needed, never imported
    assert extras == {"redis": ("redis==8.1.0",)}


@pytest.mark.parametrize(("imports", "message"), [
    ({"httpx": True, "redis": False, "nowhere_pinned": True}, "'nowhere_pinned', which no distribution"),
    ({"httpx": True, "redis": True}, "imports 'redis' at module level"),
    ({"httpx": True}, "does not import 'redis'"),
])
def test_runtime_requirements_refuse_what_the_pins_cannot_satisfy(imports: dict[str, bool], message: str) -> None:
    with pytest.raises(PackagingError, match=message):
        runtime_requirements(imports, MODULES, PINS)


def test_the_committed_runtime_pyproject_is_current_and_lists_what_the_runtime_imports() -> None:
    packaging = current_packaging()
    text = RUNTIME_PYPROJECT.read_text(encoding="utf-8")
    assert text == runtime_pyproject(packaging), "run `make generate`"
    project = tomllib.loads(text)["project"]
    names = {r.split("==")[0].lower() for r in project["dependencies"]}
    assert {"mcp", "httpx", "anyio", "uvicorn", "starlette", "jsonschema", "sniffio"} <= names
    assert names.isdisjoint({"black", "jinja2", "pyyaml", "openapi-core", "redis"})
    assert project["optional-dependencies"] == {"redis": [PINS["redis"]]}
    assert project["version"] == ghmcp_runtime.__version__


def test_check_reports_a_stale_runtime_pyproject_and_generate_rewrites_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "pyproject.toml"
    stale.write_text(RUNTIME_PYPROJECT.read_text(encoding="utf-8").replace("mcp==", "mcp>="),
                     encoding="utf-8")
    monkeypatch.setattr(cli_main, "RUNTIME_PYPROJECT", stale)
    assert cli_main._owned_outside("check") is False
    assert f"CHANGED: {stale}" in capsys.readouterr().out
    assert cli_main._owned_outside("generate") is True
    assert stale.read_text(encoding="utf-8") == RUNTIME_PYPROJECT.read_text(encoding="utf-8")


def test_toml_strings_survive_every_hostile_character() -> None:
    hostile = "".join(map(chr, range(0x20))) + '\x7f"""\'\'\'\\ \\n {{x}} café 🚀 \u2028 ]" = 1 #'
    assert tomllib.loads(f"x = {toml_string(hostile)}\n")["x"] == hostile


def _variant(tmp_path: Path, name: str, edit_yaml: Callable[[str], str] = str,
             hooks_line: str = "") -> Result:
    root = tmp_path / name
    shutil.copytree(case(name).root, root, ignore=shutil.ignore_patterns("expected"))
    overrides = next((root / "overrides").glob("*.yaml"))
    overrides.write_text(edit_yaml(overrides.read_text(encoding="utf-8")), encoding="utf-8")
    if hooks_line:
        hooks = next((root / "overrides").glob("*_hooks.py"))
        hooks.write_text(hooks.read_text(encoding="utf-8") + hooks_line + "\n", encoding="utf-8")
    return generate(load_inputs(overrides, root=root, spec_dir=root / "spec"))


@pytest.mark.parametrize(("key", "value"), [("version", "1.0-beta!"), ("name", "-bad name-")])
def test_a_name_or_version_no_distribution_can_carry_is_located(tmp_path: Path, key: str, value: str) -> None:
    result = _variant(tmp_path, "minimal", lambda t: t.replace(
        f"  {key}: {'0.0.1' if key == 'version' else 'golden-minimal'}\n", f"  {key}: {value!r}\n"))
    assert result.files is None
    (found,) = [d for d in result.diagnostics if f"server {key}" in d.message]
    assert found.where.file == "overrides/minimal.yaml" and found.where.line > 0 and found.hint


def test_hooks_imports_become_pinned_requirements_or_located_errors(tmp_path: Path) -> None:
    pinned = _variant(tmp_path / "a", "minimal", hooks_line="import yaml")
    assert pinned.files is not None, [d.render() for d in pinned.diagnostics]
    project = tomllib.loads(pinned.files["golden_minimal_mcp/pyproject.toml"])["project"]
    packaging = current_packaging()
    assert project["dependencies"] == [packaging.runtime_pin, packaging.module_requirements["yaml"]]
    refused = _variant(tmp_path / "b", "minimal", hooks_line="import nowhere_pinned_module")
    assert refused.files is None
    (found,) = [d for d in refused.diagnostics if "nowhere_pinned_module" in d.message]
    assert found.where.file == "overrides/minimal_hooks.py"


def test_the_flat_hostile_package_builds_into_a_wheel_of_exactly_its_files(tmp_path: Path) -> None:
    source = tmp_path / "golden_hostile_mcp"
    shutil.copytree(case("hostile").expected / "golden_hostile_mcp", source)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "--no-build-isolation", "--wheel-dir", str(tmp_path / "dist"), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(info))
        entry_points = archive.read(info.replace("METADATA", "entry_points.txt")).decode()
    packaged = {n for n in names if not n.split("/")[0].endswith(".dist-info")}
    expected = {f"golden_hostile_mcp/{p.name}" for p in source.iterdir()
                if p.name not in ("pyproject.toml", "server.json")}
    assert packaged == expected
    assert (metadata["Name"], metadata["Version"], metadata["Summary"]) == (
        project["name"], project["version"], project["description"])
    assert '"""' in metadata["Summary"] and metadata.get_all("Requires-Dist") == [
        *project["dependencies"], f"{current_packaging().runtime_pin.replace('==', '[redis]==')}; extra == 'redis'"]
    assert f"{project['name']} = golden_hostile_mcp.__main__:main" in entry_points
    assert list(source.iterdir()) and not any(p.suffix == ".egg-info" or p.name in ("build", "dist")
                                              for p in source.iterdir())  # nothing written in-tree
