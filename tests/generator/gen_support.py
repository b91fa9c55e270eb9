"""Shared helpers for the generator tests: golden cases, file maps, CLI subprocesses, AST checks."""

from __future__ import annotations

import ast
import dataclasses
import difflib
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.pipeline.generate import Inputs, Result, generate, load_inputs
from generator.spec.pinned import REPO_ROOT
from ghmcp_runtime.core import declared as declared_module

GOLDEN = REPO_ROOT / "tests" / "golden"
OVERRIDES = REPO_ROOT / "overrides" / "github_issues.yaml"
GENERATED = REPO_ROOT / "generated"
PYTHON = sys.executable
UPDATE_ENV = "UPDATE_GOLDEN"
UPDATE_COMMAND = f"{UPDATE_ENV}=1 .venv/bin/python -m pytest tests/generator/test_golden.py"

FileMap = dict[str, str]


# -- golden cases ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    root: Path

    @property
    def overrides(self) -> Path:
        (found,) = sorted((self.root / "overrides").glob("*.yaml"))
        return found

    @property
    def spec_dir(self) -> Path:
        return self.root / "spec"

    @property
    def expected(self) -> Path:
        return self.root / "expected"

    def inputs(self) -> Inputs:
        return load_inputs(self.overrides, root=self.root, spec_dir=self.spec_dir)

    def generate(self) -> Result:
        return generate(self.inputs())


def golden_cases() -> list[Case]:
    return [Case(p.name, p) for p in sorted(GOLDEN.iterdir()) if (p / "overrides").is_dir()]


def case(name: str) -> Case:
    return Case(name, GOLDEN / name)


def read_tree(root: Path) -> FileMap:
    """Every file under root, decoded from its exact bytes (no newline translation)."""
    out: FileMap = {}
    if not root.exists():
        return out
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out[path.relative_to(root).as_posix()] = path.read_bytes().decode("utf-8")
    return out


def write_tree(files: Mapping[str, str], root: Path) -> None:
    """Write exactly `files` under root (bytes as given), removing anything else."""
    for stale in set(read_tree(root)) - set(files):
        (root / stale).unlink()
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    for directory in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if not any(directory.iterdir()):
            directory.rmdir()


def tree_diff(want: Mapping[str, str], have: Mapping[str, str], label: str) -> list[str]:
    """MISSING/EXTRA/CHANGED lines with a unified diff per changed file; [] when equal."""
    report: list[str] = []
    for rel in sorted(set(want) | set(have)):
        w, h = want.get(rel), have.get(rel)
        if w == h:
            continue
        if h is None:
            report.append(f"MISSING: {label}/{rel}")
        elif w is None:
            report.append(f"EXTRA: {label}/{rel}")
        else:
            diff = difflib.unified_diff(
                h.splitlines(keepends=True), w.splitlines(keepends=True),
                fromfile=f"{label}/{rel} (expected)", tofile=f"{label}/{rel} (generated)")
            report.append(f"CHANGED: {label}/{rel}\n" + "".join(diff))
    return report


def digests(files: Mapping[str, str]) -> dict[str, str]:
    return {k: hashlib.sha256(v.encode("utf-8")).hexdigest() for k, v in sorted(files.items())}


# -- CLI -------------------------------------------------------------------------------------


def cli(args: Sequence[str], *, cwd: Path = REPO_ROOT, env: Mapping[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    return subprocess.run([PYTHON, "-m", "generator", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every path under root (directories as b'<dir>') with its bytes."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = b"<dir>" if path.is_dir() else path.read_bytes()
    return out


# -- AST checks on generated Python ------------------------------------------------------------

# Everything a generated module may call, import or define at top level. Anything else (a call
# to os.system, an `import os`, a stray expression statement) means a string broke out of a
# literal.
# Declared tools add the runtime's declaration classes (ghmcp_runtime.core.declared) and `declared`.
DECLARATION_CLASSES = frozenset(name for name, obj in vars(declared_module).items()
                                if isinstance(obj, type) and dataclasses.is_dataclass(obj))
ALLOWED_CALLS = frozenset({
    "Annotations", "ErrorCode", "FieldRule", "Operation", "Rule", "ServerSpec", "Shape",
    "PackageData", "tool", "text", "error_codes", "run", "with_rules", "main", "declared",
    "tool_handler", "resource_handler", "completion", "error_rules",  # handlers.py, named
    *DECLARATION_CLASSES,
})
ALLOWED_IMPORTS = frozenset({
    "json", "importlib", "typing", "ghmcp_runtime", "ghmcp_runtime.guards.rules", "", "server",
    ".server", "ghmcp_runtime.core.declared", "ghmcp_runtime.engine.runner",
    "ghmcp_runtime.serving.package_data",
    "ghmcp_runtime.core.forges",  # a server of another forge names its profile (FORGEJO)
})
FORBIDDEN_NAMES = frozenset({"os", "system", "exec", "eval", "__import__", "subprocess",
                             "compile", "open", "getattr", "globals", "breakpoint"})


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ast.dump(func)


def inert_problems(rel: str, source: str) -> list[str]:
    """Why this generated module is not the inert declaration it should be ([] if it is)."""
    problems: list[str] = []
    try:
        tree = ast.parse(source, rel)
    except SyntaxError as exc:
        return [f"{rel}: does not parse: {exc}"]
    for i, stmt in enumerate(tree.body):
        where = f"{rel}:{stmt.lineno}"
        if isinstance(stmt, ast.Expr):
            if not (i == 0 and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                problems.append(f"{where}: stray expression statement {ast.unparse(stmt)[:80]!r}")
        elif isinstance(stmt, ast.Import):
            names = [a.name for a in stmt.names]
            problems += [f"{where}: unexpected import {n}" for n in names if n not in ALLOWED_IMPORTS]
        elif isinstance(stmt, ast.ImportFrom):
            if (stmt.module or "") not in ALLOWED_IMPORTS:
                problems.append(f"{where}: unexpected import from {stmt.module}")
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                problems.append(f"{where}: unexpected assignment target")
        elif isinstance(stmt, ast.ClassDef):
            bases = [ast.unparse(b) for b in stmt.bases]
            if bases != ["TypedDict"]:
                problems.append(f"{where}: class {stmt.name} has bases {bases}")
            for inner in stmt.body:
                if not isinstance(inner, ast.AnnAssign | ast.Pass):
                    problems.append(f"{rel}:{inner.lineno}: unexpected statement in class {stmt.name}")
        elif isinstance(stmt, ast.FunctionDef):
            if stmt.name != "main":
                problems.append(f"{where}: unexpected function {stmt.name}")
        elif isinstance(stmt, ast.If):
            if ast.unparse(stmt.test) != "__name__ == '__main__'":
                problems.append(f"{where}: unexpected if {ast.unparse(stmt.test)[:60]!r}")
        else:
            problems.append(f"{where}: unexpected {type(stmt).__name__} statement")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) not in ALLOWED_CALLS:
            problems.append(f"{rel}:{node.lineno}: unexpected call {_callee(node)}")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            problems.append(f"{rel}:{node.lineno}: forbidden name {node.id}")
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            problems.append(f"{rel}:{node.lineno}: forbidden attribute {node.attr}")
    return problems


def is_hook_module(rel: str) -> bool:
    """The hooks module or one of its parts: copied verbatim, not generated."""
    name = rel.rpartition("/")[2]
    return name == "hooks.py" or (name.startswith("hooks_") and name.endswith(".py"))


def python_files(files: Mapping[str, str], *, skip_hooks: bool = True) -> Iterable[tuple[str, str]]:
    for rel, text in sorted(files.items()):
        if rel.endswith(".py") and not (skip_hooks and is_hook_module(rel)):
            yield rel, text


def string_constants(source: str) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}
