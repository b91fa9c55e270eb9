"""The round-trip count the benchmark reports, and the report rendering of the checked-in results."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.report import render  # noqa: E402
from bench.roundtrips import critical_path  # noqa: E402


def test_concurrent_requests_are_one_round_trip() -> None:
    assert critical_path([]) == 0
    assert critical_path([(0.0, 0.1), (0.01, 0.11), (0.02, 0.12)]) == 1


def test_requests_one_after_another_are_counted_each() -> None:
    assert critical_path([(0.0, 0.1), (0.1, 0.2), (0.25, 0.35)]) == 3


def test_the_longest_chain_wins_over_side_branches() -> None:
    # a → (b ∥ c) → d, with c running long: a, c, d on the critical path
    spans = [(0.0, 0.1), (0.1, 0.2), (0.1, 0.3), (0.3, 0.4)]
    assert critical_path(list(reversed(spans))) == 3


def test_the_checked_in_results_render() -> None:
    results = json.loads((ROOT / "bench" / "results.json").read_text(encoding="utf-8"))
    text = render(results)
    assert text.startswith("# Benchmarks")
    if "roundtrips" in results:
        assert "## 8. Round trips against a slow GitHub" in text
    if "rate_limit" in results:
        assert "## 9. Rate-limit budget" in text


def test_every_chart_the_report_shows_is_checked_in() -> None:
    """Each theme with a peer row shows its chart, rendered by the run beside the Markdown."""
    import re

    results = json.loads((ROOT / "bench" / "results.json").read_text(encoding="utf-8"))
    shown = re.findall(r"!\[[^\]]*\]\((benchmarks/[^)]+\.svg)\)", render(results))
    assert shown, "the summary shows no chart"
    missing = [path for path in shown if not (ROOT / "docs" / path).is_file()]
    assert missing == [], f"re-render with `.venv/bin/python bench/report.py > docs/BENCHMARKS.md`: {missing}"
