"""The breaking-change check: refused with a readable report unless declared in the override file."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from lint_support import (
    HERE,
    OVERRIDES,
    SPEC_DIR,
    base_files,
    baseline,
    compare_golden,
    mutate,
    report,
)

from generator.__main__ import main
from generator.lint.baseline import BASE_ENV
from generator.lint.breaking import Change, diff_surfaces
from generator.pipeline.generate import generate, load_inputs, read_baseline
from generator.pipeline.io import write
from generator.spec.pinned import REPO_ROOT

BREAKING_EDITS = [
    {"old": '      - name: detail\n        type: string\n        enum: [summary, full]\n'
            '        description: "summary (triage fields) or full (adds the body)."\n'
            "        omitted: Omit for full.\n", "new": ""},
    {"old": "        max_length: 256\n", "new": "        max_length: 100\n"},
    {"old": "      - {name: state, type: string}\n", "new": ""},
    {"old": '{**path, "detail": "full"}', "new": "path", "in": "hooks"},
]
DECLARATIONS = {"old": "coverage:\n", "new": (
    "breaking_changes:\n"
    "  - {kind: removed-property, tool: acme_get_issue, field: detail, reason: always full now}\n"
    "  - {kind: narrowed-bound, tool: acme_update_issue, field: title, reason: GitHub caps titles}\n"
    "  - {kind: removed-output-field, tool: acme_update_issue, reason: read state with acme_get_issue}\n"
    "\ncoverage:\n")}
RENAME = {"old": "  - name: acme_list_labels\n",
          "new": "  - name: acme_find_labels\n    renamed_from: acme_list_labels\n"}


def tool(name: str, props: dict[str, Any], required: list[str], output: dict[str, Any] | None = None,
         **hints: bool) -> dict[str, Any]:
    success = output or {"type": "object", "properties": {"request_id": {"type": "string"}},
                         "required": ["request_id"]}
    envelope = {"type": "object", "properties": {"code": {"type": "string"},
                                                 "temporary": {"type": "boolean"}}}
    return {"name": name, "inputSchema": {"type": "object", "properties": props, "required": required},
            "outputSchema": {"type": "object", "oneOf": [success, envelope]},
            "annotations": {"readOnlyHint": True, "openWorldHint": True, **hints}}


def kinds(changes: list[Change]) -> list[str]:
    return [f"{c.tool}:{c.kind}:{c.field}" for c in changes]


def test_additive_changes_are_not_breaking() -> None:
    old = [tool("x_get_a", {"a": {"type": "string", "maxLength": 10}}, [])]
    new = [tool("x_get_a", {"a": {"type": ["string", "null"], "maxLength": 20},
                            "b": {"type": "integer"}}, []),
           tool("x_get_b", {}, [])]
    assert diff_surfaces(old, new, {"x_get_a": ["c1"]}, {"x_get_a": ["c1", "c2"]}, {}) == []


def test_each_input_narrowing_is_reported() -> None:
    old = [tool("x_get_a", {"s": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "integer"},
                            "t": {"type": "string"}, "l": {"type": "array", "items": {"type": "string"}},
                            "gone": {"type": "string"}}, [])]
    new = [tool("x_get_a", {"s": {"type": "string", "enum": ["a"]}, "n": {"type": "integer", "maximum": 5},
                            "t": {"type": "integer"},
                            "l": {"type": "array", "items": {"type": "string", "pattern": "^a"}},
                            "r": {"type": "string"}}, ["n", "r"])]
    assert kinds(diff_surfaces(old, new, None, {}, {})) == [
        "x_get_a:narrowed-bound:l[]", "x_get_a:narrowed-bound:n", "x_get_a:narrowed-enum:s",
        "x_get_a:narrowed-type:t", "x_get_a:newly-required:n", "x_get_a:newly-required:r",
        "x_get_a:removed-property:gone"]


def test_output_removals_retypes_codes_and_annotations_are_reported() -> None:
    out_old = {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "string"}, "b": {"type": "integer"},
        "rows": {"type": "array", "items": {"type": "object", "properties": {"c": {"type": "string"}}}}}}
    out_new = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": ["string", "null"]}, "b": {"type": "integer"},
        "rows": {"type": "array", "items": {"type": "object", "properties": {}}}}}
    old = [tool("x_set_a", {}, [], out_old, readOnlyHint=False, destructiveHint=False,
                idempotentHint=True)]
    new = [tool("x_set_a", {}, [], out_new, readOnlyHint=False, destructiveHint=True,
                idempotentHint=False)]
    assert kinds(diff_surfaces(old, new, {"x_set_a": ["c1", "c2"]}, {"x_set_a": ["c1"]}, {})) == [
        "x_set_a:changed-annotations:destructiveHint", "x_set_a:changed-annotations:idempotentHint",
        "x_set_a:optional-output-field:b", "x_set_a:removed-error-code:c2",
        "x_set_a:removed-output-field:rows[].c", "x_set_a:retyped-output-field:a"]


def test_an_error_branch_reduced_to_its_required_names_is_not_breaking() -> None:
    """The error branch keeps naming code, message, temporary …; their property schemas going away
    removes no field a reader relied on, and a branch known by `required` is still the error branch."""
    fields = ["code", "message", "temporary"]
    typed = {"type": "object", "required": fields, "properties": {
        "code": {"type": "string"}, "message": {"type": "string"}, "temporary": {"type": "boolean"}}}
    old, new = tool("x_get_a", {}, []), tool("x_get_a", {}, [])
    old["outputSchema"]["oneOf"][1] = typed
    new["outputSchema"]["oneOf"][1] = {"required": fields}
    assert diff_surfaces(old=[old], new=[new], old_codes=None, new_codes={}, renames={}) == []
    fewer = tool("x_get_a", {}, [])
    fewer["outputSchema"]["oneOf"][1] = {"required": ["code", "temporary"]}
    assert kinds(diff_surfaces([old], [fewer], None, {}, {})) == ["x_get_a:removed-output-field:error.message"]


def test_a_removed_tool_is_a_removal_unless_renamed() -> None:
    old = [tool("x_get_a", {"p": {"type": "string"}}, [])]
    new = [tool("x_find_a", {}, [])]
    assert kinds(diff_surfaces(old, new, None, {}, {})) == ["x_get_a:removed-tool:"]
    assert kinds(diff_surfaces(old, new, None, {}, {"x_get_a": "x_find_a"})) == [
        "x_find_a:removed-property:p", "x_get_a:renamed-tool:"]


def test_a_breaking_edit_is_refused_with_a_report_grouped_by_tool() -> None:
    result = generate(mutate(BREAKING_EDITS, with_baseline=True))
    assert result.files is None
    compare_golden(HERE / "breaking" / "refused.stderr", report(result))


def test_declaring_the_breaking_changes_lets_generation_pass() -> None:
    result = generate(mutate([*BREAKING_EDITS, DECLARATIONS], with_baseline=True))
    assert [d.render() for d in result.diagnostics] == []
    assert result.files is not None
    assert result.notes == [
        "declared: acme_get_issue: removed-property detail (was string): always full now",
        "declared: acme_update_issue: narrowed-bound title (maxLength 256 -> 100): GitHub caps titles",
        "declared: acme_update_issue: removed-output-field state (was string): read state with "
        "acme_get_issue",
    ]


def test_a_rename_is_declared_by_renamed_from_and_published_in_the_summary() -> None:
    refused = generate(mutate([{"old": RENAME["old"], "new": "  - name: acme_find_labels\n"}],
                              with_baseline=True))
    assert "acme_list_labels: removed-tool" in report(refused)
    result = generate(mutate([RENAME], with_baseline=True))
    assert [d.render() for d in result.diagnostics] == []
    assert result.files is not None
    assert result.notes == ["renamed: acme_list_labels: renamed-tool (now acme_find_labels)"]
    server = result.files["acme_issues_mcp/server.py"]
    assert "Renamed tools (old name -> new name): acme_list_labels -> acme_find_labels." in server


def test_renamed_from_must_not_name_a_current_tool() -> None:
    edit = {"old": "  - name: acme_list_labels\n",
            "new": "  - name: acme_list_labels\n    renamed_from: acme_get_issue\n"}
    text = report(generate(mutate([edit], with_baseline=True)))
    assert "renamed_from names acme_get_issue, which is still a tool" in text


def test_a_changed_meaning_is_published_in_the_summary_for_a_current_tool_only() -> None:
    meaning = {"old": "coverage:\n", "new": (
        "breaking_changes:\n"
        "  - {kind: changed-meaning, tool: acme_get_issue, field: labels, reason: \"lists names, not ids.\"}\n"
        "coverage:\n")}
    result = generate(mutate([meaning], with_baseline=True))
    assert result.files is not None, [d.render() for d in result.diagnostics]
    server = result.files["acme_issues_mcp/server.py"]
    assert "Changed meanings: acme_get_issue labels: lists names, not ids." in server
    gone = {**meaning, "new": meaning["new"].replace("tool: acme_get_issue", "tool: acme_get_issues")}
    text = report(generate(mutate([gone], with_baseline=True)))
    assert "changed-meaning names acme_get_issues, which is not a tool" in text


def test_an_unreadable_committed_tools_json_is_an_error() -> None:
    broken = {**baseline(), "acme_issues_mcp/tools.json": "{not json"}
    text = report(generate(mutate([], baseline_files=broken)))
    assert "the committed acme_issues_mcp/tools.json does not parse" in text


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def _apply(path: Path, edits: list[dict[str, str]]) -> None:
    for edit in edits:
        target = path.with_name("acme_hooks.py") if edit.get("in") == "hooks" else path
        text = target.read_text(encoding="utf-8")
        assert text.count(edit["old"]) == 1
        target.write_text(text.replace(edit["old"], edit["new"]), encoding="utf-8")


def test_make_generate_refuses_a_breaking_edit_and_writes_nothing(tmp_path: Path) -> None:
    shutil.copytree(OVERRIDES.parent, tmp_path / "overrides")
    out = tmp_path / "generated"
    write(dict(base_files()), out)
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    overrides = tmp_path / "overrides" / "acme.yaml"
    _apply(overrides, BREAKING_EDITS)
    args = ["generate", "--overrides", str(overrides), "--spec-dir", str(SPEC_DIR), "--out", str(out)]
    code, _, err = _cli(args)
    assert code == 2
    assert "4 undeclared breaking change(s)" not in err  # three: the hooks edit is not breaking
    assert "3 undeclared breaking change(s) against the committed acme_issues_mcp/tools.json" in err
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before
    _apply(overrides, [DECLARATIONS])
    code, stdout, err = _cli(args)
    assert (code, err) == (0, "")
    assert "breaking change declared: acme_get_issue: removed-property detail" in stdout
    assert json.loads((out / "acme_issues_mcp" / "tools.json").read_text()) != json.loads(
        base_files()["acme_issues_mcp/tools.json"])


def test_removing_a_parameter_from_the_shipped_overrides_is_refused() -> None:
    path = REPO_ROOT / "overrides" / "github_issues.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    search = next(t for t in data["tools"] if t["name"] == "github_search_issues")
    search["params"] = [p for p in search["params"] if not (isinstance(p, dict) and p.get("name") == "creator_login")]
    inputs = load_inputs(path, baseline_dir=REPO_ROOT / "generated")
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
    result = generate(type(inputs)(inputs.spec, inputs.overrides_display, text, inputs.sources,
                                   read_baseline(REPO_ROOT / "generated")))
    assert result.files is None
    assert "github_search_issues: removed-property creator_login (was string)" in report(result)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def _committed_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    """A git repository with the fixture's override file and its generated/ committed."""
    repo = tmp_path / "repo"
    shutil.copytree(OVERRIDES.parent, repo / "overrides")
    overrides = repo / "overrides" / "acme.yaml"
    _git(repo, "init", "-q", "-b", "main")
    args = ["--overrides", str(overrides), "--spec-dir", str(SPEC_DIR), "--out", str(repo / "generated")]
    assert _cli(["generate", *args])[0] == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    return repo, args


def _unapply(path: Path, edits: list[dict[str, str]]) -> None:
    _apply(path, [{"old": e["new"], "new": e["old"]} for e in edits])


def test_declare_then_undeclare_a_breaking_change_fails_check(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline is the committed tools.json (HEAD), not the one `make generate` just wrote: a
    declaration removed after generating does not make the break acceptable."""
    monkeypatch.delenv(BASE_ENV, raising=False)
    repo, args = _committed_repo(tmp_path)
    overrides = repo / "overrides" / "acme.yaml"
    _apply(overrides, [*BREAKING_EDITS, DECLARATIONS])
    assert _cli(["generate", *args])[0] == 0
    assert _cli(["check", *args])[0] == 0
    _unapply(overrides, [DECLARATIONS])
    written = _git(repo, "diff", "--", "generated")
    for command in ("check", "generate"):
        code, _, err = _cli([command, *args])
        assert code == 2, command
        assert "3 undeclared breaking change(s) against the committed acme_issues_mcp/tools.json" in err
    assert _git(repo, "diff", "--", "generated") == written  # generate wrote nothing


def test_in_a_pull_request_the_baseline_is_the_merge_base(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Committing a declared break and then dropping the declaration passes against HEAD, but not
    against the base branch the workflow names in $GENERATOR_BASE."""
    monkeypatch.delenv(BASE_ENV, raising=False)
    repo, args = _committed_repo(tmp_path)
    overrides = repo / "overrides" / "acme.yaml"
    _git(repo, "checkout", "-q", "-b", "change")
    _apply(overrides, [*BREAKING_EDITS, DECLARATIONS])
    assert _cli(["generate", *args])[0] == 0
    _git(repo, "commit", "-q", "-am", "declared break")
    _unapply(overrides, [DECLARATIONS])
    assert _cli(["generate", *args])[0] == 0
    _git(repo, "commit", "-q", "-am", "drop the declaration")
    assert _cli(["check", *args])[0] == 0
    monkeypatch.setenv(BASE_ENV, "main")
    code, _, err = _cli(["check", *args])
    assert code == 2 and "3 undeclared breaking change(s)" in err


def test_a_server_never_committed_has_no_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated but not committed: removing a field is not a breaking change of anything released."""
    monkeypatch.delenv(BASE_ENV, raising=False)
    repo, args = _committed_repo(tmp_path)
    _git(repo, "rm", "-q", "-r", "--cached", "generated")
    _git(repo, "commit", "-q", "-m", "untrack generated")
    _apply(repo / "overrides" / "acme.yaml", BREAKING_EDITS)
    assert _cli(["generate", *args])[0] == 0


def test_a_budget_failure_prints_the_bytes_per_tool(tmp_path: Path) -> None:
    shutil.copytree(OVERRIDES.parent, tmp_path / "overrides")
    overrides = tmp_path / "overrides" / "acme.yaml"
    _apply(overrides, [{"old": "tools_budget_bytes: 12000", "new": "tools_budget_bytes: 1000"}])
    code, out, err = _cli(["generate", "--overrides", str(overrides), "--spec-dir", str(SPEC_DIR),
                           "--out", str(tmp_path / "generated")])
    assert (code, out) == (2, "")
    assert "[budget-total]" in err and "generation failed: nothing was written" in err
    table = err[err.index("acme-issues (acme_issues_mcp):"):]
    assert "budget 1000 (434%)" in table
    for name in ("acme_get_issue", "acme_update_issue", "acme_list_labels"):
        assert re.search(rf"^{name} +\d+ +\d+ ", table, re.MULTILINE), name
