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
- character references that decode to an invisible character (`char_refs`).
Code spans and blocks are not recognized, so a comment shown as code is removed too (counted).
"""

from __future__ import annotations

import re

from ghmcp_runtime.char_refs import INVISIBLE_REFERENCE
from ghmcp_runtime.invisible import split_capped

# Each pass looks for a literal opener (the engine skips to it at memchr speed, however many
# other `<` the text holds); long stretches are eaten by possessive runs of characters that
# cannot end a piece. Comments go first: a bogus comment's `>` never lies past a comment's end,
# so removing comments first never shortens what a later pass removes.
_UP_TO_CLOSE_ON_LINE = r"[^\r\n-]*+(?:-(?!->)[^\r\n-]*+)*+-->"
_AFTER_BLANK = r"(?:(?<=\n\n<!--)|(?<=\r\r<!--)|(?<=\n\r\n<!--)|(?<![\s\S]{5}))"
_UP_TO_CLOSE_IN_BLOCK = (r"[^<?\]-]*+(?:(?:<(?!!--|/(?i:script|pre|style|textarea))|\?(?!>)"
                         r"|\](?!\]>)|-(?!->))[^<?\]-]*+)*+-->")
_BOGUS_BODY = r"[^>]*+>?"
_PASSES = tuple(re.compile(pattern) for pattern in (
    "<!--(?:" + "|".join((
        r"-?>",
        _AFTER_BLANK + _UP_TO_CLOSE_IN_BLOCK,  # first: one scan covers its own line too
        _UP_TO_CLOSE_ON_LINE,
        r"[\s\S]*+",
    )) + ")",
    "<!" + _BOGUS_BODY,
    r"<\?" + _BOGUS_BODY,
    r"</[^A-Za-z>]" + _BOGUS_BODY,
    INVISIBLE_REFERENCE.pattern,
))


def strip_coarse(text: str, cap: int) -> tuple[str, int]:
    """`text` without every piece GitHub's page could hide, and how many pieces were removed.
    Past `cap` pieces, the text from the next piece on is removed as one more piece."""
    removed, cut = 0, False
    for piece in _PASSES:
        text, count, cut_here = split_capped(piece, text, cap - removed)
        removed, cut = removed + count, cut or cut_here
    return text, removed + cut

