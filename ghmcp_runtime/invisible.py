"""Characters a reader of GitHub's page cannot see: removed from untrusted text, and counted.

Removed: control characters (tab and line breaks stay), bidi embeddings, overrides, isolates and
marks, zero-width and other invisible format characters (Unicode category Cf, except the visible
prepended concatenation marks), Hangul fillers, lone surrogates, interlinear annotations and tag
characters. Kept where they carry meaning, since readers see their effect and they cannot carry
a hidden message: a zero-width (non-)joiner between two non-ASCII letters (Persian, Indic
scripts) or a joiner between two emoji (family and profession sequences); one variation selector
right after a visible character (emoji or text presentation; ideographic variants only after a CJK
ideograph); and the tag sequences of the three subdivision flags Unicode recommends (England,
Scotland, Wales). Everything else in these classes goes, including inside code: invisible
characters in code are the Trojan Source attack.
"""

from __future__ import annotations

import re
import unicodedata

_CANDIDATES = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\ud800-\udfff\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
# Cf characters that render visibly (prepended concatenation marks) and are therefore kept
VISIBLE_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2"
                           "\U000110bd\U000110cd")
_FLAGS = re.compile(
    "\U0001f3f4\U000e0067\U000e0062(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074"
    "|\U000e0077\U000e006c\U000e0073)\U000e007f"
)
_ZWNJ, _ZWJ = "\u200c", "\u200d"


def _letter(char: str) -> bool:
    return ord(char) > 0x7F and unicodedata.category(char)[0] in "LM"


def _emoji(char: str) -> bool:
    code = ord(char)
    return (unicodedata.category(char) == "So" or 0x1F000 <= code <= 0x1FAFF
            or char == "\ufe0f" or 0x1F3FB <= code <= 0x1F3FF)


def _cjk(char: str) -> bool:
    code = ord(char)
    return 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF


def _kept(text: str, i: int, protected: set[int]) -> bool:
    char = text[i]
    if i in protected:
        return True
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if char in (_ZWNJ, _ZWJ):
        if before and after and _letter(before) and _letter(after):
            return True
        return char == _ZWJ and bool(before and after) and _emoji(before) and _emoji(after)
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F:
        return bool(before) and not _CANDIDATES.match(before) and not before.isspace()
    if 0xE0100 <= code <= 0xE01EF:
        return bool(before) and _cjk(before)
    return False


# cheap screens before the exact class (its many ranges cost ~10x per character)
_ASCII_CANDIDATES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_COARSE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\xad\u034f\u061c\u115f-\u180e"
                     "\u200b-\u206f\u3164\ufe00-\ufeff\uffa0-\ufffb\ud800-\U0010ffff]")


def strip_invisible(text: str) -> tuple[str, int]:
    """`text` without invisible characters, and how many were removed."""
    screen = _ASCII_CANDIDATES if text.isascii() else _COARSE
    if screen.search(text) is None or _CANDIDATES.search(text) is None:
        return text, 0
    protected = {i for m in _FLAGS.finditer(text) for i in range(m.start() + 1, m.end())}
    out: list[str] = []
    removed = 0
    last = 0
    for match in _CANDIDATES.finditer(text):
        i = match.start()
        if _kept(text, i, protected):
            continue
        out.append(text[last:i])
        last = i + 1
        removed += 1
    out.append(text[last:])
    return "".join(out), removed


def is_invisible(char: str) -> bool:
    """Whether `char`, standing alone (e.g. decoded from an HTML entity), would be removed."""
    return len(char) == 1 and _CANDIDATES.match(char) is not None
