"""Bad override files through the real CLI: exit 2, every problem located and hinted, nothing written.

Each case starts from overrides/github_issues.yaml, makes one mistake, and runs
`python -m generator generate --overrides <tmp>/github_issues.yaml --out <tmp>/out` in a subprocess
(the subprocesses of this module run concurrently, once, in a module-scoped fixture).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from gen_support import OVERRIDES, cli, snapshot

BASE = OVERRIDES.read_text(encoding="utf-8")
HOOKS = OVERRIDES.with_name("github_issues_hooks.py")
SENTINEL = "hands off: the generator must not write here on failure\n"
ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error(?: \[[\w-]+\])?: (?P<msg>.*)$")


# -- editing the override text, remembering which line was touched ------------------------------


def line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def find(text: str, needle: str, after: str = "") -> int:
    """Index of `needle`, searching from the first occurrence of `after`; fails loudly."""
    start = text.index(after) if after else 0
    index = text.index(needle, start)
    return index


def line_of(text: str, needle: str, after: str = "") -> int:
    return line_at(text, find(text, needle, after))


def replace(text: str, old: str, new: str, after: str = "") -> tuple[str, int]:
    """Replace the first `old` (after `after`); returns the new text and the edited line."""
    index = find(text, old, after)
    return text[:index] + new + text[index + len(old):], line_at(text, index)


def replace_re(text: str, pattern: str, new: str, after: str = "") -> tuple[str, int]:
    """Replace the first match of `pattern` (after `after`); returns the new text and its line."""
    start = text.index(after) if after else 0
    match = re.compile(pattern).search(text, start)
    if match is None:
        raise ValueError(f"no match for {pattern!r}")
    return text[:match.start()] + new + text[match.end():], line_at(text, match.start())


def delete_line(text: str, needle: str, after: str = "") -> tuple[str, int]:
    index = find(text, needle, after)
    start = text.rindex("\n", 0, index) + 1
    end = text.index("\n", index) + 1
    return text[:start] + text[end:], line_at(text, index)


def tool_block(name: str) -> str:
    return f"  - name: {name}\n"


@dataclass(frozen=True)
class Mistake:
    """One mistake: the edited text and what the error must say, at which line(s).

    `stale` is set when the edit's anchor text is no longer in overrides/github_issues.yaml (the
    override file evolves); that case then fails alone, saying which anchor to update.
    """

    id: str
    text: str
    lines: frozenset[int]
    message: str  # regex searched in the error message
    hint: str = ""  # regex searched in the hint, when something specific is expected
    stale: str = ""



def _mistakes() -> list[Mistake]:
    t = BASE
    out: list[Mistake] = []

    def add(id: str, edit: Callable[[], tuple[str, int | set[int]]], message: str, hint: str = "") -> None:
        try:
            text, lines = edit()
        except ValueError as exc:  # str.index: an anchor is gone
            out.append(Mistake(id, BASE, frozenset(), message, hint, stale=str(exc)))
            return
        out.append(Mistake(id, text, frozenset({lines} if isinstance(lines, int) else lines), message, hint))

    labels = tool_block("github_list_labels")
    comment = tool_block("github_add_comment")
    search = tool_block("github_search_issues")

    add("unknown-key-typo",
        lambda: replace(t, "description: Exact label name, any case.",
                        "descriptoin: Exact label name, any case.", labels),
        r"unknown key 'descriptoin'", hint=r"did you mean 'description'\? .*see docs/overrides\.md#parameters")
    add("unknown-tool-key",
        lambda: replace(t, "title: List a repository's labels", "titel: List a repository's labels", labels),
        r"unknown key 'titel'", hint=r"see docs/overrides\.md#tools$")
    add("unknown-operation-id",
        lambda: replace(t, "call: issues/list-labels-for-repo", "call: issues/list-label-for-repo", labels),
        r"unknown operationId 'issues/list-label-for-repo'", hint=r"did you mean 'issues/list-labels-for-repo'")
    add("invalid-yaml-syntax",
        lambda: replace(t, "title: List a repository's labels", "title: List labels: of a repository", labels),
        r"invalid YAML")

    def duplicate_key() -> tuple[str, int]:
        line = line_of(t, "    title: List a repository's labels\n", labels)
        text = t.replace("    title: List a repository's labels\n",
                         "    title: List a repository's labels\n    title: Labels again\n", 1)
        return text, line + 1

    add("duplicate-yaml-key", duplicate_key, r"duplicate key 'title'")
    add("duplicate-tool-name",
        lambda: replace(t, "name: github_list_labels", "name: github_get_issue", labels),
        r"duplicate tool name 'github_get_issue'")
    add("parameter-mapped-to-nothing",
        lambda: replace(t, "#query.assignee\"", "#query.asignee\"", search),
        r"parameter mapped to nothing: issues/list-for-repo has no query field 'asignee'",
        hint=r"did you mean 'assignee'")
    add("mutating-tool-without-destructive",
        lambda: replace(t, "destructive: false, idempotent: false, open_world: true, why: \"appends",
                        "idempotent: false, open_world: true, why: \"appends", comment),
        r"mutating tool github_add_comment must decide destructive and idempotent")
    add("read-only-tool-with-destructive",
        lambda: replace(t, "annotations: {read_only: true,",
                        "annotations: {read_only: true, destructive: false,", labels),
        r"read-only tool github_list_labels must not set destructive")

    def patch_assertion() -> tuple[str, set[int]]:
        item = line_of(t, "  - op: replace\n    path: /components/schemas/issue/properties/state_reason/enum")
        text, expect_line = replace(t, "expect: [completed, reopened, not_planned, duplicate]",
                                    "expect: [completed, reopened]")
        return text, {item, expect_line}  # the patch, or its `expect:`

    add("spec-patch-assertion-fails", patch_assertion,
        r"spec patch assertion failed at /components/schemas/issue/properties/state_reason/enum: "
        r"expected \[\"completed\", \"reopened\"\], found")
    add("error-code-not-in-catalog",
        lambda: replace(t, "cursor_expired, rate_limited, upstream_unavailable, internal_error]",
                        "cursor_expired, rate_limited, upstream_unavailable, internal_error, repo_archived]",
                        labels),
        r"error code 'repo_archived' is not in error_codes")
    add("undeclared-emittable-code",
        lambda: replace(t, "repo_not_found, cursor_expired, rate_limited", "repo_not_found, rate_limited",
                        labels),
        r"tool github_list_labels can emit 'cursor_expired' but does not declare it")
    add("optional-param-without-omitted",
        lambda: (delete_line(t, "        omitted: Omit for any.\n", "- name: creator_login")[0],
                 line_of(t, "- name: creator_login", search)),
        r"optional parameter '?creator_login'? (must|does not) say what omitting it means")
    add("handler-not-defined",
        lambda: replace(t, "handler: search_issues", "handler: search_issue", search),
        r"handler 'search_issue' is not an async function", hint=r"did you mean 'search_issues'")
    add("operation-neither-used-nor-excluded",
        lambda: (delete_line(t, "    issues/get-event: ")[0], line_of(t, "  excluded:\n")),
        r"operation issues/get-event \(GET /repos/\{owner\}/\{repo\}/issues/events/\{event_id\}\) is "
        r"neither used by a tool nor excluded")

    def bad_example() -> tuple[str, set[int]]:
        text, example_line = replace(t, "example: {owner: octo-org, repo: roadmap}",
                                     "example: {owner: octo-org, repo: roadmap, page: 2}", labels)
        return text, {line_of(t, labels.strip()), example_line}  # the tool, or its `example:`

    add("example-does-not-validate", bad_example,
        r"github_list_labels: the example does not validate against the inputSchema")
    add("tool-name-without-prefix",
        lambda: replace(t, "name: github_list_labels", "name: list_repo_labels", labels),
        r"tool name 'list_repo_labels' lacks the service prefix 'github_'", hint=r"github_list_repo_labels")
    add("unknown-items-shape",
        lambda: replace(t, "{name: labels, items_shape: label,", "{name: labels, items_shape: labels,", labels),
        r"unknown shape 'labels'", hint=r"did you mean 'label'")
    delete = tool_block("github_delete_label")
    update = tool_block("github_update_label")
    create = tool_block("github_create_label")
    add("step-template-reads-nothing",
        lambda: replace(t, 'label:"{name|search_phrase}"', 'label:"{nmae|search_phrase}"', delete),
        r"template reads 'nmae': not a parameter or an earlier step", hint=r"did you mean 'name'")
    add("unknown-transform",
        lambda: replace(t, "transform: hex_color", "transform: hex_colour", create),
        r"unknown transform 'hex_colour'", hint=r"did you mean 'hex_color'")
    add("compare-against-unknown-step",
        lambda: replace(t, "compare: {against: current,", "compare: {against: currant,", update),
        r"compare names 'currant', not an earlier step")
    add("settle-path-not-a-path-parameter",
        lambda: replace(t, 'settle: {path: {name: "{new_name}"}}', 'settle: {path: {label: "{new_name}"}}', update),
        r"issues/get-label has no path parameter 'label'", hint=r"owner, repo, name")
    add("settle-reads-a-step",
        lambda: replace(t, 'settle: {path: {name: "{new_name}"}}', 'settle: {path: {name: "{current.name}"}}',
                        update),
        r"template reads 'current': not a parameter or an earlier step")
    add("settle-without-compare",
        lambda: replace(t, "settle: {against: current, find:", "settle: {find:", delete),
        r"settle needs `compare` against an earlier read on the same step, on a delete `against`")
    add("settle-against-no-step",
        lambda: replace(t, "settle: {against: current,", "settle: {against: currant,", delete),
        r"settle needs `compare` against an earlier read")
    add("settle-find-unknown",
        lambda: replace(t, "find: issues/list-labels-for-repo}", "find: issues/list-labels-for-rep}", delete),
        r"unknown operationId 'issues/list-labels-for-rep'", hint=r"did you mean 'issues/list-labels-for-repo'")
    add("settle-find-no-listing",
        lambda: replace(t, "find: issues/list-labels-for-repo}", "find: issues/get}", delete),
        r"issues/get does not list rows with an `id`|issues/get needs path parameters")
    add("step-query-field-unknown",
        lambda: replace(t, "per_page: 1}", "per_pag: 1}", delete),
        r"search/issues-and-pull-requests has no query field 'per_pag'", hint=r"did you mean 'per_page'")
    add("paginate-unknown-cursor",
        lambda: replace(t, "paginate: {cursor: cursor, page_size: 100}", "paginate: {cursor: cursr, page_size: 100}",
                        labels),
        r"paginate names unknown parameter 'cursr'")
    add("declared-repair-names-no-tool",
        lambda: replace(t, "repair: {next_step: list_labels, tool: github_list_labels,",
                        "repair: {next_step: list_labels, tool: github_list_label,", update),
        r"a repair names 'github_list_label', which is not a tool")
    add("declared-repair-argument-invalid",
        lambda: (replace(t, 'arguments: {owner: "{owner}", repo: "{repo}", state: all}\n',
                         'arguments: {owner: "{owner}", repo: "{repo}", state: everything}\n', delete)[0],
                 line_of(t, "repair: &review_then_force", delete)),
        r"github_delete_label: repair with github_search_issues: argument 'state': 'everything' is not one of")
    add("declared-output-without-from",
        lambda: replace(t, "{name: deleted_label, shape: label, from: current}", "{name: deleted_label, shape: label}",
                        delete),
        r"output 'deleted_label' of a declared tool needs `from`")
    add("unknown-component-schema",
        lambda: replace(t, "sources: [label]", "sources: [labell]"),
        r"unknown component schema 'labell'", hint=r"did you mean 'label'")
    add("rule-names-unknown-parameter",
        lambda: replace(t, "fields: [owner, repo], reason: owner and repo go together",
                        "fields: [owner, repos], reason: owner and repo go together", search),
        r"rule names unknown parameter 'repos'")
    add("rule-equals-outside-requires",
        lambda: replace(t, "fields: [owner, repo], reason: owner and repo go together",
                        "fields: [owner, repo], equals: true, reason: owner and repo go together", search),
        r"equals applies to requires rules, not all_or_none")
    add("required-when-without-when",
        lambda: replace(t, "{kind: requires, when: lock_reason, fields: [locked], equals: true,",
                        "{kind: required_when, fields: [locked],"),
        r"required_when needs `when`: a parameter, or \{parameter: value\(s\)\}")
    add("required-when-naming-its-condition",
        lambda: replace(t, "{kind: requires, when: lock_reason, fields: [locked], equals: true,",
                        "{kind: required_when, when: {locked: true}, fields: [locked],"),
        r"required_when names its `when` parameter among its fields")
    add("condition-value-on-requires",
        lambda: replace(t, "{kind: requires, when: lock_reason, fields: [locked], equals: true,",
                        "{kind: requires, when: {lock_reason: spam}, fields: [locked],"),
        r"`when: \{parameter: value\}` applies to required_when and forbidden_when rules")
    add("required-when-value-outside-enum",
        lambda: replace(t, "{kind: requires, when: lock_reason, fields: [locked], equals: true,",
                        "{kind: forbidden_when, when: {lock_reason: rude}, fields: [locked],"),
        r"the value compared 'rude' is not a value of parameter 'lock_reason'")
    add("enum-value-github-rejects",
        lambda: replace(t, "enum: [created, updated, comments]", "enum: [created, updated, comments, votes]",
                        search),
        r"enum values \['votes'\] are not accepted by GitHub")

    def type_contradiction() -> tuple[str, int]:
        text, line = replace(t, "from: \"issues/create#body.body\"\n",
                             "from: \"issues/create#body.body\"\n        type: integer\n")
        return text, line + 1  # the inserted `type:` line

    add("type-contradicts-spec", type_contradiction, r"type 'integer' contradicts the spec's 'string'")
    add("wrong-value-type",
        lambda: replace_re(t, r"tools_budget_bytes: \d+", "tools_budget_bytes: lots"),
        r"server\.tools_budget_bytes: Input should be a valid integer")
    add("hooks-module-missing",
        lambda: replace(t, "hooks: github_issues_hooks.py", "hooks: github_issue_hooks.py"),
        r"hook module .*github_issue_hooks\.py does not exist")

    created = tool_block("github_create_issue")
    add("resolve-match-not-a-row-field",
        lambda: replace(t, "match: title", "match: titel", created),
        r"'titel' is not a field of issues/list-milestones's rows")
    add("resolve-value-of-a-type-the-parameter-refuses",
        lambda: replace(t, "value: number", "value: title", created),
        r"'title' is a string, not an id parameter 'milestone' takes \(integer\)")
    add("resolve-not-a-listing",
        lambda: replace(t, "call: issues/list-milestones\n          query: {state: open}",
                        "call: issues/get-milestone\n          query: {state: open}", created),
        r"issues/get-milestone is not a listing")
    add("resolve-without-a-string-type",
        lambda: replace(t, "type: [integer, string]", "type: integer", created),
        r"parameter 'milestone' resolves names but does not take both a string and an id")
    add("resolve-unknown-error-code",
        lambda: replace(t, "            code: milestone_not_found\n            message: \"No open",
                        "            code: milestone_missing\n            message: \"No open", created),
        r"resolve.unknown needs a declared error code, not 'milestone_missing'")
    add("include-a-summary-field",
        lambda: replace(t, "include: [state_reason], omit: [preview, updated_at]}",
                        "include: [state_reason, labels], omit: [preview, updated_at]}", created),
        r"'labels' is a summary field: every row has it")
    add("omit-an-unknown-field",
        lambda: replace(t, "omit: [preview, updated_at]}", "omit: [previews, updated_at]}", created),
        r"'previews' is not a field of shape 'issue'", hint=r"did you mean 'preview'")
    bulk = tool_block("github_update_issues")
    add("batch-each-unknown",
        lambda: replace(t, "each: github_update_issue\n", "each: github_updte_issue\n", bulk),
        r"'github_updte_issue' is not a tool of this server", hint=r"did you mean 'github_update_issue'")
    add("batch-item-not-a-parameter",
        lambda: replace(t, "item: issue_number\n", "item: number\n", bulk),
        r"'number' is not a parameter of github_update_issue")
    add("batch-argument-unknown",
        lambda: replace(t, 'state_reason: "{state_reason}",', 'reason: "{state_reason}",', bulk),
        r"github_update_issue has no parameter 'reason'", hint=r"did you mean '(state|lock)_reason'")
    add("batch-source-not-a-listing",
        lambda: replace(t, "tool: github_search_issues\n", "tool: github_get_issue\n", bulk),
        r"github_get_issue is not a paged listing")
    add("batch-outside-the-toolset-of-its-item-tool",
        lambda: replace(t, "    toolset: issues\n", "    toolset: labels\n", bulk),
        r"github_update_issue is in toolset 'issues', this batch in 'labels'",
        hint=r"put the batch in the toolset of the tools it runs")
    add("batch-declares-outputs",
        lambda: replace(t, "    batch:\n", "    output: [{name: x, type: string}]\n    batch:\n", bulk),
        r"batch tool github_update_issues declares outputs", hint=r"drop `output`")
    add("confirm-reads-unknown-parameter",
        lambda: replace(t, "when: {delete_mode: force}", "when: {delete_mod: force}",
                        tool_block("github_delete_label")),
        r"confirm names unknown parameter 'delete_mod'")
    add("compare-path-not-in-the-returned-shape",
        lambda: replace(t, "fields: {new_name: name, color: color, description: description}",
                        "fields: {new_name: name, color: color, description: default}", update),
        r"'default' is not a field of shape 'label'", hint=r"changed_fields names it")

    def patch_path_missing() -> tuple[str, set[int]]:
        text, line = replace(t, "path: /components/schemas/issue/properties/state_reason/enum",
                             "path: /components/schemas/issue/properties/state_reasons/enum")
        return text, {line, line - 1}  # the `path:` line, or the patch item above it

    add("spec-patch-path-missing", patch_path_missing,
        r"spec patch path /components/schemas/issue/properties/state_reasons/enum does not exist")
    add("lockdown-withholds-a-required-field",
        lambda: replace(t, "withhold: [preview, body]", "withhold: [title, body]", "  issue:\n"),
        r"field 'title' is required in every row, so withholding it would break the output schema",
        hint=r"withhold only optional fields")
    add("lockdown-path-missing",
        lambda: replace(t, "author: user.login", "author: user.nickname", "  issue:\n"),
        r"path 'user.nickname' does not exist in 'issue'")
    add("reserved-row-field",
        lambda: replace(t, "{name: color, from: color, detail: summary}",
                        "{name: hidden_removed, from: color, detail: summary}", "  label:\n"),
        r"'hidden_removed' is a row field the runtime adds")
    add("batch-shows-unknown-field",  # issue 34: a changed item's row shows the item tool's answer
        lambda: replace(t, "fields: [state, state_reason, labels, assignees, milestone]",
                        "fields: [state, state_reason, labels, assignees, milestones]"),
        r"github_update_issue's issue has no field 'milestones'", hint=r"did you mean 'milestone'\?")
    add("batch-comment-body-unknown",
        lambda: replace(t, "        body: body\n        arguments: {owner", "        body: text\n        arguments: {owner"),
        r"github_add_comment has no parameter 'text'")
    add("stored-as-sent-always-present",  # absent when the text was kept as sent (issue 34)
        lambda: (replace(t, "{name: stored_as_sent, type: boolean, optional: true}",
                         "{name: stored_as_sent, type: boolean}")[0],
                 {line_at(t, m.start()) for m in re.finditer(r"\bstored: \{", t)}),  # every write step sending text
        r"stored fills the output 'stored_as_sent' only when GitHub keeps the text otherwise than sent",
        hint=r"declare 'stored_as_sent' with optional: true")
    return out


MISTAKES = _mistakes()


@dataclass(frozen=True)
class Run:
    proc: subprocess.CompletedProcess[str]
    overrides: Path
    out: Path
    before: dict[str, bytes]


def _prepare(root: Path, text: str, hooks: str | None = None) -> tuple[Path, Path]:
    root.mkdir(parents=True)
    overrides = root / "github_issues.yaml"
    overrides.write_text(text, encoding="utf-8")
    (root / HOOKS.name).write_text(hooks if hooks is not None else HOOKS.read_text(encoding="utf-8"),
                                   encoding="utf-8")
    for part in HOOKS.parent.glob(f"{HOOKS.stem}_*.py"):  # the hooks' own modules (hook parts)
        shutil.copy(part, root / part.name)
    out = root / "out"
    (out / "github_issues_mcp").mkdir(parents=True)
    (out / "SENTINEL.txt").write_text(SENTINEL, encoding="utf-8")
    (out / "github_issues_mcp" / "server.py").write_text("# stale\n", encoding="utf-8")
    return overrides, out


def _run(root: Path, text: str) -> Run:
    overrides, out = _prepare(root, text)
    before = snapshot(out)
    proc = cli(["generate", "--overrides", str(overrides), "--out", str(out)], cwd=root)
    return Run(proc, overrides, out, before)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    base = tmp_path_factory.mktemp("diagnostics")
    jobs: dict[str, tuple[Path, str]] = {m.id: (base / m.id, m.text) for m in MISTAKES if not m.stale}
    jobs["all-at-once"] = (base / "all-at-once", MULTI_TEXT)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {k: pool.submit(_run, root, text) for k, (root, text) in jobs.items()}
        return {k: f.result() for k, f in futures.items()}


def errors_in(stderr: str) -> list[re.Match[str]]:
    return [m for line in stderr.splitlines() if (m := ERROR_LINE.match(line))]


def hint_after(stderr: str, match: re.Match[str]) -> str:
    lines = stderr.splitlines()
    i = lines.index(match.group(0))
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    return nxt.strip().removeprefix("hint: ") if nxt.strip().startswith("hint: ") else ""


def test_there_are_enough_distinct_mistakes() -> None:
    assert len({m.id for m in MISTAKES}) >= 16
    assert all(m.text != BASE for m in MISTAKES if not m.stale)


def test_the_unedited_file_generates(tmp_path: Path) -> None:
    from generator.pipeline.generate import generate, load_inputs

    overrides, _ = _prepare(tmp_path / "ok", BASE)
    result = generate(load_inputs(overrides))
    assert result.files is not None, [d.render() for d in result.diagnostics]


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.id)
def test_mistake_is_reported_precisely(mistake: Mistake, runs: dict[str, Run]) -> None:
    assert not mistake.stale, (
        f"overrides/github_issues.yaml changed: this case's anchor is gone ({mistake.stale}); "
        "update the edit in tests/generator/test_diagnostics.py")
    run = runs[mistake.id]
    stderr = run.proc.stderr
    assert run.proc.returncode == 2, stderr
    assert "Traceback" not in stderr and "Traceback" not in run.proc.stdout
    found = [m for m in errors_in(stderr) if re.search(mistake.message, m.group("msg"))]
    assert found, f"no error matching {mistake.message!r} in:\n{stderr}"
    hit = found[0]
    assert hit.group("file") == str(run.overrides), stderr
    assert int(hit.group("line")) in mistake.lines, (
        f"error at line {hit.group('line')}, expected one of {sorted(mistake.lines)}:\n{stderr}")
    assert int(hit.group("col")) >= 1
    hint = hint_after(stderr, hit)
    assert hint, f"no hint under {hit.group(0)!r}"
    if mistake.hint:
        assert re.search(mistake.hint, hint), hint
    assert "nothing was written" in stderr
    assert snapshot(run.out) == run.before  # untouched: no file written, changed or deleted


# -- several mistakes at once ---------------------------------------------------------------

MULTI_IDS = (
    "unknown-operation-id", "parameter-mapped-to-nothing", "mutating-tool-without-destructive",
    "error-code-not-in-catalog", "optional-param-without-omitted", "handler-not-defined",
    "operation-neither-used-nor-excluded", "spec-patch-assertion-fails", "tool-name-without-prefix",
)


def _line_edit(old: str, new: str) -> tuple[int, int, list[str]]:
    """The differing middle of two texts as (first line, end line, replacement lines), 0-based."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return start, len(a) - end, b[start:len(b) - end]


def _multi() -> str:
    """Every mistake of MULTI_IDS applied to one file (edits are disjoint line ranges)."""
    by_id = {m.id: m for m in MISTAKES}
    edits = sorted((_line_edit(BASE, by_id[mid].text) for mid in MULTI_IDS), reverse=True)
    lines = BASE.splitlines(keepends=True)
    previous_start = len(lines) + 1
    for start, end, replacement in edits:
        assert end <= previous_start, "overlapping edits"
        lines[start:end] = replacement
        previous_start = start
    return "".join(lines)


MULTI_TEXT = _multi()


def test_all_problems_of_a_file_are_reported_at_once(runs: dict[str, Run]) -> None:
    run = runs["all-at-once"]
    stderr = run.proc.stderr
    assert run.proc.returncode == 2, stderr
    assert "Traceback" not in stderr
    errors = errors_in(stderr)
    by_id = {m.id: m for m in MISTAKES}
    for mid in MULTI_IDS:
        assert any(re.search(by_id[mid].message, e.group("msg")) for e in errors), (mid, stderr)
    summary = re.search(r"^(\d+) error\(s\), (\d+) warning\(s\)$", stderr, re.M)
    assert summary, stderr
    printed = len([ln for ln in stderr.splitlines() if re.match(r"^\S.*: error(?: \[[\w-]+\])?: ", ln)])
    assert int(summary.group(1)) == printed >= len(MULTI_IDS)
    lines = [int(e.group("line")) for e in errors if e.group("file") == str(run.overrides)]
    assert lines == sorted(lines)  # compiler-style: in file order
    assert snapshot(run.out) == run.before


# -- edges of the CLI -----------------------------------------------------------------------


def test_missing_overrides_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = cli(["generate", "--overrides", str(tmp_path / "nope.yaml"), "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "nope.yaml" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_corrupt_spec_is_refused_cleanly(tmp_path: Path) -> None:
    from generator.spec.pinned import SPEC_DIR

    spec = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, spec)
    pinned = (spec / "PINNED.json").read_text(encoding="utf-8")
    (spec / "PINNED.json").write_text(re.sub(r'"sha256": "[0-9a-f]+"', '"sha256": "' + "0" * 64 + '"',
                                             pinned), encoding="utf-8")
    out = tmp_path / "out"
    proc = cli(["check", "--spec-dir", str(spec), "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "does not match the pinned" in proc.stderr and "make update-spec" in proc.stderr
    assert not out.exists()


def test_an_unknown_key_suggests_the_intended_one(runs: dict[str, Run]) -> None:
    stderr = runs["unknown-key-typo"].proc.stderr
    assert "remove the key or fix its spelling" in stderr


def test_an_unknown_key_suggests_the_closest_known_key(runs: dict[str, Run]) -> None:
    assert "did you mean 'description'" in runs["unknown-key-typo"].proc.stderr


def test_repair_to_a_missing_tool_is_located_in_the_hooks(tmp_path: Path) -> None:
    # the search hook's repair names github_search_issues (the update hook, which named
    # github_list_labels, is a declaration now)
    text, _ = replace(BASE, "name: github_search_issues", "name: github_find_issues",
                      tool_block("github_search_issues"))
    text = text.replace("tool: github_search_issues", "tool: github_find_issues")
    run = _run(tmp_path / "repair", text)
    assert run.proc.returncode == 2
    hooks = HOOKS.read_text(encoding="utf-8")
    want = line_of(hooks, 'repair("narrow_query", "github_search_issues"')
    located = [m for m in errors_in(run.proc.stderr)
               if "which is not a tool" in m.group("msg") and m.group("file").endswith(HOOKS.name)]
    assert located and located[0].group("file").endswith(HOOKS.name), run.proc.stderr
    assert int(located[0].group("line")) == want


def test_a_regression_above_the_committed_surface_fails_the_budget(tmp_path: Path) -> None:
    """The budget sits just above what the server publishes: one sentence more fails generation."""
    sentence = (" Comments are returned oldest first, thirty to a page, and every page carries the"
                " cursor that leads to the next one until none is left.")
    text, _ = replace(BASE, "Read one issue and its comments", "Read one issue and its comments" + sentence)
    run = _run(tmp_path / "regression", text)
    assert run.proc.returncode == 2, run.proc.stderr
    budget = [m for m in errors_in(run.proc.stderr) if "[budget-total]" in m.group(0)]
    assert len(budget) == 1, run.proc.stderr
    declared = int(re.search(r"(?m)^  tools_budget_bytes: (\d+)$", BASE).group(1))  # type: ignore[union-attr]
    assert re.search(rf"tools/list is [\d,]+ bytes \([\d,]+ per tool\), over the budget of {declared:,} "
                     r"\([\d,]+ per tool\)", budget[0].group("msg")), budget[0].group("msg")
    assert "budget-description" not in run.proc.stderr  # the description itself still fits
    assert snapshot(run.out) == run.before  # nothing written


def test_without_a_declared_budget_the_whole_tools_list_is_reported_not_enforced(tmp_path: Path) -> None:
    """What a model reads is the budget (budget-model); the whole tools/list, output schemas
    included, is printed beside it and fails nothing unless the file declares a budget for it."""
    text, _ = replace_re(BASE, r"(?m)^  tools_budget_bytes: \d+\n", "")
    run = _run(tmp_path / "default-budget", text)
    assert run.proc.returncode == 0, run.proc.stderr
    whole = re.search(r"(?m)^total tools/list +\d+ +(\d+) .*reported, not enforced$", run.proc.stdout)
    seen = re.search(r"(?m)^model-visible \(no outputs\) +(\d+) .*budget (\d+) ", run.proc.stdout)
    assert whole and seen, run.proc.stdout
    tools = len(re.findall(r"(?m)^  - name: ", BASE))
    assert int(whole.group(1)) > 2000 * tools  # the old default would have refused it
    assert int(seen.group(1)) <= int(seen.group(2))


def test_model_visible_budget_counts_name_description_and_input_schema_only(tmp_path: Path) -> None:
    """budget-model: what a model reads (outputSchemas stay with the client), located at its key."""
    declared = int(re.search(r"(?m)^  model_budget_bytes: (\d+)$", BASE).group(1))  # type: ignore[union-attr]
    text, line = replace_re(BASE, r"model_budget_bytes: \d+", f"model_budget_bytes: {declared - 400}")
    run = _run(tmp_path / "model-budget", text)
    assert run.proc.returncode == 2, run.proc.stderr
    found = [m for m in errors_in(run.proc.stderr) if "[budget-model]" in m.group(0)]
    assert len(found) == 1 and int(found[0].group("line")) == line, run.proc.stderr
    assert re.search(rf"model-visible tools/list \(name, description, inputSchema\) is [\d,]+ bytes "
                     rf"\([\d,]+ per tool\), over the budget of {declared - 400:,}", found[0].group("msg"))
    assert "[budget-total]" not in run.proc.stderr  # the whole tools/list still fits its own budget
    assert snapshot(run.out) == run.before


def test_budget_overrun_is_located(tmp_path: Path) -> None:
    text, line = replace_re(BASE, r"tools_budget_bytes: \d+", "tools_budget_bytes: 2000")
    run = _run(tmp_path / "budget", text)
    assert run.proc.returncode == 2
    assert "over the budget" in run.proc.stderr
    located = [m for m in errors_in(run.proc.stderr) if "over the budget" in m.group("msg")]
    assert located and int(located[0].group("line")) == line, run.proc.stderr

