"""README.md as its tests read it: the text, its markdown tables, its numbers."""

from __future__ import annotations

import re

from tests.support.servers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
# the README with every run of whitespace one space, so a phrase can be found across line breaks
PROSE = re.sub(r"\s+", " ", README)
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10}


def table_rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the markdown table whose header starts with `| first_header |`."""
    lines = text[text.index(f"| {first_header} |"):].splitlines()
    body = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        body.append([c.strip() for c in line.strip().strip("|").split("|")])
    return body


def number(cell: str) -> int:
    """`1,000`, `7` or `seven` as a number."""
    return WORDS[cell] if cell in WORDS else int(cell.replace(",", ""))
