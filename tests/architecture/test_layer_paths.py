"""Every import of the runtime names a module where it lives (`ghmcp_runtime.<layer>.<module>`):
the flat names of before the layer split are gone, and importing the runtime installs no import
machinery that would bring them back."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = "ghmcp_runtime"
BUILD_OUTPUTS = {"build", "dist"}  # at the root only: generator/build/ is source


def python_files() -> Iterator[Path]:
    """The tree's Python files, outside hidden folders (.venv, .git, tool caches and installs),
    node_modules and the root's build outputs."""
    for folder, dirs, files in os.walk(ROOT):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules"
                         and not (here == ROOT and d in BUILD_OUTPUTS))
        yield from (here / f for f in sorted(files) if f.endswith(".py"))


def runtime_imports(path: Path) -> Iterator[tuple[str, str | None, int]]:
    """(module, name imported from it or None, line) for every runtime import in `path`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == RUNTIME)
        elif (isinstance(node, ast.ImportFrom) and not node.level and node.module
              and node.module.split(".")[0] == RUNTIME):
            yield from ((node.module, a.name, node.lineno) for a in node.names)


def file_of(dotted: str) -> Path | None:
    where = ROOT.joinpath(*dotted.split("."))
    for candidate in (where.with_suffix(".py"), where / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def bound_names(path: Path) -> set[str]:
    """Names a module binds at any depth (imports under TYPE_CHECKING, definitions, assignments)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def test_every_runtime_import_names_where_the_module_lives() -> None:
    """`import ghmcp_runtime.calls.upstream` names a file; `from ghmcp_runtime.calls import
    upstream` a module of the package, and `from ghmcp_runtime import ToolSpec` a name the
    package binds: `ghmcp_runtime.app` or `from ghmcp_runtime import app` is refused."""
    wrong = []
    for path in python_files():
        for module, name, line in runtime_imports(path):
            found = file_of(module)
            ok = found is not None and (
                name is None or found.name != "__init__.py"  # a name of a plain module
                or file_of(f"{module}.{name}") is not None or name in bound_names(found))
            if not ok:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {module}" + (f" import {name}" if name else ""))
    assert not wrong, "runtime imports that name no module where it lives:\n" + "\n".join(wrong)


def test_importing_the_runtime_installs_no_finder() -> None:
    probe = ("import sys; before = list(sys.meta_path); import ghmcp_runtime; "
             "print(len(sys.meta_path) - len(before))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "0"


def test_a_flat_name_does_not_import() -> None:
    probe = "import ghmcp_runtime.app"
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 1 and "ModuleNotFoundError" in run.stderr
