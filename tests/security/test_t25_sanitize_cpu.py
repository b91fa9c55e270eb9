"""The untrusted-text cleaner costs a bounded amount per character whatever the text holds: each
hostile 64 KiB field (the security review's cases, more shapes, generated documents) is cleaned
within 3x the time of a plain field of the same size, measured side by side in one run (a ratio,
so a slow or busy machine slows both). bench/cleaner_cost.py prints the table behind
docs/BENCHMARKS.md."""

from __future__ import annotations

import time

import pytest

from ghmcp_runtime.cleaning.untrusted import sanitize
from tests.support.hostile_text import FIELD, PLAIN, corpus, fastest, repeated

BOUND = 3.0


@pytest.mark.parametrize("size", [FIELD, FIELD // 4])
def test_a_hostile_field_costs_at_most_three_plain_fields(size: int) -> None:
    texts = dict(corpus(size=size))
    texts["plain field"] = repeated(PLAIN, size)
    best = fastest(7, sanitize, texts, time.thread_time)
    plain = best.pop("plain field")
    over = {name: round(seconds / plain, 2) for name, seconds in best.items() if seconds > BOUND * plain}
    assert over == {}, f"plain field {plain * 1000:.2f} ms"


def test_doubling_a_hostile_field_at_most_doubles_its_cost() -> None:
    """Linear, not merely bounded at one size: 64 KiB costs at most ~2x 32 KiB (quadratic would
    be 4x)."""
    texts = {f"{name} {size}": repeated(unit, size)
             for name, unit in (("pi lines", "<?\n"), ("open comments", "<!-- "),
                                ("zero-width", "a\u200b"), ("entities", "&#8203;"))
             for size in (FIELD // 2, FIELD)}
    best = fastest(7, sanitize, texts, time.thread_time)
    ratios = {name: best[f"{name} {FIELD}"] / best[f"{name} {FIELD // 2}"]
              for name in ("pi lines", "open comments", "zero-width", "entities")}
    assert all(ratio < 3.0 for ratio in ratios.values()), ratios
