"""Incremental generation (generator/pipeline/result_cache.py): an unchanged override file's result is
reused byte for byte without being parsed, built, linted or rendered; an edited file is built
again with its peers' facts from the cache; a change in what a peer returns or names redoes the
files that read it; a result with an error is never kept."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.base.diagnostics import Level
from generator.packaging.requirements import derivation_inputs
from generator.pipeline import run_all
from generator.pipeline.result_cache import ResultCache
from generator.pipeline.run_all import Run, generate_all
from generator.spec.pinned import REPO_ROOT, SpecCache

OVERRIDES = REPO_ROOT / "overrides"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(OVERRIDES, tmp_path / "overrides", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _files(run: Run) -> dict[str, str]:
    assert run.ok, [d.render() for r in run.results for d in r.diagnostics]
    out = dict(run.forge_files)
    for result in run.results:
        assert result.files is not None
        out.update(result.files)
    return out


class Counted:
    """run_all's prepare and complete, counted by override file."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.prepared: list[str] = []
        self.completed: list[str] = []
        real_prepare, real_complete = run_all.prepare, run_all.complete

        def prepare(inputs: Any) -> Any:
            self.prepared.append(Path(inputs.overrides_display).name)
            return real_prepare(inputs)

        def complete(prepared: Any, peers: Any) -> Any:
            self.completed.append(Path(prepared.inputs.overrides_display).name)
            return real_complete(prepared, peers)

        monkeypatch.setattr(run_all, "prepare", prepare)
        monkeypatch.setattr(run_all, "complete", complete)


def _run(root: Path, cache: ResultCache | None) -> Run:
    run = generate_all(root / "overrides", specs=SPECS, root=root, cache=cache)
    if cache is not None:
        cache.flush()
    return run


SPECS = SpecCache()


def test_an_unchanged_tree_is_reused_byte_for_byte(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _files(_run(tree, None))
    cache = ResultCache(tree / "cache", derivation_inputs())
    assert _files(_run(tree, cache)) == plain
    counted = Counted(monkeypatch)
    again = _run(tree, cache)
    assert _files(again) == plain
    assert counted.prepared == [] and counted.completed == []
    assert all("reused" in r.report for r in again.results)


def test_an_edited_file_is_built_again_and_the_others_are_reused(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ResultCache(tree / "cache", derivation_inputs())
    _run(tree, cache)
    edited = tree / "overrides" / "github_milestones.yaml"
    edited.write_text(edited.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
    counted = Counted(monkeypatch)
    run = _run(tree, cache)
    assert counted.prepared == ["github_milestones.yaml"] == counted.completed
    monkeypatch.undo()
    assert _files(run) == _files(_run(tree, None))  # what a run without the cache writes


def test_a_peer_that_changes_what_it_names_redoes_the_files_of_its_forge(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ResultCache(tree / "cache", derivation_inputs())
    _run(tree, cache)
    edited = tree / "overrides" / "github_milestones.yaml"
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace("  milestones: \"A repository's milestones", "  milestones: \"Milestones"),
                      encoding="utf-8")
    counted = Counted(monkeypatch)
    run = _run(tree, cache)
    github = sorted(p.name for p in (tree / "overrides").glob("github_*.yaml"))
    assert sorted(counted.completed) == github  # forgejo_labels.yaml's forge did not change
    monkeypatch.undo()
    assert _files(run) == _files(_run(tree, None))


def test_a_result_with_an_error_is_not_kept(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ResultCache(tree / "cache", derivation_inputs())
    broken = tree / "overrides" / "github_sub_issues.yaml"
    broken.write_text(broken.read_text(encoding="utf-8").replace("model_budget_bytes: 6400",
                                                                 "model_budget_bytes: 100"), encoding="utf-8")
    first = _run(tree, cache)
    assert not first.ok
    counted = Counted(monkeypatch)
    second = _run(tree, cache)
    assert "github_sub_issues.yaml" in counted.completed
    errors = [d.rule for r in second.results for d in r.diagnostics if d.level is Level.ERROR]
    assert errors == ["budget-model"]
