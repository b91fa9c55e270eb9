"""The drift report works for the Forgejo description as for GitHub's: `python -m generator drift`
on overrides/forgejo_labels.yaml compares against spec/forgejo (the file's `server.spec`)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path

from generator.__main__ import main
from generator.spec.pinned import SPEC_DIR, load_pinned_spec

OVERRIDES = "overrides/forgejo_labels.yaml"


def test_a_changed_forgejo_description_reports_what_the_tools_build_on(tmp_path: Path) -> None:
    new = copy.deepcopy(load_pinned_spec(SPEC_DIR / "forgejo").document)
    schemas = new["components"]["schemas"]
    schemas["EditLabelOption"]["properties"]["name"] = {"type": "integer"}
    del new["paths"]["/orgs/{org}/labels/{id}"]["get"]
    target = tmp_path / "forgejo-next.json"
    target.write_text(json.dumps(new), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["drift", "--overrides", OVERRIDES, "--to", str(target)])
    report = out.getvalue()
    assert (code, err.getvalue()) == (0, "")
    assert report.startswith(f"Spec drift for {OVERRIDES}: forgejo/forgejo v11.0.1 -> forgejo-next.json")
    assert "13 operation(s) used by 10 tool(s): 3 changed, 10 unchanged." in report
    assert "request body property name retyped string -> integer  [affects forgejo_edit_repo_label.name]" in report
    assert "operation removed  [affects forgejo_delete_org_label, forgejo_edit_org_label, forgejo_get_org_label]" in report
