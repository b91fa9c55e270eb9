"""HTML character references a reader of GitHub's page sees as nothing: `&#8203;`, `&#x200B;`,
`&zwj;` and every other reference that decodes to an invisible character (see `invisible`).

Decoding follows HTML: 0, surrogates and numbers past U+10FFFF become U+FFFD, 0x80-0x9F are read
as windows-1252; CommonMark allows 1-7 decimal or 1-6 hex digits. The numbers are matched by a
regular expression built from the invisible ranges, so finding them is the regex engine's work.
"""

from __future__ import annotations

import html
import html.entities
import re

from ghmcp_runtime.cleaning.invisible import CANDIDATE_RANGES, is_invisible

_WINDOWS_1252_VISIBLE = frozenset(n for n in range(0x80, 0xA0)
                                  if not is_invisible(html.unescape(f"&#{n};")))


def _invisible_numbers() -> list[tuple[int, int]]:
    numbers: list[tuple[int, int]] = []
    for low, high in CANDIDATE_RANGES:
        run: int | None = None
        for n in range(max(low, 1), high + 1):
            keep = not 0xD800 <= n <= 0xDFFF and n not in _WINDOWS_1252_VISIBLE
            if keep and run is None:
                run = n
            if not keep and run is not None:
                numbers.append((run, n - 1))
                run = None
        if run is not None:
            numbers.append((run, high))
    return numbers


def _one(digit: str) -> str:
    return f"[{digit}{digit.upper()}]" if digit.isalpha() else digit


def _digit_class(low: int, high: int, digits: str) -> str:
    if low == high:
        return _one(digits[low])
    chars = digits[low:high + 1]
    return "[" + chars + "".join(c.upper() for c in chars if c.isalpha()) + "]"


def _any(count: int, digits: str) -> str:
    every = _digit_class(0, len(digits) - 1, digits)
    return "" if count == 0 else every if count == 1 else f"{every}{{{count}}}"


def _same_length(a: str, b: str, digits: str) -> list[str]:
    if not a:
        return [""]
    if a[0] == b[0]:
        return [_one(a[0]) + rest for rest in _same_length(a[1:], b[1:], digits)]
    first, last, size = digits.index(a[0]), digits.index(b[0]), len(a) - 1
    if a[1:] == digits[0] * size and b[1:] == digits[-1] * size:
        return [_digit_class(first, last, digits) + _any(size, digits)]
    out = [_one(a[0]) + rest for rest in _same_length(a[1:], digits[-1] * size, digits)]
    if last - first > 1:
        out.append(_digit_class(first + 1, last - 1, digits) + _any(size, digits))
    return out + [_one(b[0]) + rest for rest in _same_length(digits[0] * size, b[1:], digits)]


def number_patterns(low: int, high: int, base: int) -> list[str]:
    """Patterns matching exactly the numbers low..high (>= 1) written in `base`, no leading 0."""
    digits = "0123456789abcdef"[:base]
    a, b = (format(n, "x" if base == 16 else "d") for n in (low, high))
    if len(a) < len(b):
        edge = base ** len(a) - 1
        return number_patterns(low, edge, base) + number_patterns(edge + 1, high, base)
    return _same_length(a, b, digits)


_TOKEN = re.compile(r"\[[^\]]*\](?:\{\d+\})?|.")


def _trie(words: list[list[str]]) -> str:
    """One alternation of token sequences, shared prefixes factored out: the engine then decides
    at each character instead of trying every alternative in turn."""
    groups: dict[str, list[list[str]]] = {}
    ends = False
    for word in words:
        if word:
            groups.setdefault(word[0], []).append(word[1:])
        else:
            ends = True
    branches = [head + _trie(rests) for head, rests in groups.items()]
    if not branches:
        return ""
    body = "|".join(branches)
    if ends:
        return f"(?:{body})?"
    return body if len(branches) == 1 else f"(?:{body})"


def _numbers(base: int) -> str:
    return _trie([_TOKEN.findall(p) for low, high in _invisible_numbers()
                  for p in number_patterns(low, high, base)])


_NAMES = sorted(name for name, value in html.entities.html5.items()
                if name.endswith(";") and len(value) == 1 and is_invisible(value))
INVISIBLE_REFERENCE = re.compile(
    rf"&(?:#(?:(?=[0-9]{{1,7}};)0*{_numbers(10)}"
    rf"|[xX](?=[0-9A-Fa-f]{{1,6}};)0*{_numbers(16)});"
    rf"|{_trie([[re.escape(c) for c in name] for name in _NAMES])})"
)
