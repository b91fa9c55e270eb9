"""The untrusted-text oracle at scale, with counts: hostile Markdown documents (both generators of
tests/support/hostile_markdown.py) rendered by GitHub's cmark-gfm and read by an HTML5 parser
(tests/support/gfm_oracle.py); every marker the page hides must be gone from what the cleaner
returns, and markers a reader sees are counted as kept or (over-)removed.

    .venv/bin/python bench/markup_oracle.py [EXAMPLES]     # default 12000 per generator

Exits non-zero with the failing document when something hidden survives.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ghmcp_runtime.cleaning.untrusted import sanitize
from tests.support.gfm_oracle import hidden_markers
from tests.support.hostile_markdown import documents, fragment_documents

COUNTS = {"documents": 0, "hidden": 0, "visible_kept": 0, "visible_removed": 0}


def main(examples: int) -> None:
    for strategy in (documents(), fragment_documents()):
        @settings(max_examples=examples, deadline=None, database=None)
        @given(strategy)
        def check(document: str) -> None:
            COUNTS["documents"] += 1
            hidden = hidden_markers(document)
            cleaned, _ = sanitize(document)
            COUNTS["hidden"] += len(hidden)
            for marker in set(re.findall(r"MARK\d+X", document)) - hidden:
                COUNTS["visible_kept" if marker in cleaned else "visible_removed"] += 1
            assert not {m for m in hidden if m in cleaned}, document

        check()
    print(COUNTS)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12000)
