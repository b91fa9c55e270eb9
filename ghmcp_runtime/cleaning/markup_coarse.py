"""Hidden markup removed without reading the Markdown's structure: the fallback for text whose
structure is too costly to read (see `markup.strip_hidden_markup`).

Every `<` that could open hidden markup is treated as raw HTML, code included, and every piece is
removed with one regular expression, so the work is the regex engine's: linear in the text,
whatever the text holds. What a piece covers is the union of what GitHub's page could hide
from that opener, never less:
- `<!-->` and `<!--->` are empty comments;
- a comment closed on its own line ends there (inline, or an HTML block line, the first `-->`
  closes it either way);
- a comment opening a line right after a blank line (or the text) starts an HTML block no other
  block can hold, which ends at the first `-->`, so long as no `<!--` and no end of another
  block kind (`?>`, `]]>`, `</script>`, `</pre>`, `</style>`, `</textarea>`) comes before;
- any other comment may be left open in raw HTML, which hides the rest of the page;
- `<?`, `<!` and `</` + a non-letter open a bogus comment, ended by the next `>` (stopping short
  of a `<!--`, which is judged on its own);
- link reference definitions (`LINK_DEFINITION`), wherever a line could hold one;
- character references that decode to an invisible character (`char_refs`).
Code spans and blocks are not recognized, so a comment shown as code is removed too (counted).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from ghmcp_runtime.cleaning.char_refs import INVISIBLE_REFERENCE
from ghmcp_runtime.cleaning.invisible import split_capped

# Each pass looks for a literal opener (the engine skips to it at memchr speed, however many
# other `<` the text holds); long stretches are eaten by possessive runs of characters that
# cannot end a piece. Comments go first: a bogus comment's `>` never lies past a comment's end,
# so removing comments first never shortens what a later pass removes.
_UP_TO_CLOSE_ON_LINE = r"[^\r\n-]*+(?:-(?!->)[^\r\n-]*+)*+-->"
_AFTER_BLANK = r"(?:(?<=\n\n<!--)|(?<=\r\r<!--)|(?<=\n\r\n<!--)|(?<![\s\S]{5}))"
_UP_TO_CLOSE_IN_BLOCK = (r"[^<?\]-]*+(?:(?:<(?!!--|/(?i:script|pre|style|textarea))|\?(?!>)"
                         r"|\](?!\]>)|-(?!->))[^<?\]-]*+)*+-->")
_BOGUS_BODY = r"[^>]*+>?"
_BREAK = r"(?:\r?\n|\r)"
_QUOTES = r"(?:[ ]{0,3}>[ ]?)*+"


def _title(open_: str, close: str) -> str:
    """A link title: may span lines, not a blank one."""
    body = rf"(?:[^{close}\\\r\n]++|\\.|{_BREAK}(?![ \t>]*{_BREAK}))*+"
    return rf"{re.escape(open_)}{body}{re.escape(close)}"


# A link reference definition (`[label]: destination "title"`, the `[//]: # (…)` comment idiom
# among them): GitHub's page shows nothing of it. Liberal on purpose: any run of quote and list
# markers and indentation before it (nesting is not tracked), label and title over several lines,
# and a line in a paragraph or code (where GitHub shows it) matches too: treating text as a
# definition only removes more.
LINK_DEFINITION = re.compile(
    r"[ \t>*+\-.)0-9]*+"  # quote and list markers, indentation (any mix: removes more)
    rf"\[(?:[^\[\]\\]++|\\.)*+\]:"
    rf"[ \t]*+(?:{_BREAK}{_QUOTES}[ \t]*+)?"
    r"(?:<[^<>\r\n]*>|[^\s<>]\S*+)"
    rf"(?:(?:[ \t]++|[ \t]*+{_BREAK}{_QUOTES}[ \t]*+)(?:{_title(chr(34), chr(34))}|{_title(chr(39), chr(39))}"
    rf"|{_title('(', ')')}))?"
    rf"[ \t]*+(?={_BREAK}|\Z)"
)
# a definition on a later line, found by the line break before it (a literal-led scan; the
# break goes with it, the one after it stays)
_DEFINITION_AFTER_BREAK = re.compile(r"\n" + LINK_DEFINITION.pattern)
_DEFINITION_AFTER_CR = re.compile(r"\r" + LINK_DEFINITION.pattern)  # old Mac line breaks


def _definitions(text: str, budget: int) -> tuple[str, int, bool]:
    removed, cut = 0, False
    first = LINK_DEFINITION.match(text)
    if first is not None and budget > 0:
        text, removed = text[first.end():], 1
    for after in (_DEFINITION_AFTER_BREAK, _DEFINITION_AFTER_CR) if "\r" in text else (
            _DEFINITION_AFTER_BREAK,):
        text, count, cut_here = split_capped(after, text, budget - removed)
        removed, cut = removed + count, cut or cut_here
    return text, removed, cut


def _pass(pattern: str) -> Callable[[str, int], tuple[str, int, bool]]:
    return partial(split_capped, re.compile(pattern))


# (a literal no piece of the pass lacks: the pass is skipped without it, the pass)
_PASSES = (
    ("<!--", _pass("<!--(?:" + "|".join((
        r"-?>",
        _AFTER_BLANK + _UP_TO_CLOSE_IN_BLOCK,  # first: one scan covers its own line too
        _UP_TO_CLOSE_ON_LINE,
        r"[\s\S]*+",
    )) + ")")),
    ("<!", _pass("<!" + _BOGUS_BODY)),
    ("]:", _definitions),
    ("<?", _pass(r"<\?" + _BOGUS_BODY)),
    ("</", _pass(r"</[^A-Za-z>]" + _BOGUS_BODY)),
    ("&", _pass(INVISIBLE_REFERENCE.pattern)),
)


def strip_coarse(text: str, cap: int) -> tuple[str, int]:
    """`text` without every piece GitHub's page could hide, and how many pieces were removed.
    Past `cap` pieces, the text from the next piece on is removed as one more piece."""
    removed, cut = 0, False
    for literal, strip in _PASSES:
        if literal not in text:
            continue
        text, count, cut_here = strip(text, cap - removed)
        removed, cut = removed + count, cut or cut_here
    return text, removed + cut

