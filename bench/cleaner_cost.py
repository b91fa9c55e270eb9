"""What cleaning untrusted text costs per 64 KiB field: every hostile shape of
tests/support/hostile_text.py (the security review's t25/t26 cases, more shapes, generated
documents, and the worst shapes found while building the cleaner) against a plain field of the
same size, interleaved in one run; the fastest of the runs each (noise only ever adds).

    .venv/bin/python bench/cleaner_cost.py          # prints the table
    make bench ONLY=untrusted_text                   # the same into docs/BENCHMARKS.md

Nothing here asserts a time (tests/runtime/test_cleaner_cost.py checks the 3x ratio).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ghmcp_runtime.cleaning.untrusted import sanitize
from tests.support.hostile_text import FIELD, PLAIN, PROSE, corpus, fastest, repeated

# the costliest shapes found while building the cleaner: long multi-line comments whose body is
# dense in the characters that could end them, which the regex engine looks at one by one
WORST_FOUND = {
    "multi-line comments full of '- '": (("\n\n<!--" + "- " * 990 + "\n-->") * 40),
    "multi-line comments full of '? '": (("\n\n<!--" + "? " * 990 + "\n-->") * 40),
    "comments full of '- ' on one line": (("<!--" + "- " * 990 + "-->") * 40),
}
# the cleaner before this work (main 592ce31), same machine, for the record: t25's worst case
# and t26's body (65,535 characters of "<?\n"), one run each
BEFORE = {"t25 worst case ('<!' repeated)": 0.42, "t26 '<?\\n' lines": 29.9}


def measure(runs: int = 7, generated: int = 40) -> dict[str, Any]:
    texts = dict(corpus(generated))
    texts.update({name: text[:FIELD] for name, text in WORST_FOUND.items()})
    texts["plain field"], texts["prose field"] = repeated(PLAIN), repeated(PROSE)
    best = fastest(runs, sanitize, texts)
    plain, prose = best.pop("plain field"), best.pop("prose field")
    rows = {name: {"ms": seconds * 1000, "x_plain": seconds / plain, "x_prose": seconds / prose,
                   "worst_found": name in WORST_FOUND}
            for name, seconds in best.items()}
    corpus_rows = [row for row in rows.values() if not row["worst_found"]]
    return {
        "field_chars": FIELD, "runs": runs, "generated": generated,
        "plain_ms": plain * 1000, "prose_ms": prose * 1000, "rows": rows,
        "corpus_worst": max(corpus_rows, key=lambda row: row["ms"]),
        "corpus_median_x_plain": statistics.median(row["x_plain"] for row in corpus_rows),
        "before_s": BEFORE,
    }


def main() -> None:
    result = measure()
    print(f"plain field {result['plain_ms']:.2f} ms, prose field {result['prose_ms']:.2f} ms "
          f"({FIELD} characters each)")
    for name, row in sorted(result["rows"].items(), key=lambda item: -item[1]["ms"]):
        print(f"{name:40} {row['ms']:6.2f} ms  {row['x_plain']:5.2f}x plain  {row['x_prose']:5.2f}x prose"
              + ("  (worst found, not in the test)" if row["worst_found"] else ""))


if __name__ == "__main__":
    main()
