"""Characters a reader of GitHub's page cannot see: removed from untrusted text, and counted.

Removed: control characters (tab and line breaks stay), bidi embeddings, overrides, isolates and
marks, zero-width and other invisible format characters (Unicode category Cf, except the visible
prepended concatenation marks), Hangul fillers, lone surrogates, interlinear annotations,
variation selectors and tag characters. Kept where they carry meaning, since readers see their
effect:
- a zero-width (non-)joiner between two visible non-ASCII characters (Persian, Indic scripts,
  emoji sequences, where a joiner may follow an emoji's variation selector);
- the one variation selector a character needs: VS15/VS16 right after a character with a text
  and an emoji presentation (after a keycap base only before the keycap mark). Any other
  selector goes, ideographic variants included: one per visible character would carry four
  (eight) hidden bits each;
- the tag sequences of the three subdivision flags Unicode recommends (England, Scotland, Wales).
Everything else in these classes goes, including inside code: invisible characters in code are
the Trojan Source attack.

Cost: one regular expression, led by a single character class so the engine skips ordinary
text at memchr-like speed, decides each candidate from its neighbours. Every candidate costs
the engine a step, so a field pays for a bounded number of removals and of joiners or selectors
looked at (`REMOVALS_CAP`, `CONTEXT_CAP`: one per so many characters); past either the text is
cut there, counted as one more piece (a text made of that many invisible characters is an
attack, not content).
"""

from __future__ import annotations

import re
from functools import cache

_BMP_ALWAYS = ("\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5"
               "\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0d"
               "\ufeff\uffa0\ufff9-\ufffb\ud800-\udfff")
_ASTRAL_ALWAYS = ("\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                  "\U000e0100-\U000e01ef")
_BMP_CONTEXTUAL = "\u200c\u200d\ufe0e\ufe0f"  # kept or removed depending on their neighbours
_ASTRAL_CONTEXTUAL = "\U000e0000-\U000e007f"  # tags, kept in three flags
CANDIDATE_CLASS = _BMP_ALWAYS + _BMP_CONTEXTUAL + _ASTRAL_ALWAYS + _ASTRAL_CONTEXTUAL
_CANDIDATES = re.compile(f"[{CANDIDATE_CLASS}]")


def _ranges(char_class: str) -> tuple[tuple[int, int], ...]:
    out, i = [], 0
    while i < len(char_class):
        if i + 2 < len(char_class) and char_class[i + 1] == "-":
            out.append((ord(char_class[i]), ord(char_class[i + 2])))
            i += 3
        else:
            out.append((ord(char_class[i]), ord(char_class[i])))
            i += 1
    return tuple(sorted(out))


CANDIDATE_RANGES = _ranges(CANDIDATE_CLASS)  # (first, last) code points
# Cf characters that render visibly (prepended concatenation marks) and are therefore kept
VISIBLE_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2"
                           "\U000110bd\U000110cd")
_FLAGS = ("\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
          "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
          "\U0001f3f4\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f")
_WIDE = f"[^\\x00-\\x7f\\s{CANDIDATE_CLASS}]"  # a visible non-ASCII character
# characters with a text and an emoji presentation (emoji-variation-sequences.txt, by block)
_PRESENTABLE = ("[\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2"
                "\u25aa-\u27bf\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297\u3299"
                "\U0001f000-\U0001faff]")
# right after a character a rule keeps (the character itself is the last one looked behind)
_KEPT_BMP = (
    rf"(?<={_WIDE}[\u200c\u200d])(?={_WIDE})",
    rf"(?<=\ufe0f\u200d)(?={_WIDE})",
    rf"(?<={_PRESENTABLE}[\ufe0e\ufe0f])",
    r"(?<=[0-9#*]\ufe0f)(?=\u20e3)",
)
_FLAG_START = "\U0001f3f4\U000e0067\U000e0062"
_KEPT_IN_FLAG = "|".join(f"(?<={re.escape(flag[:k + 1])})(?={re.escape(flag[k + 1:])})"
                         for flag in _FLAGS for k in range(1, len(flag)))
FLAGS_CAP = 64  # flags one field may have looked at (each tag in one costs 18 looks)


def _removal(candidates: str, kept: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(f"[{candidates}](?!{'|'.join(kept)})")


# texts without astral characters leave the astral ranges out of the leading class (the
# engine checks a character against a BMP class several times faster); texts without a flag
# leave out the looks that keep a flag's tags
@cache
def _removals() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The removal expressions for BMP-only texts, texts with astral characters, and texts with
    a flag: compiled with the first text that has a candidate (~10 ms, which start-up need not
    pay: logs import this module's character class)."""
    return (_removal(_BMP_ALWAYS + _BMP_CONTEXTUAL, _KEPT_BMP),
            _removal(CANDIDATE_CLASS, _KEPT_BMP),
            _removal(CANDIDATE_CLASS, (*_KEPT_BMP, _KEPT_IN_FLAG)))


_FLAG_STARTS = re.compile(re.escape(_FLAG_START))
_SCREEN_BMP = re.compile(f"[{_BMP_ALWAYS}{_BMP_CONTEXTUAL}]")
_CONTEXTUAL_BMP = re.compile(f"[{_BMP_CONTEXTUAL}]")
_PAST_64_CONTEXTUAL = re.compile(f"(?:[^{_BMP_CONTEXTUAL}]*+[{_BMP_CONTEXTUAL}]){{64}}")
_PAST_1_CONTEXTUAL = re.compile(f"[^{_BMP_CONTEXTUAL}]*+[{_BMP_CONTEXTUAL}]")
_ASCII_CANDIDATES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_CONTROLS = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])

# what a field may cost one by one: at least the first number, else one per so many characters
REMOVALS_CAP = (256, 64)  # removed characters
CONTEXT_CAP = (1024, 16)  # joiners and selectors looked at


def allowance(text: str, cap: tuple[int, int]) -> int:
    floor, per = cap
    return max(floor, len(text) // per)


def strip_invisible(text: str, cap: int | None = None) -> tuple[str, int]:
    """`text` without invisible characters, and how many were removed (a cut counts one)."""
    if text.isascii():
        if _ASCII_CANDIDATES.search(text) is None:
            return text, 0
        kept = text.encode("ascii").translate(None, _ASCII_CONTROLS).decode("ascii")
        return kept, len(text) - len(kept)
    astral = len(text.encode("utf-16-le", "surrogatepass")) > 2 * len(text)
    if (_CANDIDATES if astral else _SCREEN_BMP).search(text) is None:
        return text, 0
    cut = False
    removals = allowance(text, REMOVALS_CAP) if cap is None else cap
    context = allowance(text, CONTEXT_CAP)
    if sum(map(text.count, _BMP_CONTEXTUAL)) > context:
        text, cut = _cut_past_contextual(text, context), True
    bmp_only, with_astral, with_flag = _removals()
    removal = bmp_only
    if astral:
        removal = with_flag if _FLAG_START in text else with_astral
        if removal is with_flag:
            text, cut_flags = _cut_past(_FLAG_STARTS, text, FLAGS_CAP)
            cut = cut or cut_flags
    text, removed, cut_here = split_capped(removal, text, removals)
    return text, removed + (cut or cut_here)


def _cut_past_contextual(text: str, budget: int) -> str:
    """`text` up to its joiner or selector past the first `budget` ones (the caller counted
    more than that)."""
    at = 0
    for past, times in ((_PAST_64_CONTEXTUAL, budget // 64), (_PAST_1_CONTEXTUAL, budget % 64)):
        for _ in range(times):
            match = past.match(text, at)
            assert match is not None
            at = match.end()
    following = _CONTEXTUAL_BMP.search(text, at)
    assert following is not None
    return text[:following.start()]


def _cut_past(piece: re.Pattern[str], text: str, budget: int) -> tuple[str, bool]:
    """`text` up to its match of `piece` past the first `budget` ones, and whether it was cut."""
    parts = piece.split(text, maxsplit=budget) if budget > 0 else [text]
    rest = piece.search(text, len(text) - len(parts[-1])) if len(parts) > budget else None
    return (text, False) if rest is None else (text[:rest.start()], True)


def split_capped(piece: re.Pattern[str], text: str, budget: int) -> tuple[str, int, bool]:
    """`text` without up to `budget` matches of `piece` (its groups' text kept), how many matched,
    and whether the text was cut at a match past the budget: each match is a step of the regex
    engine, so the budget bounds the work."""
    parts = piece.split(text, maxsplit=budget) if budget > 0 else [text]
    matches = (len(parts) - 1) // (piece.groups + 1)
    rest_at = len(text) - len(parts[-1])
    rest = piece.search(text, rest_at) if matches == budget else None
    if rest is not None:
        parts[-1] = text[rest_at:rest.start()]
    return "".join(filter(None, parts)), matches, rest is not None


def is_invisible(char: str) -> bool:
    """Whether `char`, standing alone (e.g. decoded from an HTML entity), would be removed."""
    return len(char) == 1 and _CANDIDATES.match(char) is not None
