"""The hidden-markup oracle at scale, with counts: random hostile Markdown documents (the
fragments of tests/runtime/test_markup.py), rendered by markdown-it-py; every marker the
rendering hides must be gone from our output, and markers a reader sees are counted as kept or
(over-)removed.

    .venv/bin/python bench/markup_oracle.py [EXAMPLES]     # default 12000

Exits non-zero with the failing document when something hidden survives.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ghmcp_runtime.cleaning.markup import strip_hidden_markup
from tests.runtime.test_markup import RENDERER, documents, hidden_in_rendering

COUNTS = {"documents": 0, "hidden": 0, "visible_kept": 0, "visible_removed": 0}


def main(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None)
    @given(documents())
    def check(document: str) -> None:
        COUNTS["documents"] += 1
        hidden = hidden_in_rendering(RENDERER.render(document), document)
        cleaned, _ = strip_hidden_markup(document)
        COUNTS["hidden"] += len(hidden)
        for marker in set(re.findall(r"MARK\d+X", document)) - hidden:
            COUNTS["visible_kept" if marker in cleaned else "visible_removed"] += 1
        assert not {m for m in hidden if m in cleaned}, document

    check()
    print(COUNTS)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12000)
