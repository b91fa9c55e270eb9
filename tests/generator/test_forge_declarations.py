"""The generator on a second forge: `server.forge`/`server.spec`, and located errors for the
recipes Forgejo needed (`absent`, settle on a create, `compare.carry`, `guard.total`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.pipeline.generate import generate, load_inputs
from generator.spec.pinned import REPO_ROOT

FORGEJO = (REPO_ROOT / "overrides" / "forgejo_labels.yaml").read_text(encoding="utf-8")
MILESTONES = (REPO_ROOT / "overrides" / "github_milestones.yaml").read_text(encoding="utf-8")


def errors(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "x.yaml"
    path.write_text(text, encoding="utf-8")
    result = generate(load_inputs(path))
    assert result.files is None, "expected generation to fail"
    return [f"{d.where.line}: {d.message}" for d in result.diagnostics if d.level.value == "error"]


def once(text: str, old: str, new: str) -> str:
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


def test_the_forgejo_file_generates_with_its_forge() -> None:
    result = generate(load_inputs(REPO_ROOT / "overrides" / "forgejo_labels.yaml"))
    assert result.ok and result.server is not None and result.server.forge == "forgejo"
    server_py = result.files[f"{result.server.package}/server.py"] if result.files else ""
    assert "forge=FORGEJO," in server_py and "api_version=" not in server_py
    codes = {t.name: set(t.error_codes) for t in result.server.tools}
    assert "org_not_found" in codes["forgejo_get_org_label"] and "org_not_found" not in codes["forgejo_get_repo_label"]
    assert "label_not_found" in codes["forgejo_get_repo_label"]  # `/labels/{id}`: named by the collection


@pytest.mark.parametrize(("old", "new", "message"), [
    ("  forge: forgejo\n", "  forge: gitlab\n", "unknown forge 'gitlab'"),
    ("  forge: forgejo\n", "  forge: forgejo\n  api_version: '1'\n", "Forgejo takes no API version header"),
    ("        call: issueListLabels\n        absent:", "        call: issueGetLabel\n        absent:",
     "absent needs a listing: issueGetLabel does not answer a JSON array"),
    ("          match: {name: \"{name}\"}\n          refuse: &label_exists",
     "          match: {title: \"{name}\"}\n          refuse: &label_exists",
     "'title' is not a field of issueListLabels's rows"),
    ("        settle: {against: taken}   #", "        settle: {against: nothing}   #",
     "settle on a create needs `against` naming an earlier `absent` step"),
    ("          carry: [is_archived]\n        settle: {}\n    output:\n      - {name: label, shape: label, from: [update, current]}\n      - &changed",
     "          carry: [exclusive]\n        settle: {}\n    output:\n      - {name: label, shape: label, from: [update, current]}\n      - &changed",
     "carry names 'exclusive', which is not a body field outside compare.fields"),
    ("        guard:\n          total: true\n          refuse:\n            code: label_in_use\n            message: \"{count} issue(s) or pull request(s) of the repository",
     "        guard:\n          refuse:\n            code: label_in_use\n            message: \"{count} issue(s) or pull request(s) of the repository",
     "guard counts nothing"),
])
def test_recipe_mistakes_are_located_errors(tmp_path: Path, old: str, new: str, message: str) -> None:
    found = errors(tmp_path, once(FORGEJO, old, new))
    assert any(message in e for e in found), found


def test_a_forge_without_totals_cannot_count_them(tmp_path: Path) -> None:
    text = once(MILESTONES, "          count: [open_issues, closed_issues]\n", "          total: true\n")
    assert any("this forge reports no listing totals" in e for e in errors(tmp_path, text))


LOCKDOWN = (REPO_ROOT / "tests" / "forgejo" / "lockdown" / "forgejo_lockdown.yaml").read_text(encoding="utf-8")


def test_lockdown_reads_only_what_the_forge_sends(tmp_path: Path) -> None:
    """Forgejo's issues carry no author association, so a rule cannot read one."""
    found = errors(tmp_path, once(LOCKDOWN, "      author: user.login\n",
                                  "      author: user.login\n      association: title\n"))
    assert any("Forgejo sends no author association" in e for e in found), found


def test_lockdown_cannot_be_declared_on_a_forge_that_cannot_tell_who_may_push(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from generator.build import builder as build
    from ghmcp_runtime.core.forges import FORGEJO as PROFILE

    monkeypatch.setitem(build.FORGES, "forgejo", replace(PROFILE, trust=None))
    found = errors(tmp_path, LOCKDOWN)
    assert any("Forgejo offers no way to tell whether an author may push" in e for e in found), found
