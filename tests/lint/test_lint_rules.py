"""Every contract rule has a golden failing case; the fixture and the shipped overrides pass clean."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from lint_support import CASES, base_inputs, compare_golden, load_case, report, run_case

from generator.pipeline.generate import generate, load_inputs
from generator.spec.pinned import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "lint-rules.md"
CASE_FILES = sorted(CASES.glob("*.yaml"))


def documented_rules() -> list[str]:
    return re.findall(r"^\| `([a-z-]+)` \| (?:build|lint|breaking)", DOCS.read_text(encoding="utf-8"), re.MULTILINE)


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case_fails_generation_with_the_expected_diagnostics(path: Path) -> None:
    case = load_case(path)
    result = run_case(case)
    text = report(result)
    assert result.files is None, "an error must stop generation (nothing written)"
    assert f"[{case['rule']}]" in text, f"the case does not trigger {case['rule']}:\n{text}"
    compare_golden(path.with_suffix(".stderr"), text)


@pytest.mark.parametrize("base", ["acme", "pulls", "forgejo"])
def test_the_fixture_passes_every_rule(base: str) -> None:
    result = generate(base_inputs(base))
    assert [d.render() for d in result.diagnostics] == []
    assert result.files is not None


def test_the_shipped_overrides_pass_clean() -> None:
    result = generate(load_inputs(REPO_ROOT / "overrides" / "github_issues.yaml"))
    assert [d.render() for d in result.diagnostics] == []
    assert result.files is not None


def test_every_documented_rule_has_a_golden_case_and_every_case_a_documented_rule() -> None:
    documented = documented_rules()
    assert len(documented) == len(set(documented)), "duplicate rule ids in docs/lint-rules.md"
    assert len(documented) >= 15
    covered = {load_case(p)["rule"] for p in CASE_FILES}
    assert sorted(set(documented) - covered) == []
    assert sorted(covered - set(documented)) == []


def rule_ids_in_source() -> set[str]:
    """Rule ids passed to ctx.error / self.error / self.warn / Diagnostic(...) in the generator."""
    position = {"error": 3, "warn": 3, "Diagnostic": 4}
    found: set[str] = set()
    for path in sorted((REPO_ROOT / "generator").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {t.id: n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                     for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            index = 1 if owner == "ctx" and name == "error" else position.get(name)
            if index is None:
                continue
            rule = node.args[index] if len(node.args) > index else next(
                (k.value for k in node.keywords if k.arg == "rule"), None)
            if isinstance(rule, ast.Constant) and isinstance(rule.value, str) and rule.value:
                found.add(rule.value)
            elif isinstance(rule, ast.Name) and rule.id in constants:
                found.add(str(constants[rule.id]))
    return found


def test_every_rule_id_in_the_generator_is_documented() -> None:
    used = rule_ids_in_source()
    assert len(used) >= 15
    assert sorted(used - set(documented_rules())) == []
