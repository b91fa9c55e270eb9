"""The scripted agent trial's pull-request and file tasks (bench/code_trial.py) on this tree, on
github-mcp's pull_requests and repos toolsets: every end-state check passes, each task takes four
calls and none fails (the peer's side runs in `make bench`, which needs the peer venv)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.code_trial import code_fake, ours  # noqa: E402


def test_a_review_and_a_file_edit_end_correct_in_four_calls_each() -> None:
    report = anyio.run(ours, code_fake())
    assert report["checks_passed"] == report["checks_total"] == 7, report["checks"]
    assert report["calls_per_task"] == {"review": 4, "edit": 4} and report["errors"] == 0
    assert [c["tool"] for c in report["calls"]][-1] == "github_create_pull_request"
