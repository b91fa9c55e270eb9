"""What reached run time before issue 22 is decided at generation time: a shape field is nullable
when GitHub's schema lets the value be missing (or `nullable:` says so), every required request
field is sent whenever its step runs, and GitHub's documented answers fit the outputSchema.
(The failing goldens are tests/lint/cases/required-binding.* and example-output.*.)"""

from __future__ import annotations

import json
from typing import Any

import yaml
from lint_support import CASES, mutate, report

from generator.pipeline.generate import generate

REACTIONS = {"old": "      - {name: body, from: body, detail: full}",
             "new": "      - {name: body, from: body, detail: full}\n"
                    "      - {name: reactions, from: reactions.total_count, detail: full{extra}}"}
DECLARED_GET = yaml.safe_load((CASES / "example-output.yaml").read_text(encoding="utf-8"))["replace"][1:]
COMMENT_TOOL = yaml.safe_load((CASES / "required-binding.yaml").read_text(encoding="utf-8"))["replace"]


def _issue_row(extra: str) -> tuple[str, dict[str, Any] | None]:
    edit = {"old": REACTIONS["old"], "new": REACTIONS["new"].replace("{extra}", extra)}
    result = generate(mutate([edit, *DECLARED_GET]))
    if result.files is None:
        return report(result), None
    tools = json.loads(result.files["acme_issues_mcp/tools.json"])["tools"]
    get = next(t for t in tools if t["name"] == "acme_get_issue")
    return "", get["outputSchema"]["oneOf"][0]["properties"]["issue"]["properties"]


def test_a_count_under_an_optional_object_is_nullable_and_fits_githubs_example() -> None:
    problems, row = _issue_row("")
    assert problems == "" and row is not None
    assert row["reactions"]["type"] == ["integer", "null"]  # reactions is not required in `issue`
    assert row["title"]["type"] == "string"  # required all the way: never null
    assert row["body"]["type"] == ["string", "null"]  # nullable in the spec


def test_nullable_true_widens_and_false_is_checked_against_the_examples() -> None:
    problems, row = _issue_row(", nullable: true")
    assert row is not None and row["reactions"]["type"] == ["integer", "null"]
    problems, row = _issue_row(", nullable: false")
    assert row is None and "[example-output]" in problems and "reactions" in problems


def test_a_list_field_cannot_be_declared_nullable() -> None:
    edit = {"old": "{name: labels, from: \"labels[].name\", detail: summary}",
            "new": "{name: labels, from: \"labels[].name\", detail: summary, nullable: true}"}
    text = report(generate(mutate([edit])))
    assert "maps a list, which is [] when empty, never null" in text


def _comment_tool(param: str, step: str = "") -> str:
    new = COMMENT_TOOL[0]["new"].replace(
        "{name: text, type: string, required: true, max_length: 1000, description: The comment.}", param)
    new = new.replace("      - call: issues/create-comment", "      - call: issues/create-comment" + step)
    return report(generate(mutate([{**COMMENT_TOOL[0], "new": new}])))


def test_a_required_body_field_bound_to_an_optional_parameter_is_refused_unless_the_step_needs_it() -> None:
    optional = ("{name: text, from: \"issues/create-comment#body.body\", max_length: 1000, "
                "description: The comment., omitted: Omit to add nothing.}")
    text = _comment_tool(optional)
    assert ("issues/create-comment requires body field 'body', but it is left out when the optional "
            "parameter 'text' is omitted") in text
    assert "[required-binding]" not in _comment_tool(optional, "\n        when: text")
    required = ("{name: text, from: \"issues/create-comment#body.body\", required: true, max_length: 1000, "
                "description: The comment.}")
    assert "[required-binding]" not in _comment_tool(required)
