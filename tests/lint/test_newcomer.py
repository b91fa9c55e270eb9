"""Issue 31: the newcomer's pull-request server. Its six declarations that broke at run time are
each refused by `python -m generator generate` (exit 2, every one located, nothing written), and
the catalog of the server declared right lists only the codes its tools can still emit."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from lint_support import CASES, PULLS, base_inputs, load_case, replaced

from generator.pipeline.generate import generate
from generator.spec.pinned import REPO_ROOT

SIX = ["param-values", "binding-paths", "output-shapes", "lockdown-repository", "recover-write",
       "confirm-destructive", "error-reach"]  # the sixth mistake is two (confirm, catalog)
LOCATED = re.compile(r"^tests/lint/fixture/pulls/\S+\.yaml:(\d+):(\d+): error \[([a-z-]+)\]", re.MULTILINE)


def test_every_wrong_declaration_at_once_exits_2_located_and_writes_nothing(tmp_path: Path) -> None:
    text = PULLS.read_text(encoding="utf-8")
    for rule in SIX:
        for edit in load_case(CASES / f"{rule}.yaml")["replace"]:
            if edit["old"] in text:  # two cases may touch one line; each keeps its own mistake
                text = replaced(text, edit["old"], edit["new"])
    wrong = PULLS.with_name("newcomer.yaml")  # beside the fixture: locations name the file
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("hands off\n", encoding="utf-8")
    wrong.write_text(text, encoding="utf-8")
    try:
        done = subprocess.run([sys.executable, "-m", "generator", "generate", "--overrides", str(wrong),
                               "--out", str(out)], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=120, check=False, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    finally:
        wrong.unlink()
    assert done.returncode == 2, done.stderr
    found = {rule for _, _, rule in LOCATED.findall(done.stderr)}
    assert set(SIX) <= found, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_codes_a_server_wide_rule_makes_impossible_leave_the_catalog() -> None:
    """`{when: {code: not_found}, code: pull_request_not_found}` and `{when: {status: 409},
    code: head_changed}`: no tool lists not_found or conflict; head_changed only where a write
    can answer 409."""
    files = generate(base_inputs("pulls")).files
    assert files is not None
    codes = {c["code"]: c["tools"] for c in json.loads(files["acme_pulls_mcp/errors.json"])["codes"]}
    assert "not_found" not in codes and "conflict" not in codes
    assert codes["pull_request_not_found"] == ["github_create_pull_request_review", "github_get_pull_request",
                                               "github_merge_pull_request"]
    assert codes["head_changed"] == ["github_create_pull_request", "github_create_pull_request_review",
                                     "github_merge_pull_request"]


def test_the_manifest_records_what_the_review_shows_beyond_tools_json() -> None:
    """The newcomer's verdict: a reviewer still needed TOOLS.md or handlers.py. MANIFEST.json's
    `review` now carries each tool's endpoints, error mappings with repairs, confirmation and
    idempotency, and the file's spec patches, server-wide rules and budgets."""
    files = generate(base_inputs("pulls")).files
    assert files is not None
    review = json.loads(files["acme_pulls_mcp/MANIFEST.json"])["review"]
    merge = review["tools"]["github_merge_pull_request"]
    assert merge["calls"] == ["PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge (pulls/merge)"]
    assert merge["confirm"] == {"message": "Merge this pull request into its base branch? There is no undo.",
                                "when": "always"}
    assert merge["errors"] == [{"step": "merge", "when": {"status": 405}, "code": "not_mergeable",
                                "message": "GitHub cannot merge the pull request; nothing was merged.",
                                "repair": {"next_step": "read_pull_request", "tool": "github_get_pull_request",
                                           "arguments": {"owner": "{owner}", "repo": "{repo}",
                                                         "pull_number": "{pull_number}"}}}]
    create = review["tools"]["github_create_pull_request"]["idempotency"]
    assert create["recover"] == {"call": "pulls/list", "match": {"title": "{title}", "body": "{body}"}}
    assert [r["code"] for r in review["on_error"]] == ["pull_request_not_found", "head_changed"]
    assert {p["reason"].split(" (")[0] for p in review["spec_patches"]} >= {
        "a requested team without the type its schema requires"}
    assert review["budgets"] == {"description_bytes": 600, "model_bytes": 9000, "tools_list_bytes": 14000}
