"""`python -m generator drift`: a golden report between two hand-made spec versions."""

from __future__ import annotations

import contextlib
import io
import json

from lint_support import HERE, compare_golden

from generator.__main__ import main
from generator.language.overrides import parse_overrides
from generator.review.drift import drift_report

DRIFT = HERE / "drift"
ARGS = ["drift", "--overrides", "tests/lint/drift/overrides.yaml",
        "--spec-dir", "tests/lint/drift/spec-v1", "--to", "tests/lint/drift/spec-v2.json"]


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def test_the_drift_report_between_the_two_fixture_specs_matches_its_golden() -> None:
    code, out, err = _cli(ARGS)
    assert (code, err) == (0, "")
    compare_golden(DRIFT / "expected.txt", out)


def test_the_report_is_deterministic_and_empty_for_an_unchanged_spec() -> None:
    overrides, located = parse_overrides((DRIFT / "overrides.yaml").read_text(encoding="utf-8"),
                                         "tests/lint/drift/overrides.yaml")
    v1 = json.loads((DRIFT / "spec-v1" / "api.json").read_text(encoding="utf-8"))
    v2 = json.loads((DRIFT / "spec-v2.json").read_text(encoding="utf-8"))
    assert drift_report(v1, v2, overrides, located, "a", "b") == \
        drift_report(v1, v2, overrides, located, "a", "b")
    assert drift_report(v1, v1, overrides, located, "a", "b") == (
        "Spec drift for tests/lint/drift/overrides.yaml: a -> b\n"
        "3 operation(s) used by 3 tool(s): 0 changed, 3 unchanged.\n")


def test_drift_without_a_target_is_a_usage_error() -> None:
    code, _, err = _cli(["drift"])
    assert code == 2
    assert "--to" in err
