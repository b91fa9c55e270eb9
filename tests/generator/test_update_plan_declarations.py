"""Bad declarations of the update plan (`update:` on a write step), of the rule kinds not_blank,
excludes, distinct and disjoint, of an output's `local` rows, of `resolve.check` and of
names_exist's catalog keys: each is a located error (line and column of the key at fault, with a
hint) and nothing is generated; the command line exits 2 with generated/ untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.pipeline.generate import generate, load_inputs
from generator.spec.pinned import REPO_ROOT
from tests.generator.gen_support import cli, snapshot

ISSUES = REPO_ROOT / "overrides" / "github_issues.yaml"
TEXT = ISSUES.read_text(encoding="utf-8")


def located(tmp_path: Path, text: str) -> list[tuple[int, int, str, str]]:
    """(line, column, message, hint) of every error; the spec and hooks resolve beside the file."""
    path = tmp_path / "github_issues.yaml"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "github_issues_hooks.py").write_text(
        (REPO_ROOT / "overrides" / "github_issues_hooks.py").read_text(encoding="utf-8"), encoding="utf-8")
    result = generate(load_inputs(path))
    assert result.files is None, "expected generation to fail"
    return [(d.where.line, d.where.col, d.message, d.hint) for d in result.diagnostics if d.level.value == "error"]


def once(old: str, new: str) -> str:
    assert TEXT.count(old) == 1, old
    return TEXT.replace(old, new)


def line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


UPDATE = "        update:\n          against: current\n"
CASES = [
    # (old, new, message, the text whose line the error points at)
    ("          against: current\n          noun: issue",
     "          against: known\n          noun: issue",
     "update.against names 'known', not an earlier read step", "against: known"),
    ("            lock_reason: active_lock_reason\n          sent_with:",
     "          sent_with:",
     "'lock_reason' needs a shows entry naming one field of the resource", "- {param: locked, on_true"),
    ("            milestone: milestone.number\n", "",
     "the PATCH sends 'milestone' (body field 'milestone'), which shows does not list", "shows:   #"),
    ("            title: {from: title, normalize: trim}", "            title: {from: title, normalize: trimmed}",
     "unknown transform 'trimmed'", "normalize: trimmed"),
    ("state_reason: {lead: state,", "state_reason: {lead: status,",
     "sent_with names 'status', not a body field bound to a parameter", "lead: status"),
    ("          exact: [known]", "          exact: [current]",
     "exact names 'current', not an earlier names_exist step", "exact: [current]"),
    ("            - view: labels\n", "            - view: title\n",
     "set view 'title' is not a shows entry of the form list[].key", "view: title"),
    ("add: {param: add_labels, call: issues/add-labels, body: labels,",
     "add: {param: title, call: issues/add-labels, body: labels,",
     "add names 'title', not an array parameter", "param: title, call: issues/add-labels"),
    ("remove: {param: remove_labels, call: issues/remove-label, each: name,",
     "remove: {param: remove_labels, call: issues/remove-label, each: name, body: labels,",
     "remove needs `each` (one request per member) or `body` (one for all), not both",
     "param: remove_labels, call: issues/remove-label"),
    ("call: issues/remove-label, each: name,", "call: issues/remove-label, each: label,",
     "issues/remove-label has no path parameter 'label'", "each: label"),
    ("call: issues/add-labels, body: labels,", "call: issues/add-labels, body: names,",
     "issues/add-labels has no body field 'names'", "body: names"),
    ("add: {param: add_labels, call: issues/add-labels,", "add: {param: add_labels, call: issues/add-label,",
     "unknown operationId 'issues/add-label'", "call: issues/add-label,"),
    ("answer: \"\", done: label_not_found}", "answer: \"\", done: label_gone}",
     "error code 'label_gone' is not in error_codes", "done: label_gone"),
    ("on_true: issues/lock, on_false: issues/unlock, reason: lock_reason",
     "on_true: issues/lock, on_false: issues/unlock, reason: state",
     "issues/lock has no body field 'state'", "on_false: issues/unlock, reason: state"),
    ("            param: expected_version\n            shape: issue",
     "            param: expected_version\n            shape: comment",
     "shape 'comment' declares no version", "shape: comment\n            repair"),
    ("        call: issues/update\n        stored: {title: title, body: body}",
     "        call: issues/update\n        compare: {against: current, fields: {title: title}}\n"
     "        stored: {title: title, body: body}",
     "a step with update takes no compare", "compare: {against: current, fields: {title: title}}"),
    ("- when: {code: invalid_field, field: milestone}   # deleted after it was checked",
     "- when: {code: invalid_field, field: milestone}   # deleted after it was checked\n            skip: true",
     "an update's PATCH cannot skip a failure", "skip: true"),
    # rules
    ("{kind: not_blank, fields: [title],", "{kind: not_blank, fields: [locked],",
     "not_blank needs string parameters; 'locked' is boolean", "kind: not_blank"),
    ("values: [closed, reopened]", "values: [closed]",
     "excludes needs one value per field (2), got 1", "values: [closed]"),
    ("{kind: disjoint, fields: [add_assignees, remove_assignees], normalize: fold,",
     "{kind: disjoint, fields: [add_assignees, remove_assignees], normalize: folded,",
     "unknown transform 'folded'", "normalize: folded"),
    ("{kind: not_blank, fields: [title], reason: only whitespace,",
     "{kind: not_blank, fields: [title], values: [x], reason: only whitespace,",
     "values applies to excludes rules, not not_blank", "values: [x]"),
    ("{kind: not_blank, fields: [title], reason: only whitespace,",
     "{kind: distinct, fields: [title], reason: x}\n      - {kind: not_blank, fields: [title], reason: only whitespace,",
     "distinct compares two or more parameters", "kind: distinct"),
    # a set's max limits its add (B02)
    ("              add: {param: add_assignees, call: issues/add-assignees, body: assignees, answer: assignees}\n", "",
     "set 'assignee_logins' has a max but no add", "max: 10"),
    # local rows (S2)
    ("{name: comments, items_shape: comment, from: comments}",
     "{name: comments, items_shape: comment, from: comments, local: {repository: repository_url, fields: [number]}}",
     "'number' is not a field of these rows", "local: {repository"),
    # resolve.check
    ("            call: issues/get-milestone\n            path: {milestone_number: \"{milestone}\"}",
     "            call: issues/update-milestone\n            path: {milestone_number: \"{milestone}\"}",
     "issues/update-milestone is not a read (GET)", "call: issues/update-milestone"),
    ("            path: {milestone_number: \"{milestone}\"}\n            unknown:\n              code: milestone_not_found",
     "            path: {milestone_number: \"{milestone}\"}\n            unknown:\n              code: milestone_missing",
     "check.unknown needs a declared error code, not 'milestone_missing'", "code: milestone_missing"),
    # names_exist
    ("lookup: issues/check-user-can-be-assigned, lookup_param: assignee,",
     "lookup: issues/check-user-can-be-assigned, lookup_param: login,",
     "issues/check-user-can-be-assigned has no path parameter 'login'", "lookup_param: login"),
]


@pytest.mark.parametrize(("old", "new", "message", "at"), CASES, ids=[c[2][:40] for c in CASES])
def test_a_bad_declaration_is_a_located_error_with_a_hint(tmp_path: Path, old: str, new: str, message: str,
                                                          at: str) -> None:
    text = once(old, new)
    found = located(tmp_path, text)
    hits = [f for f in found if message in f[2]]
    assert hits, found
    line, col, _, hint = hits[0]
    assert line == line_of(text, at) and col >= 1 and hint, hits[0]


def test_the_command_line_exits_2_and_leaves_the_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    (out / "github_issues_mcp").mkdir(parents=True)
    (out / "github_issues_mcp" / "server.py").write_text("# the last good generation\n", encoding="utf-8")
    before = snapshot(out)
    bad = tmp_path / "github_issues.yaml"
    bad.write_text(once("          exact: [known]", "          exact: [current]"), encoding="utf-8")
    (tmp_path / "github_issues_hooks.py").write_text(
        (REPO_ROOT / "overrides" / "github_issues_hooks.py").read_text(encoding="utf-8"), encoding="utf-8")
    proc = cli(["generate", "--overrides", str(bad), "--out", str(out)])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{bad}:{line_of(bad.read_text(), 'exact: [current]')}:" in proc.stderr, proc.stderr
    assert "hint:" in proc.stderr
    assert snapshot(out) == before
