"""The generator's stages, and imports that only point down them.

`generator/` is one sub-package per pipeline stage (docs/ARCHITECTURE.md); a module imports only
modules of its own stage or of the stages before it. The package's face stays at the root:
`__main__` (`python -m generator …`), `api` (entry points for tests, fakes and benches) and
`__init__` (the generator's name and version, which every stage may read). As in the runtime,
every import counts: at module level, inside a function and under `if TYPE_CHECKING:` alike.
"""

from __future__ import annotations

import ast
import re

import pytest

from tests.architecture.test_layers import ROOT, cycles, graph

GENERATOR = "generator"
# Bottom to top, in the order one override file passes through them (packaging and language do
# not import each other; packaging is placed below).
STAGES = ("base", "spec", "packaging", "language", "build", "lint", "render", "pipeline", "review")
FACE = {"__init__.py", "__main__.py", "api.py"}


def stage_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in STAGES) else None


def test_every_generator_module_sits_in_a_known_stage() -> None:
    """The root holds only the package's face; a new stage is placed in STAGES (and in
    docs/ARCHITECTURE.md) before it holds code."""
    loose = sorted(p.name for p in (ROOT / GENERATOR).glob("*.py") if p.name not in FACE)
    assert not loose, f"modules outside the stages: {loose}"
    found = {p.parent.name for p in (ROOT / GENERATOR).glob("*/__init__.py")}
    assert found == set(STAGES), f"stages not in STAGES: {sorted(found - set(STAGES))}, " \
                                 f"STAGES without a package: {sorted(set(STAGES) - found)}"
    assert not list((ROOT / GENERATOR).glob("*/*/__init__.py")), "stages are flat: no nested package"
    strays = sorted(str(p.relative_to(ROOT)) for p in (ROOT / GENERATOR).glob("*/*/*.py"))
    assert not strays, f"modules below a stage's folder: {strays}"


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_says_what_it_holds_and_may_import(stage: str) -> None:
    """The docstring ends in `May import: …` naming exactly the stages before it."""
    doc = ast.get_docstring(ast.parse((ROOT / GENERATOR / stage / "__init__.py").read_text()))
    assert doc and "May import:" in doc, f"{stage}/__init__.py: a docstring ending in 'May import: …'"
    said = doc.rsplit("May import:", 1)[1]
    named = {s for s in STAGES if re.search(rf"\b{s}\b", said)}
    below = set(STAGES[: STAGES.index(stage)])
    assert named == below, f"{stage}: 'May import' names {sorted(named)}, the stages below are {sorted(below)}"
    holds = {p.stem for p in (ROOT / GENERATOR / stage).glob("*.py") if p.name != "__init__.py"}
    unsaid = sorted(m for m in holds if f"`{m}`" not in doc)
    assert not unsaid, f"{stage}/__init__.py does not say what these modules hold: {unsaid}"


def test_the_root_is_only_a_face() -> None:
    """`generator/__init__.py` imports nothing of the generator, so any stage may read its name
    and version without a circle."""
    edges = graph(GENERATOR)
    assert not edges[GENERATOR], f"generator/__init__.py imports {sorted(edges[GENERATOR])}"


def test_generator_imports_point_down() -> None:
    rank = {stage: i for i, stage in enumerate(STAGES)}
    upward = []
    for module, targets in graph(GENERATOR).items():
        source = stage_of(module)
        if source is None:  # the face: __main__ and api use every stage
            continue
        for target, line in targets.items():
            goal = stage_of(target)
            if target == GENERATOR:
                continue  # the name and version
            if goal is None:
                upward.append(f"{module}:{line} imports the face {target}")
            elif rank[goal] > rank[source]:
                upward.append(f"{module}:{line} ({source}) imports {target} ({goal}, above it)")
    assert not upward, "imports pointing up a stage:\n" + "\n".join(sorted(upward))


def test_no_import_circle_within_a_stage() -> None:
    """Stages only point down, so a circle could only hide inside one (test_layers.py looks at
    the whole generator as well)."""
    edges = graph(GENERATOR)
    for stage in STAGES:
        inside = {m: {t: n for t, n in ts.items() if stage_of(t) == stage}
                  for m, ts in edges.items() if stage_of(m) == stage}
        assert not cycles(inside), f"import circle in {stage}/: {cycles(inside)}"


def test_the_checks_see_real_edges() -> None:
    """The graph is not empty by accident: known imports are found, across stages and inside one."""
    edges = graph(GENERATOR)
    assert "generator.build.wire" in edges["generator.lint.rules"]
    assert "generator.build.ir" in edges["generator.build.builder"]
    assert "generator.pipeline.generate" in edges["generator.review.sides"]
    assert GENERATOR in edges["generator.render.files"]  # the name, in every file's header
    assert stage_of("generator.lint.rules") == "lint" and stage_of("generator.api") is None
