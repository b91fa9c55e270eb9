"""Issue 38's language, declared on Forgejo's description (tests/lint/fixture/forgejo): `resolve`
on list parameters, `clear_with`, path parameters of another name, and the messages a maintainer
met instead of the problem (a list's hint, a YAML anchor's location, the cascade of one broken
step, version_of over two steps). Each problem is located and nothing is generated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.pipeline.generate import generate, load_inputs
from generator.spec.pinned import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "lint" / "fixture" / "forgejo" / "forgejo.yaml"
TEXT = FIXTURE.read_text(encoding="utf-8")


def once(old: str, new: str, text: str = TEXT) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def line_of(text: str, needle: str, start: int = 0) -> int:
    return text[:text.index(needle, start)].count("\n") + 1


def errors(tmp_path: Path, text: str) -> list[tuple[int, str, str]]:
    path = tmp_path / "forgejo.yaml"
    path.write_text(text, encoding="utf-8")
    result = generate(load_inputs(path))
    assert result.files is None, "expected generation to fail"
    return [(d.where.line, d.message, d.hint) for d in result.diagnostics if d.level.value == "error"]


def built(text: str, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "forgejo.yaml"
    path.write_text(text, encoding="utf-8")
    result = generate(load_inputs(path))
    assert result.files is not None, [d.render() for d in result.diagnostics]
    return dict(result.files)


def test_the_fixture_binds_forgejo_names_from_the_tools_parameters(tmp_path: Path) -> None:
    """`issue_number` is mapped to `issueEditIssue#path.index` once and fills `{index}` in every
    request of the tool (the read, the label requests); names resolve as a list; null goes out as 0."""
    handlers = built(TEXT, tmp_path)["forgejo_lint_fixture_mcp/handlers.py"]
    assert handlers.count('"index": "{issue_number}"') == 4  # current, update, add, remove
    assert "each=True" in handlers and 'null_as={"milestone": 0}' in handlers


def test_resolve_on_a_list_of_non_strings_says_to_make_its_items_names(tmp_path: Path) -> None:
    text = once("        items: {type: string, minLength: 1}\n", "        items: {type: integer}\n")
    found = errors(tmp_path, text)
    assert (line_of(text, "items: {type: integer}"), "list parameter 'add_labels' resolves names but its "
            "items are not strings", "declare `items: {type: string}` (names), or `type: [integer, string]` "
            "in items for names and ids") in found


def test_a_problem_in_a_shared_anchor_is_reported_at_each_use(tmp_path: Path) -> None:
    """`remove_labels` merges `add_labels`'s entry (`<<: *labels`): its error is at its own line."""
    text = once("          value: id\n          unknown: {code: label_not_found",
                "          value: title\n          unknown: {code: label_not_found")
    lines = sorted(line for line, message, _ in errors(tmp_path, text) if "'title' is not a field" in message)
    assert lines == [line_of(text, "value: title"), line_of(text, "{<<: *labels, name: remove_labels")]


def test_check_on_a_list_and_clear_with_without_null_are_refused(tmp_path: Path) -> None:
    text = once("        resolve: &label_ids\n", "        resolve: &label_ids\n          check: {call: issueGetLabel, "
                "path: {id: \"{add_labels}\"}, unknown: {code: label_not_found}}\n")
    assert any("check reads one id; 'add_labels' is a list" in m for _, m, _ in errors(tmp_path, text))
    text = once("        nullable: true\n        clear_with: 0\n", "        clear_with: 0\n")
    text = once("        null_means: null clears it.\n", "", text)
    assert (line_of(text, "clear_with: 0"), "parameter 'milestone' sends clear_with for null, but does not "
            "accept null", "add `nullable: true` and `null_means:` (e.g. null clears it)") in errors(tmp_path, text)


def test_one_broken_step_is_reported_once_not_again_by_the_outputs_reading_it(tmp_path: Path) -> None:
    text = once("          against: current\n", "          against: nowhere\n")
    messages = [m for _, m, _ in errors(tmp_path, text)]
    assert messages == ["update.against names 'nowhere', not an earlier read step"]


def test_version_of_over_two_steps_says_it_reads_exactly_one(tmp_path: Path) -> None:
    text = once("      - {name: issue, shape: issue, from: update}\n",
                "      - {name: issue, shape: issue, from: update}\n"
                "      - {name: version, type: string, from: [update, current], version_of: issue}\n")
    text = once("      - {name: labels, from: \"labels[].name\", detail: summary, untrusted: true}\n",
                "      - {name: labels, from: \"labels[].name\", detail: summary, untrusted: true}\n"
                "    version: {labels: \"labels[].id\"}\n", text)
    found = errors(tmp_path, text)
    assert [(line, m) for line, m, _ in found] == [
        (line_of(text, "version_of: issue"), "output 'version': version_of reads exactly one step, not 2")]


def test_an_issue_subresource_404_is_the_issues(tmp_path: Path) -> None:
    """`/issues/{index}/comments`: a 404 is about the issue `{index}` names (docs/overrides.md,
    "Not-found codes": a generic last parameter by the collection before it)."""
    text = once("  milestone_not_found:", "  issue_not_found: {temporary: false, description: No such issue., "
                "repair: Check the number.}\n  milestone_not_found:")
    text = once("      - id: current\n        call: issueGetIssue\n",
                "      - id: current\n        call: issueGetIssue\n      - id: thread\n        call: issueGetComments\n",
                text)
    text = once("  issueGetIssue:          {oauth: [read:issue]}\n", "  issueGetIssue:          {oauth: [read:issue]}\n"
                "  issueGetComments:       {oauth: [read:issue]}\n", text)
    errors_json = built(text, tmp_path)["forgejo_lint_fixture_mcp/errors.json"]
    assert '"issue_not_found"' in errors_json and '"not_found"' not in errors_json


def test_a_batch_over_a_broken_tool_adds_no_message_of_its_own(tmp_path: Path) -> None:
    """github_update_issues runs github_update_issue: one mistake in the latter is one error."""
    issues = REPO_ROOT / "overrides" / "github_issues.yaml"
    text = once("          against: current\n          noun: issue", "          against: known\n          noun: issue",
                issues.read_text(encoding="utf-8"))
    path = tmp_path / "github_issues.yaml"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "github_issues_hooks.py").write_text(issues.with_name("github_issues_hooks.py").read_text(
        encoding="utf-8"), encoding="utf-8")
    result = generate(load_inputs(path))
    assert [d.message for d in result.diagnostics if d.level.value == "error"] == [
        "update.against names 'known', not an earlier read step"]
