"""Character references that decode to an invisible character: the generated pattern agrees with
decoding each number the way a browser does."""

from __future__ import annotations

import html
import random

import pytest

from ghmcp_runtime.cleaning.char_refs import INVISIBLE_REFERENCE, number_patterns
from ghmcp_runtime.cleaning.invisible import CANDIDATE_RANGES, is_invisible


def decoded(n: int) -> str:
    if n == 0 or n > 0x10FFFF or 0xD800 <= n <= 0xDFFF:
        return "\ufffd"
    if 0x80 <= n <= 0x9F:
        return html.unescape(f"&#{n};")  # windows-1252, as browsers read it
    return chr(n)


def numbers() -> list[int]:
    edges = {n + d for low, high in CANDIDATE_RANGES for n in (low, high) for d in (-1, 0, 1)}
    rng = random.Random(19)
    return sorted(n for n in edges | {rng.randrange(1, 0x110000) for _ in range(4000)} | set(range(300)) if n >= 0)


@pytest.mark.parametrize("spelling", ["{:d}", "{:07d}", "x{:x}", "X{:X}", "x{:06X}"])
def test_a_reference_matches_exactly_when_it_decodes_to_an_invisible_character(spelling: str) -> None:
    wrong = []
    for n in numbers():
        digits = spelling.format(n)
        if len(digits.lstrip("xX")) > (6 if digits[0] in "xX" else 7):
            continue  # CommonMark reads no reference there
        matched = INVISIBLE_REFERENCE.fullmatch(f"&#{digits};") is not None
        if matched != is_invisible(decoded(n)):
            wrong.append(digits)
    assert wrong == []


@pytest.mark.parametrize("text", ["&zwj;", "&ZeroWidthSpace;", "&shy;", "&lrm;", "&InvisibleTimes;"])
def test_named_invisible_references_match(text: str) -> None:
    assert INVISIBLE_REFERENCE.fullmatch(text)


@pytest.mark.parametrize("text", ["&amp;", "&lt;", "&#65;", "&#x80;", "&#00000008203;", "&zwj", "&#;"])
def test_visible_or_malformed_references_do_not_match(text: str) -> None:
    assert INVISIBLE_REFERENCE.fullmatch(text) is None


def test_number_patterns_cover_exactly_their_range() -> None:
    import re
    rng = random.Random(7)
    for base in (10, 16):
        for _ in range(300):
            low = rng.randrange(1, 0x10FFFF)
            high = min(0x10FFFF, low + rng.choice((3, 250, 70000)))
            pattern = re.compile("(?:" + "|".join(number_patterns(low, high, base)) + ")")
            for n in (low - 1, low, high, high + 1, rng.randint(low, high)):
                if n >= 1:
                    digits = format(n, "x" if base == 16 else "d")
                    assert bool(pattern.fullmatch(digits)) == (low <= n <= high)
