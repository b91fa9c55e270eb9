"""What spans a forge's override files is refused where it goes wrong (generator/pipeline/forge_server.py):
a tool or toolset declared by two files, a default toolset no file declares, a forge file's key
the schema does not know. Nothing is written then; the repository's own files pass."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from gen_support import cli

from generator.base.diagnostics import Level
from generator.pipeline.run_all import generate_all
from generator.spec.pinned import REPO_ROOT, SpecCache

OVERRIDES = REPO_ROOT / "overrides"


def _copy(tmp: Path, *files: str) -> Path:
    out = tmp / "overrides"
    (out / "forges").mkdir(parents=True)
    for name in files:
        shutil.copy(OVERRIDES / name, out / name)
    shutil.copy(OVERRIDES / "forges" / "github.yaml", out / "forges" / "github.yaml")
    return out


def _errors(directory: Path) -> list[str]:
    run = generate_all(directory, specs=SpecCache(), root=directory.parent)
    found = [d for r in run.results for d in r.diagnostics] + run.forge_problems
    assert not run.ok and not run.forge_files
    return [d.render() for d in found if d.level is Level.ERROR]


def test_a_tool_declared_by_two_files_is_refused_where_the_second_says_it(tmp_path: Path) -> None:
    directory = _copy(tmp_path, "github_milestones.yaml", "github_sub_issues.yaml")
    text = (directory / "github_milestones.yaml").read_text(encoding="utf-8")
    clone = (text.replace("name: github-milestones-mcp", "name: github-more-mcp")
             .replace("package: github_milestones_mcp", "package: github_more_mcp")
             .replace("  milestones: \"A repository's", "  more_milestones: \"A repository's")
             .replace("toolset: milestones", "toolset: more_milestones"))
    (directory / "github_more.yaml").write_text(clone, encoding="utf-8")
    errors = _errors(directory)
    clash = [e for e in errors if "tool github_get_milestone is also declared at" in e]
    assert len(clash) == 1, errors
    assert clash[0].startswith("overrides/github_more.yaml:")  # the second file, with line and column
    assert "overrides/github_milestones.yaml:" in clash[0] and "unique across github-mcp" in clash[0]


def test_a_toolset_declared_by_two_files_is_refused(tmp_path: Path) -> None:
    directory = _copy(tmp_path, "github_milestones.yaml", "github_sub_issues.yaml")
    path = directory / "github_sub_issues.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  dependencies: \"Issue", "  milestones: \"Issue")
                    .replace("toolset: dependencies", "toolset: milestones"), encoding="utf-8")
    errors = _errors(directory)
    assert any(e.startswith("overrides/github_sub_issues.yaml:") and "toolset milestones is also declared"
               in e for e in errors), errors


def test_an_unknown_default_toolset_is_refused_with_the_closest_name(tmp_path: Path) -> None:
    directory = _copy(tmp_path, "github_milestones.yaml", "github_sub_issues.yaml")
    errors = _errors(directory)  # the forge file names issues and labels, which no file here has
    assert any("overrides/forges/github.yaml:" in e and "default toolset 'issues'" in e for e in errors), errors
    forge = directory / "forges" / "github.yaml"
    forge.write_text(re.sub(r"(?m)^default_toolsets: \[.*\]$", "default_toolsets: [milestone]",
                            forge.read_text(encoding="utf-8")), encoding="utf-8")
    (only,) = [e for e in _errors(directory) if "default toolset" in e]
    assert "did you mean 'milestones'?" in only


def test_a_forge_file_key_the_schema_does_not_know_is_located(tmp_path: Path) -> None:
    directory = _copy(tmp_path, "github_milestones.yaml")
    forge = directory / "forges" / "github.yaml"
    forge.write_text(forge.read_text(encoding="utf-8").replace("default_toolsets:", "default_toolset:"),
                     encoding="utf-8")
    proc = cli(["generate", "--quiet", "--overrides", str(directory / "github_milestones.yaml"),
                "--out", str(tmp_path / "generated")], cwd=tmp_path)
    # --overrides regenerates one package: the forge file is read but its package is not written
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown key 'default_toolset'" in proc.stderr and "did you mean 'default_toolsets'?" in proc.stderr
    assert not (tmp_path / "generated").exists()


def test_a_repair_naming_another_files_tool_is_checked_against_that_file(tmp_path: Path) -> None:
    """Issue 34: is_pull_request's repair names github_get_pull_request, a tool of the
    pull_requests toolset (github_pulls.yaml); built with its forge, the name, the toolset and the
    arguments are checked against that file's tool."""
    directory = _copy(tmp_path, "github_sub_issues.yaml", "github_pulls.yaml")
    path = directory / "github_sub_issues.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count("tool: github_get_pull_request, toolset: pull_requests") == 3
    path.write_text(text.replace("tool: github_get_pull_request, toolset: pull_requests",
                                 "tool: github_get_pull_request, toolset: repos", 1)
                    .replace("tool: github_get_pull_request, toolset: pull_requests",
                             "tool: github_read_pull_request, toolset: pull_requests", 1)
                    .replace("pull_number: \"{blocked_by_issue_number}\"", "number: \"{blocked_by_issue_number}\"", 1),
                    encoding="utf-8")
    errors = [e for e in _errors(directory) if "[repair-" in e]
    assert any("is in toolset 'repos'; it is in 'pull_requests'" in e for e in errors), errors
    assert any("'github_read_pull_request', which is not a tool" in e for e in errors), errors
    assert any("[repair-arguments]" in e and "'number' is not a parameter" in e for e in errors), errors
    assert all(e.startswith("overrides/github_sub_issues.yaml:") for e in errors), errors
