"""docs/overrides.md is the contract for override authors: its complete example must generate,
lint clean, run without a line of Python, and keep a one-operation tool within 20 lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from generator.language.overrides import OverrideFile, schema_text
from generator.spec.pinned import REPO_ROOT
from tests.support.doc_example import DOC, complete_example, generate_example

SCHEMA = REPO_ROOT / "docs" / "overrides.schema.json"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    proc, out = generate_example(tmp_path_factory.mktemp("doc"))
    assert proc.returncode == 0, proc.stderr
    assert "lint findings 0" in proc.stdout, proc.stdout + proc.stderr
    return out


def test_the_example_generates_lint_clean_without_hooks(generated: Path) -> None:
    package = generated / "github_releases_mcp"
    assert not (package / "hooks.py").exists()
    server_py = (package / "server.py").read_text(encoding="utf-8")
    handlers_py = (package / "handlers.py").read_text(encoding="utf-8")
    assert "from . import operations" in handlers_py and "hooks" not in server_py
    assert "import hooks" not in handlers_py and "hooks." not in handlers_py
    tools = {t["name"] for t in json.loads((package / "tools.json").read_text())["tools"]}
    assert tools == {"github_get_release", "github_list_releases"}


def test_the_declaration_shown_in_the_doc_is_what_is_generated(generated: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    shown = re.search(r"```python\n(# github_get_release.*?)```", text, re.DOTALL)
    assert shown, "docs/overrides.md lost the generated declaration it shows"
    assert shown.group(1) in (generated / "github_releases_mcp" / "handlers.py").read_text(encoding="utf-8")


def test_a_one_operation_tool_is_at_most_20_lines() -> None:
    lines = complete_example().splitlines()
    start = lines.index("  - name: github_get_release")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  - name: "))
    tool = [line for line in lines[start:end] if line.strip()]
    assert len(tool) <= 20, len(tool)
    assert f"over one operation: {len(tool)} lines of YAML" in DOC.read_text(encoding="utf-8")
    parsed = OverrideFile.model_validate(yaml.safe_load(complete_example()))
    assert parsed.tools[0].handler is None and parsed.server.hooks is None


def test_the_published_schema_is_current() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == schema_text(), "run `make generate`"


def test_the_schema_validates_every_shipped_override_file() -> None:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads(schema_text()))
    for path in sorted((REPO_ROOT / "overrides").glob("*.yaml")):
        errors = list(validator.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8"))))
        assert not errors, (path.name, [e.message for e in errors[:3]])
    errors = list(validator.iter_errors(yaml.safe_load(complete_example())))
    assert not errors, [e.message for e in errors[:3]]


def test_the_settle_example_is_the_shipped_rename_declaration() -> None:
    from generator.language.overrides import StepDef

    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"\*\*Settle\*\*.*?```yaml\n(.*?)```", text, re.DOTALL)
    assert block, "docs/overrides.md lost the settle example"
    shown = [StepDef.model_validate(s) for s in yaml.safe_load(block.group(1))]
    shipped = OverrideFile.model_validate(
        yaml.safe_load((REPO_ROOT / "overrides" / "github_issues.yaml").read_text(encoding="utf-8")))
    tool = next(t for t in shipped.tools if t.name == "github_update_label")
    assert tool.steps is not None
    by_id = {s.id: s for s in tool.steps}
    for step in shown:
        assert step.id is not None
        assert (step.call, step.path, step.compare, step.settle) == (
            by_id[step.id].call, by_id[step.id].path, by_id[step.id].compare, by_id[step.id].settle)


def test_the_built_in_codes_table_is_the_catalog() -> None:
    """Every built-in code's default wording and repair, as docs/overrides.md shows them."""
    from generator.build.catalog import builtin_codes
    from ghmcp_runtime.core.forges import GITHUB

    text = DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (yes|no) \| (.+) \| (.+) \|$", text, re.MULTILINE)
    shown = {code: (temporary == "yes", description, repair) for code, temporary, description, repair in rows}
    assert shown == {code: (d.temporary, d.description, d.repair) for code, d in builtin_codes(GITHUB).items()}


def test_the_generated_sections_of_the_page_say_what_the_code_decides() -> None:
    """Issue 31: the verb list ended in "…" and two sections on not-found codes contradicted each
    other. Both are now written from the code by `make generate` (generator/render/doc_sections.py)."""
    from generator.build.builder import NOT_FOUND_BY_PARAM
    from generator.lint.text import VERBS
    from generator.render.doc_sections import SECTION, render

    text = DOC.read_text(encoding="utf-8")
    assert render(text) == text, "docs/overrides.md is stale: run `make generate`"
    sections = {m["name"]: m["body"] for m in SECTION.finditer(text)}
    assert set(sections) == {"verbs", "not-found"}
    assert set(re.findall(r"`([a-z]+)`", sections["verbs"].split("Synonyms")[0])) - {"name"} == set(VERBS)
    assert all(f"`{{{param}}}` → `{code}`" in sections["not-found"] for param, code in NOT_FOUND_BY_PARAM.items())
    assert "anything else → `not_found`" not in text  # the contradicting sentence is gone
    stale = text.replace(sections["verbs"], "**Verbs**: list, get, …\n")
    assert render(stale) == text
