"""README.md's Forgejo tables are the Forgejo servers: the design table names every tool of
forgejo-labels-mcp with its toolset and every resource template; the decision table's evidence is
tests that exist; an error code either Forgejo table names is a code of that server."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from tests.support.readme import README, table_rows
from tests.support.servers import ROOT

GENERATED = ROOT / "generated"
FORGEJO_TESTS = ROOT / "tests" / "forgejo"


def _tools(package: str) -> dict[str, dict[str, Any]]:
    tools = json.loads((GENERATED / package / "tools.json").read_text(encoding="utf-8"))["tools"]
    return {t["name"]: t for t in tools}


def _codes(package: str) -> set[str]:
    errors = json.loads((GENERATED / package / "errors.json").read_text(encoding="utf-8"))
    return {c["code"] for c in errors["codes"]}


def _every_code() -> set[str]:
    """The error codes of every generated server: a word in this set is read as a code."""
    return set().union(*(_codes(p.parent.name) for p in GENERATED.glob("*/errors.json")))


def _named(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_the_design_table_is_forgejo_labels_mcps_tools_and_resources() -> None:
    declared = yaml.safe_load((ROOT / "overrides" / "forgejo_labels.yaml").read_text(encoding="utf-8"))
    shown: dict[str, str] = {}
    for design, tool, toolset in table_rows(README, "design"):
        if design == "resources":
            assert set(_named(tool)) == {t["uri_template"] for t in declared["resource_templates"]}
            continue
        names = _named(tool)
        assert names == [f"forgejo_{d}" for d in _named(design)], (design, tool)
        shown.update(dict.fromkeys(names, toolset.strip("`")))
    assert shown == {t["name"]: t["toolset"] for t in declared["tools"]}
    assert set(shown) == set(_tools("forgejo_labels_mcp"))


def _evidence() -> list[tuple[str, str]]:
    """(file, test) for every `file.py::test` and `::test` (the last file named) in the 'shown by' column."""
    out = []
    for row in table_rows(README, "decision / review item"):
        for ref in _named(row[2]):
            if "::" in ref:
                file, _, test = ref.partition("::")
                out.append((file, test))
    return out


@pytest.mark.parametrize(("file", "test"), _evidence(), ids=[f"{f}::{t}" for f, t in _evidence()])
def test_the_decision_tables_evidence_is_a_test_that_exists(file: str, test: str) -> None:
    where = [FORGEJO_TESTS / file] if file else sorted(FORGEJO_TESTS.glob("test_*.py"))
    assert all(p.is_file() for p in where), file
    assert any(re.search(rf"^(async )?def {test}\(", p.read_text(encoding="utf-8"), re.M) for p in where), test


def test_the_decision_tables_other_evidence_exists() -> None:
    files = [ref for row in table_rows(README, "decision / review item") for ref in _named(row[2])
             if "::" not in ref and "/" not in ref and ref.endswith(".py")]
    paths = [ref for row in table_rows(README, "decision / review item") for ref in _named(row[2]) if "/" in ref]
    assert files and paths
    assert all(next(ROOT.joinpath("tests").rglob(f), None) for f in files), files
    assert all((ROOT / p).is_file() for p in paths), paths


@pytest.mark.parametrize(("first_header", "package"), [("decision / review item", "forgejo_labels_mcp"),
                                                       ("Forgejo", "forgejo_issues_mcp")])
def test_a_code_a_forgejo_table_names_is_that_servers(first_header: str, package: str) -> None:
    every, own = _every_code(), _codes(package)
    named = {word for row in table_rows(README, first_header) for cell in row[1:] for word in _named(cell)}
    codes = named & every
    assert codes, "the table names no error code"
    assert codes <= own, sorted(codes - own)


def test_a_status_the_forgejo_issues_table_maps_is_mapped_so() -> None:
    """`closing … is 412` | `issue_blocked`, `the 403 is `no_push_access``: the override file maps
    that status to that code."""
    text = (ROOT / "overrides" / "forgejo_issues.yaml").read_text(encoding="utf-8")
    pairs = []
    for forgejo, tools in table_rows(README, "Forgejo"):
        said = re.search(r"the (\d{3}) is `(\w+)`", tools)
        only = re.fullmatch(r"`(\w+)`", tools)
        if said:
            pairs.append((said[1], said[2]))
        elif only:
            pairs.append((re.findall(r"\b\d{3}\b", forgejo)[-1], only[1]))
    assert pairs
    for status, code in pairs:
        assert re.search(rf"status: {status}\b[^\n]*\}}\n\s*code: {code}\n", text), (status, code)


def test_the_forgejo_issues_table_names_declarations_the_override_file_makes() -> None:
    """`clear_with: 0`, `names_exist`, `resolve`: words of the override file; `milestone: null`,
    `ignored_fields`: an argument or an answer's field of its tools."""
    text = (ROOT / "overrides" / "forgejo_issues.yaml").read_text(encoding="utf-8")
    fields, codes = _schema_fields(), _every_code()
    words = [w for row in table_rows(README, "Forgejo") for w in _named(row[1])
             if re.fullmatch(r"[a-z_]+(: \w+)?", w) and w not in codes]
    assert words
    for word in words:
        key = word.replace(": ", r":\s*")
        assert re.search(rf"\b{key}\b", text) or word.split(":")[0] in fields, word


def _schema_fields() -> set[str]:
    """The property names of forgejo-issues-mcp's input and output schemas."""
    fields: set[str] = set()

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            fields.update(schema.get("properties", {}))
            for value in schema.values():
                walk(value)
        elif isinstance(schema, list):
            for value in schema:
                walk(value)

    for tool in _tools("forgejo_issues_mcp").values():
        walk([tool["inputSchema"], tool["outputSchema"]])
    return fields
