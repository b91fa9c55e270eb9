"""Issue 30's bound for untrusted text, end to end: `github_get_issue` on an issue whose body and
three comments are hostile 64 KiB fields costs the server at most 3x the same call on plain fields
of the same size (before: n1's body made one read cost 21 s). Over real HTTP against
bench/fake_server.py; the server's CPU time (user + system, /proc) over several calls per body,
bodies interleaved, the fastest pass: a ratio of costs measured in the same run
(bench/cleaner_cost.py measures the full corpus and 256 KiB fields too, docs/BENCHMARKS.md §10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cleaner_cost import REVIEW_BODIES, end_to_end
from tests.support.hostile_text import FIELD

BOUND = 3.0
# the costliest text of each family as bench/cleaner_cost.py ranks them, and the reviews' bodies
BODIES = {"quoted processing instructions, CRLF": "> <?\r\n", "tags over lines": "<a\n",
          "HTML blocks": "<div>\n", "inline tags": "<a>", "open comments": "<!--\n",
          "references to invisible characters": "&zwj;", "list items of open fences": "- ```\n",
          "link definitions": "[a]: <b\n", **REVIEW_BODIES}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="server CPU is read from /proc")
def test_a_hostile_issue_costs_at_most_three_plain_ones_end_to_end() -> None:
    run = end_to_end(BODIES, sizes=(FIELD,), reps=3)["sizes"][str(FIELD)]
    over = {name: round(row["x_plain"], 2) for name, row in run["rows"].items() if row["x_plain"] > BOUND}
    assert over == {}, f"plain issue {run['plain_ms']:.0f} ms of server CPU"
