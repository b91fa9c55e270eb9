"""The runtime's layers, and no import circle in the runtime, the generator, the fakes or bench.

`ghmcp_runtime/` is one sub-package per layer (docs/ARCHITECTURE.md); a module imports only modules
of its own layer or of the layers below it. Every import counts: at module level, inside a function
and under `if TYPE_CHECKING:` alike, since each is a dependency a reader has to follow.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = "ghmcp_runtime"
GENERATOR = "generator"
# the fakes and the benchmarks: no layers, but no circle either (a fake and the app serving it,
# a report and its charts, share a lower module rather than import each other)
SUPPORT = ("fakegithub", "fakeforgejo", "bench")
# Bottom to top: each layer may import itself and the layers before it.
LAYERS = ("base", "cleaning", "core", "guards", "stores", "calls", "engine", "serving")


def modules(package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module of `package` (its `__init__` as the package)."""
    base = ROOT / package
    found = {}
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported(path: Path, name: str, known: Mapping[str, Path]) -> Iterator[tuple[str, int]]:
    """The modules of `known` that `path` (module `name`) imports, with the line of each import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            groups = [[alias.name] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            # `from pkg import mod` names the module `pkg.mod`; `from mod import name`, `mod`
            groups = [[f"{base}.{alias.name}", base] for alias in node.names]
        else:
            continue
        for candidates in groups:
            for target in candidates:
                while target and target not in known:  # the longest known prefix
                    target = target.rpartition(".")[0]
                if target:
                    if target != name:
                        yield target, node.lineno
                    break


def graph(*packages: str) -> dict[str, dict[str, int]]:
    """Module -> {imported module of `packages`: line}; edges between the packages count too."""
    known = {name: path for package in packages for name, path in modules(package).items()}
    return {name: dict(imported(path, name, known)) for name, path in known.items()}


def cycles(edges: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_runtime_module_sits_in_a_known_layer() -> None:
    """The package root holds only its public face; a new layer is placed in LAYERS (and in
    docs/ARCHITECTURE.md) before it holds code."""
    loose = sorted(p.name for p in (ROOT / RUNTIME).glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules outside the layers: {loose}"
    subpackages = {p.parent.name for p in (ROOT / RUNTIME).glob("*/__init__.py")}
    assert subpackages <= set(LAYERS), f"layers not in LAYERS: {sorted(subpackages - set(LAYERS))}"
    assert not list((ROOT / RUNTIME).glob("*/*/__init__.py")), "layers are flat: no nested package"


def test_no_runtime_module_is_one_servers_own() -> None:
    """What only one server's tools use lives beside its override file (hook parts), so no
    runtime module is named after a forge resource a tool manages."""
    named = sorted(str(p.relative_to(ROOT)) for p in (ROOT / RUNTIME).rglob("*.py")
                   if re.search(r"issue|label|milestone|comment", p.stem))
    assert not named, f"server-specific modules in the runtime: {named}"


PRESENT = [layer for layer in LAYERS if (ROOT / RUNTIME / layer / "__init__.py").exists()]


@pytest.mark.parametrize("layer", PRESENT)
def test_each_layer_says_what_it_owns_and_may_import(layer: str) -> None:
    doc = ast.get_docstring(ast.parse((ROOT / RUNTIME / layer / "__init__.py").read_text()))
    assert doc and "May import" in doc, f"{layer}/__init__.py: a docstring ending in 'May import: …'"


def test_runtime_imports_point_down() -> None:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = []
    for module, targets in graph(RUNTIME).items():
        source = layer_of(module)
        if source is None:  # the package root re-exports the public names of every layer
            continue
        for target, line in targets.items():
            goal = layer_of(target)
            if goal is None:
                upward.append(f"{module}:{line} imports the package root {target}")
            elif rank[goal] > rank[source]:
                upward.append(f"{module}:{line} ({source}) imports {target} ({goal}, above it)")
    assert not upward, "imports pointing up a layer:\n" + "\n".join(sorted(upward))


@pytest.mark.parametrize("packages", [(RUNTIME,), (GENERATOR,), *((p,) for p in SUPPORT),
                                      (RUNTIME, GENERATOR, *SUPPORT)], ids=lambda p: "+".join(p))
def test_no_import_circle(packages: tuple[str, ...]) -> None:
    edges = graph(*packages)
    # a package root imports its parts; each part importing the root is no circle of design
    edges = {m: {t: n for t, n in ts.items() if t not in packages} for m, ts in edges.items()}
    found = cycles(edges)
    assert not found, "import circles:\n" + "\n".join(" ⇄ ".join(c) for c in found)


def test_the_checks_see_real_edges() -> None:
    """The graph is not empty by accident: known imports are found, in each style."""
    runtime = graph(RUNTIME)
    assert "ghmcp_runtime.core.model" in runtime["ghmcp_runtime.engine.runner"]
    assert "ghmcp_runtime.serving.app" in runtime["ghmcp_runtime"]  # under TYPE_CHECKING
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    gen = graph(GENERATOR)
    assert "generator.lint.rules" in gen["generator.pipeline.generate"]
    fakes = graph("fakegithub", "fakeforgejo")
    assert "fakegithub.app" in fakes["fakegithub.core"]
    assert "fakegithub.core" in fakes["fakeforgejo.fake"]  # across packages
    assert "bench.rows" in graph("bench")["bench.charts"]
