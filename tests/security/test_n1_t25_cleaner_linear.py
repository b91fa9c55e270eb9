"""Security reviews t25 (round 2) and n1 (round 3, high): one hostile field cost seconds of
event-loop CPU (n1: lines `[a]: b (` made the old scanner's title search run to the end of the
text on every line, 2.9-5.1 s per 64 KiB field, 48-80 s per 256 KiB). The cleaner now decides from
a parse that reads any input in linear time, and bounds its own Python work per byte (events,
HTML blocks and hidden pieces: cleaning/markup.py), so:

- every adversarial text (tests/support/hostile_markdown.py ADVERSARIAL: each construct family's
  openers without closers, nested in lists and quotes, CRLF, mixed), the review's bodies and the
  corpus of tests/support/hostile_text.py costs at most `FIELD_BOUND` plain fields of the same size;
- quadrupling a hostile field (64 -> 256 KiB) at most quadruples its cost, with room for noise
  (`GROWTH_BOUND`; a quadratic cost would be 16x). One ratio over the whole span, not one per
  doubling: a per-step bound of 2.3x (quadratic 4x) failed on unchanged code at load ~8, where
  one noisy 128 KiB sample moves two ratios;
Costs are this thread's CPU time, the fastest of several interleaved runs, compared as ratios in
the same run. bench/cleaner_cost.py has the table and the end-to-end figure (docs/BENCHMARKS.md §10;
the end-to-end bound of 3x is asserted in tests/security/test_n1_end_to_end.py).
"""

from __future__ import annotations

import time

import pytest

from ghmcp_runtime.cleaning.untrusted import sanitize
from tests.support.hostile_markdown import ADVERSARIAL
from tests.support.hostile_text import FIELD, PLAIN, corpus, fastest, repeated

# the densest texts the cleaner reads whole cost about six plain fields; past its allowance a
# text is cut, so no text costs more than the allowance's work (~8 plain fields)
FIELD_BOUND = 10.0
GROWTH_BOUND = 5.2
N1 = {"n1 '[a]: b (' lines": "[a]: b (\n", "n1 '> [a]: b (' lines": "> [a]: b (\n",
      "n1 '[]:b (' lines": "[]:b (\n"}
UNITS = {f"{family}: {unit!r}": unit for family, units in ADVERSARIAL.items() for unit in units}


def test_every_hostile_field_costs_a_bounded_number_of_plain_fields() -> None:
    texts = {name: repeated(unit) for name, unit in {**UNITS, **N1}.items()}
    texts.update(dict(corpus(20)))
    texts["plain field"] = repeated(PLAIN)
    best = fastest(3, sanitize, texts, time.thread_time)
    plain = best.pop("plain field")
    over = {name: round(seconds / plain, 1) for name, seconds in best.items()
            if seconds > FIELD_BOUND * plain}
    assert over == {}, f"plain field {plain * 1000:.2f} ms"


@pytest.mark.parametrize("family", [*ADVERSARIAL, "n1"])
def test_quadrupling_a_hostile_field_at_most_quadruples_its_cost(family: str) -> None:
    """Per construct family, its costliest text at 64 KiB, then at 256 KiB."""
    units = list(N1.values()) if family == "n1" else ADVERSARIAL[family]
    at_field = fastest(3, sanitize, {unit: repeated(unit) for unit in units}, time.thread_time)
    unit = max(at_field, key=at_field.__getitem__)
    sizes = (FIELD, 4 * FIELD)
    best = fastest(5, sanitize, {str(size): repeated(unit, size) for size in sizes}, time.thread_time)
    growth = best[str(4 * FIELD)] / best[str(FIELD)]
    assert growth <= GROWTH_BOUND, (unit, round(growth, 2))
