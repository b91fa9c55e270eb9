"""`python -m generator review`: golden reports on hand-made before/after trees in a real git repo.

Each case commits `base/generated/` (two hand-made tools of the package golden_minimal_mcp) with
the `minimal` golden case's spec and override file, then commits the case's `generated/` files on
top (and applies `overrides_edits.json` to the override file, for declarations and renames), and
runs `review --base HEAD~1`. The override file is real so the review's lint step runs for real;
the generated trees are hand-made so each case changes exactly one thing (or, in
`declared_and_renamed`, every kind of declared change at once).

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/review    # rewrite expected.md, then review it
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.__main__ import main
from generator.review.report import Side, Surface, review, word_diff

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MINIMAL = ROOT / "tests" / "golden" / "minimal"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
EXIT = {"unchanged": 0, "description_changed": 0, "property_removed_undeclared": 1, "tool_added": 0,
        "contract_changed": 0,
        "declared_and_renamed": 0, "server_added": 0, "parameter_added": 0}


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def make_repo(tmp: Path, case: str) -> Path:
    repo = tmp / "repo"
    shutil.copytree(MINIMAL / "spec", repo / "spec")
    shutil.copytree(MINIMAL / "overrides", repo / "overrides")
    shutil.copytree(HERE / "base" / "generated", repo / "generated")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    case_dir = HERE / "cases" / case
    if (case_dir / "generated").is_dir():
        shutil.copytree(case_dir / "generated", repo / "generated", dirs_exist_ok=True)
    edits = case_dir / "overrides_edits.json"
    if edits.exists():
        target = repo / "overrides" / "minimal.yaml"
        text = target.read_text(encoding="utf-8")
        for edit in json.loads(edits.read_text(encoding="utf-8")):
            assert text.count(edit["old"]) == 1, edit["old"]
            text = text.replace(edit["old"], edit["new"])
        target.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", case)
    return repo


def run_review(repo: Path, base: str = "HEAD~1") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["review", "--base", base, "--root", str(repo)])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", sorted(EXIT))
def test_review_golden(case: str, tmp_path: Path) -> None:
    code, report, err = run_review(make_repo(tmp_path, case))
    expected = HERE / "cases" / case / "expected.md"
    if UPDATE:
        expected.write_text(report, encoding="utf-8")
    assert report == expected.read_text(encoding="utf-8"), \
        f"report differs from {expected.relative_to(ROOT)} (UPDATE_GOLDEN=1 rewrites it)"
    assert (code, err) == (EXIT[case], "")


def test_undeclared_breaking_change_exits_1_through_the_console(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "property_removed_undeclared")
    done = subprocess.run([sys.executable, "-m", "generator", "review", "--base", "HEAD~1",
                           "--root", str(repo)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1, done.stderr
    expected = HERE / "cases" / "property_removed_undeclared" / "expected.md"
    assert done.stdout == expected.read_text(encoding="utf-8")


def test_an_unknown_ref_is_a_usage_error_and_the_base_defaults_to_head(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path, "unchanged")
    code, report, err = run_review(repo, base="no-such-ref")
    assert (code, report) == (2, "") and "no-such-ref" in err
    monkeypatch.delenv("GENERATOR_BASE", raising=False)
    out, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errors):
        assert main(["review", "--root", str(repo)]) == 0
    assert "Base `HEAD` → working tree" in out.getvalue()
    monkeypatch.setenv("GENERATOR_BASE", "no-such-base")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errors):
        assert main(["review", "--root", str(repo)]) == 2
    assert "'no-such-base' names no commit" in errors.getvalue()


def test_the_base_is_the_merge_base_with_head(tmp_path: Path) -> None:
    """A base branch that moved on after the change branched off is not the baseline: its newer
    tools would read as removed by this change."""
    repo = make_repo(tmp_path, "unchanged")
    git(repo, "branch", "base")
    git(repo, "checkout", "-q", "-b", "change")
    git(repo, "checkout", "-q", "base")
    shutil.copytree(HERE / "cases" / "tool_added" / "generated", repo / "generated", dirs_exist_ok=True)
    git(repo, "commit", "-q", "-am", "the base moves on")
    git(repo, "checkout", "-q", "change")
    code, report, err = run_review(repo, base="base")
    assert (code, err) == (0, ""), report
    assert "| golden_minimal_mcp | 0 | 0 | 0 | 2 |" in report


def test_a_stale_generated_tree_fails_and_says_so_first(tmp_path: Path) -> None:
    """An override file edited without `make generate`: the review's first line says generated/ is
    stale (the surface it shows is not what the override file says), exit 1."""
    repo = make_repo(tmp_path, "unchanged")
    overrides = repo / "overrides" / "minimal.yaml"
    manifest = repo / "generated" / "golden_minimal_mcp" / "MANIFEST.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["overrides"] = {"file": "overrides/minimal.yaml",
                         "sha256": hashlib.sha256(overrides.read_bytes()).hexdigest()}
    manifest.write_text(json.dumps(data), encoding="utf-8")
    code, report, err = run_review(repo)
    assert (code, err) == (0, ""), report  # generated from this very file
    overrides.write_text(overrides.read_text(encoding="utf-8").replace("Read one", "Fetch one", 1),
                         encoding="utf-8")
    code, report, err = run_review(repo)
    assert code == 1
    assert report.splitlines()[0].startswith("**Stale: `generated/` was not regenerated")
    assert "- `overrides/minimal.yaml` changed after `generated/golden_minimal_mcp/` was generated" in report
    assert "generated/ is stale" in err
    overrides.rename(repo / "overrides" / "renamed.yaml")
    code, report, _ = run_review(repo)
    assert code == 1 and "- `overrides/renamed.yaml` changed after" in report
    (repo / "overrides" / "renamed.yaml").unlink()
    code, report, _ = run_review(repo)
    assert code == 1 and "- `overrides/minimal.yaml` is gone but `generated/golden_minimal_mcp/` is not" in report


def test_a_hand_edited_tools_json_that_does_not_parse_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "unchanged")
    (repo / "generated" / "golden_minimal_mcp" / "tools.json").write_text("{", encoding="utf-8")
    code, report, err = run_review(repo)
    assert (code, report) == (2, "")
    assert "generated/golden_minimal_mcp/tools.json (working tree) does not parse" in err


def test_a_removed_server_is_an_undeclared_breaking_change() -> None:
    tool = {"name": "x_get_a", "inputSchema": {"type": "object"}, "annotations": {}}
    base = Side({"x_mcp": Surface({"x_get_a": tool}, {"x_get_a": ("c",)})})
    report, undeclared = review(base, Side({}), {}, [], "main", 0)
    assert undeclared == 1
    assert "Server removed" in report and "**undeclared** · `x_get_a`: removed-tool" in report


def test_word_diff_marks_only_the_changed_words() -> None:
    assert word_diff("Read one issue.", "Read one issue and its comments.") == \
        "Read one [-issue.-]{+issue and its comments.+}"
    assert word_diff("same", "same") == "same"
    assert word_diff("", "new text") == "{+new text+}"
