"""`advertise_pattern: false`: the pattern leaves the published inputSchema for checks.json, and
a parameter without a pattern to keep back is a located error (nothing written)."""

from __future__ import annotations

import json

from lint_support import mutate, report

from generator.pipeline.generate import generate

OWNER = '''        description: Repository owner.
        required: true
        pattern: "^[A-Za-z0-9-]{1,39}$"'''


def test_the_pattern_moves_from_the_schema_to_the_checks() -> None:
    result = generate(mutate([{"old": OWNER, "new": OWNER + "\n        advertise_pattern: false"}]))
    assert result.files is not None, report(result)
    tools = {t["name"]: t for t in json.loads(result.files["acme_issues_mcp/tools.json"])["tools"]}
    checks = json.loads(result.files["acme_issues_mcp/checks.json"])["tools"]
    owner = tools["acme_get_issue"]["inputSchema"]["properties"]["owner"]
    assert owner == {"description": "Repository owner.", "type": "string"}
    assert checks["acme_get_issue"] == {"owner": {"pattern": "^[A-Za-z0-9-]{1,39}$"}}
    assert checks["acme_update_issue"] == {"owner": {"pattern": "^[A-Za-z0-9-]{1,39}$"}}  # *owner


def test_nothing_to_keep_back_is_a_located_error() -> None:
    text = report(generate(mutate([{"old": OWNER, "new": OWNER.replace(
        '        pattern: "^[A-Za-z0-9-]{1,39}$"', "        advertise_pattern: false")}])))
    assert "parameter 'owner' has no pattern to keep from the model" in text
    assert "acme.yaml:" in text and "hint: drop advertise_pattern" in text
    assert text.endswith("generation failed: nothing was written\n")
