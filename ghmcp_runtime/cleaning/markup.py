"""Markup GitHub's page hides (HTML comments and their kin) removed from Markdown, code left alone.

GitHub renders Markdown with raw HTML passed through its sanitizer, so these never show: HTML
comments `<!-- … -->`, processing instructions `<? … ?>`, declarations `<!X … >` and CDATA
sections, whether inline in a paragraph or in an HTML block. An HTML block whose comment is still
open when the block ends hides the rest of the document. Code is shown as written: inside fenced
code blocks and code spans, `<!-- … -->` is text a reader sees, so it is kept; `Promise<string>`
and `<id>` are never touched anywhere. Entities that decode to invisible characters
(`&#8203;`, `&zwj;`) are removed outside code.

The scanner errs towards removing: where it cannot be sure a region is code (a fence in a nested
list, an indented code block, a multi-line code span) it treats it as prose, so a comment there is
removed and counted although a reader would see it; it never keeps markup that GitHub hides. The
test suite checks that property against an independent CommonMark parser.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ghmcp_runtime.cleaning.char_refs import INVISIBLE_REFERENCE
from ghmcp_runtime.cleaning.invisible import allowance
from ghmcp_runtime.cleaning.markup_coarse import LINK_DEFINITION, strip_coarse

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_QUOTE = re.compile(r"[ ]{0,3}>[ ]?")
_LIST = re.compile(r"[ ]{0,3}(?:[-+*]|\d{1,9}[.)])(?:[ ]+|$)")
_FENCE = re.compile(r"(?P<lead>[ ]{0,3}(?P<marker>(?:[-+*]|\d{1,9}[.)])[ ]{1,4})?)"
                    r"(?P<fence>`{3,}|~{3,})(?P<info>[^\r\n]*)")
_TAG_NAME = r"[A-Za-z][A-Za-z0-9-]*"
_ATTRIBUTE = (r"(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*"
              r"(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)")
_OPEN_TAG = rf"<{_TAG_NAME}{_ATTRIBUTE}*\s*/?>"
_CLOSE_TAG = rf"</{_TAG_NAME}\s*>"
_OPAQUE = re.compile(rf"{_OPEN_TAG}|{_CLOSE_TAG}|<[A-Za-z][A-Za-z0-9.+-]{{1,31}}:[^\s<>]*>")
_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|"
    "dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|"
    "head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|meta|nav|noframes|ol|optgroup|"
    "option|p|param|search|section|source|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
# HTML block starts (CommonMark types 1-7) and what ends each; None = a blank line
_HTML_STARTS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (re.compile(r"<(?:script|pre|style|textarea)(?:\s|>|$)", re.I),
     re.compile(r"</(?:script|pre|style|textarea)>", re.I)),
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
    (_TYPE_6 := re.compile(rf"</?(?:{_BLOCK_TAGS})(?:\s|/?>|$)", re.I), None),
    (re.compile(rf"(?:{_OPEN_TAG}|{_CLOSE_TAG})\s*$"), None),  # type 7: cannot interrupt a paragraph
)

CODE, HTML, PROSE, PARANOID, HIDDEN = "code", "html", "prose", "paranoid", "hidden"


@dataclass(slots=True)
class _Region:
    kind: str
    start: int
    end: int


@dataclass(slots=True)
class _Fence:
    char: str
    length: int
    column: int
    depth: int
    exact: bool  # opened right after a list marker, so its container's column is known


@dataclass(slots=True)
class _Block:
    """An HTML block. Its end markers (types 1-5) pile up when a line inside starts another
    block: the region then ends only after every one was seen, never before GitHub's block."""

    pending: list[re.Pattern[str]]
    blank_ends: bool  # types 6 and 7: a blank line ends it, once no marker is pending
    column: int
    depth: int
    # a type 7 start right after a paragraph line: GitHub may read it as the paragraph's
    # continuation, where a quote or list item may start and end a block with a comment still
    # open; one region per line makes a comment left open at a line's end hide the rest
    per_line: bool = False
    comment_open: bool = False

    def take(self, raw: str, rest: str, first: bool = False) -> bool:
        """Add a line; True when GitHub's block may end after it with a comment still open
        (then ours ends too, so the comment hides the rest)."""
        self.comment_open = _comment_state(self.comment_open, raw)
        still = [end for end in self.pending if not end.search(raw)]
        may_end = len(still) < len(self.pending)
        self.pending = still
        started = _html_start(rest)
        if (isinstance(started, re.Pattern) and started not in self.pending
                and not started.search(raw, raw.find("<") + 2)):
            self.pending.append(started)  # one entry per kind of end: a line costs O(1) checks
            # GitHub may have ended our block earlier and started this one fresh: whatever it
            # ends with, a blank line may end it too; ours lasts until both have happened
            self.blank_ends = self.blank_ends or not first
        if may_end and not self.comment_open and not self.done:
            self.per_line = True  # GitHub's block may have ended here: later lines are uncertain
        return may_end and self.comment_open

    @property
    def done(self) -> bool:
        return not self.pending and not self.blank_ends


def _lines(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(0)) for m in _LINE.finditer(text)]


def _unquote(line: str, limit: int | None = None) -> tuple[int, str]:
    depth = 0
    while limit is None or depth < limit:
        match = _QUOTE.match(line)
        if match is None:
            break
        depth += 1
        line = line[match.end():]
    return depth, line


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _blank(text: str) -> bool:
    return not text.strip()


def _content(rest: str) -> str:
    """A line's content after list markers and indentation."""
    content = rest
    while (match := _LIST.match(content)) is not None and match.end() > 0:
        content = content[match.end():]
    return content.lstrip(" ").rstrip("\r\n")


def _html_start(rest: str) -> re.Pattern[str] | bool | None:
    """The end condition of an HTML block starting on this line, False if none starts.

    Liberal on purpose: list markers and any indentation are skipped, and type 7 is recognized
    even where it could not interrupt a paragraph (treating text as HTML only removes more)."""
    if "<" not in rest:
        return False
    content = _content(rest)
    if not content.startswith("<"):
        return False
    for start, end in _HTML_STARTS:
        if start.match(content):
            return end
    return False


def _comment_state(open_: bool, line: str) -> bool:
    """Whether an HTML comment is open after `line`, given whether one was open before it."""
    position = 0
    while True:
        if open_:
            close = line.find("-->", position)
            if close < 0:
                return True
            open_, position = False, close + 3
        start = line.find("<!--", position)
        if start < 0:
            return False
        if line.startswith(("<!-->", "<!--->"), start):
            position = start + (5 if line.startswith("<!-->", start) else 6)
            continue
        open_, position = True, start + 4


def _opens_fence(rest: str) -> re.Match[str] | None:
    opening = _FENCE.match(rest)
    if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
        return None
    return opening


_OPENS_HIDDEN = re.compile(r"<[!?]|</[^A-Za-z>]")
# a line a definition must not take in: it may start an HTML block or a fence instead
_STRUCTURAL = re.compile(r"(?:\r?\n|\r)[ \t>]*[<`~]")


def _definition(text: str, offset: int, end: int) -> int | None:
    """Where a link definition starting this line ends: over later lines only if none of them
    could start a block (removing a block's first line would change how the rest reads)."""
    definition = LINK_DEFINITION.match(text, offset)
    if definition is not None and definition.end() > end and _STRUCTURAL.search(
            text, offset, definition.end()):
        definition = LINK_DEFINITION.match(text, offset, end)
    return definition.end() if definition is not None else None


def _definition_in_block(text: str, offset: int, end: int, raw: str) -> int | None:
    """Where a link definition filling this HTML-block line ends, if one does and nothing on the
    line could open hidden markup (removing the line then loses no comment the block tracks)."""
    if "]:" not in raw or _OPENS_HIDDEN.search(raw):
        return None
    definition = LINK_DEFINITION.match(text, offset, end)
    return definition.end() if definition is not None else None


_DEFINITIONS = re.compile("(?m:^)" + LINK_DEFINITION.pattern)


def _paranoid(text: str, offset: int, regions: list[_Region]) -> list[_Region]:
    """`regions`, then the rest of `text` as PARANOID regions around its link definitions."""
    for definition in _DEFINITIONS.finditer(text, offset):
        if definition.start() > offset:
            regions.append(_Region(PARANOID, offset, definition.start()))
        regions.append(_Region(HIDDEN, definition.start(), definition.end()))
        offset = definition.end()
    if offset < len(text):
        regions.append(_Region(PARANOID, offset, len(text)))
    return regions


def _segment(text: str) -> list[_Region]:
    """Split `text` into code, HTML-block and prose regions (line granularity). After a fence
    whose end is ambiguous (it depends on list nesting this scanner does not track), the rest of
    the text is PARANOID (its link definitions HIDDEN)."""
    regions: list[_Region] = []
    fence: _Fence | None = None
    closing: re.Pattern[str] | None = None
    block: _Block | None = None

    previous = ""
    hidden_until = -1  # a link definition's end (it may span lines)
    for offset, raw in _lines(text):
        if offset < hidden_until:
            if offset + len(raw) > hidden_until:  # its last line's break stays
                regions.append(_Region(PROSE, hidden_until, offset + len(raw)))
            continue
        line, previous_line = raw.expandtabs(4), previous
        previous = raw
        end = offset + len(raw)
        if fence is not None and closing is not None:
            depth, rest = _unquote(line, fence.depth)
            indent = _indent(rest)
            closes = closing.match(rest) is not None
            if depth < fence.depth or (not _blank(rest) and indent < fence.column and fence.exact):
                fence = None  # its container ended
            elif not _blank(rest) and indent < fence.column:
                return _paranoid(text, offset, regions)
            elif closes and (indent <= 3 or (fence.exact and indent <= fence.column + 3)):
                regions[-1].end = end
                fence = None
                continue
            elif closes and indent <= fence.column + 3:
                return _paranoid(text, offset, regions)
            else:
                regions[-1].end = end
                continue
        if block is not None:
            depth, rest = _unquote(line, block.depth)
            ends = depth < block.depth
            dedented = not ends and not _blank(rest) and _indent(rest) < block.column
            if (block.per_line or dedented) and not ends and _opens_fence(_unquote(line)[1]):
                # GitHub may read this line as a fence opening: pairing of fences is unknown
                return _paranoid(text, offset, regions)
            if dedented:
                ends = block.comment_open  # maybe its container ended: hide the rest (safe side)
                block.per_line = True  # else GitHub may read the lines after it anew (a fence)
            if not ends and block.blank_ends and _blank(rest):
                # GitHub's block ends here; ours goes on only while a marker is pending (we may
                # have read a line as HTML that GitHub did not), never with a comment open
                ends = not block.pending or block.comment_open
            if ends:
                block = None
            else:
                separate = block.per_line
                left_open = block.take(raw, rest)
                defined = _definition_in_block(text, offset, end, raw)
                if defined is not None:  # GitHub's block may have ended before it
                    regions += [_Region(HIDDEN, offset, defined), _Region(HTML, defined, end)]
                elif separate:
                    regions.append(_Region(HTML, offset, end))
                else:
                    regions[-1].end = end
                if block.done or left_open:
                    block = None
                continue
        if "]:" in raw and (defined := _definition(text, offset, end)) is not None:
            regions.append(_Region(HIDDEN, offset, defined))
            hidden_until = defined
            if end > hidden_until:
                regions.append(_Region(PROSE, hidden_until, end))
            continue
        if "`" not in raw and "~" not in raw and "<" not in raw:
            opening = None  # neither a fence nor an HTML block can start here: prose
        else:
            depth, rest = _unquote(line)
            opening = _opens_fence(rest)
        if opening is not None:
            char, length = opening["fence"][0], len(opening["fence"])
            fence = _Fence(char, length, len(opening["lead"]), depth,
                           exact=opening["marker"] is not None)
            closing = re.compile(rf"[ ]*{re.escape(char)}{{{length},}}[ ]*[\r\n]*$")
            regions.append(_Region(CODE, offset, end))
            continue
        started = _html_start(rest) if "<" in raw else False
        if started is not False:
            column = len(rest) - len(rest.lstrip(" -+*0123456789.)"))
            block = _Block([], started is None, column, depth,
                           per_line=started is None and _TYPE_6.match(_content(rest)) is None
                           and bool(regions) and regions[-1].kind == PROSE
                           and not _blank(previous_line))
            left_open = block.take(raw, rest, first=True)
            regions.append(_Region(HTML, offset, end))
            if block.done or left_open:
                block = None
            continue
        if regions and regions[-1].kind == PROSE:
            regions[-1].end = end
        else:
            regions.append(_Region(PROSE, offset, end))
    return regions


class _Finder:
    """text.find with memory: amortized linear over a scan whose start only moves forward."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.memo: dict[str, tuple[int, int]] = {}  # needle -> (searched from, found at or -1)

    def find(self, needle: str, start: int) -> int:
        memo = self.memo.get(needle)
        if memo is not None and memo[0] <= start and (memo[1] < 0 or memo[1] >= start):
            return memo[1]
        found = self.text.find(needle, start)
        self.memo[needle] = (start, found)
        return found


_CLOSERS = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"), ("<!", ">"))
# in raw HTML a browser also hides bogus comments: `<!` and `</` not followed by a letter
_HTML_SPECIAL = re.compile(r"<!|<\?|</[^A-Za-z>]|&")
_PROSE_SPECIAL = re.compile(r"[\\`<&]")
_RUN = re.compile(r"`+")
_TAG_START = re.compile(r"</?[A-Za-z]")
OPAQUE_CAP = 2000  # longest raw tag looked for; past it code spans stop counting (safe side)


@dataclass(slots=True)
class _Scan:
    text: str
    regions: list[_Region]
    blanks: list[int]  # offsets where blank lines start
    out: list[str] = field(default_factory=list)
    removed: int = 0
    spans_off_until: int = -1  # no code span is trusted before this offset
    finder: _Finder = field(init=False)
    next_code: list[int] = field(init=False)  # per region: where the next code region starts
    runs: dict[int, list[int]] | None = None  # backtick run length -> where such runs start

    def __post_init__(self) -> None:
        self.finder = _Finder(self.text)
        starts = [r.start for r in self.regions if r.kind == CODE] + [len(self.text)]
        self.next_code = [starts[bisect.bisect_right(starts, r.start)] if r.start < starts[-1]
                          else len(self.text) for r in self.regions]

    def paragraph_limit(self, i: int, index: int) -> int:
        """A paragraph ends no later than the next blank line or code region."""
        blank = bisect.bisect_right(self.blanks, i)
        return min(self.blanks[blank] if blank < len(self.blanks) else len(self.text),
                   self.next_code[index])

    def next_run(self, length: int, start: int, end: int) -> int:
        """Where the first backtick run of exactly `length` within [start, end) starts, or -1:
        from an index built once, so no run makes the scan search its paragraph again."""
        if self.runs is None:
            self.runs = {}
            for match in _RUN.finditer(self.text):
                self.runs.setdefault(match.end() - match.start(), []).append(match.start())
        starts = self.runs.get(length, [])
        at = bisect.bisect_left(starts, start)
        return starts[at] if at < len(starts) and starts[at] + length <= end else -1

    def hidden_end(self, i: int, limit: int) -> int | None:
        """End of the hidden markup starting at `i` if it is closed before `limit`."""
        text = self.text
        if text.startswith("<!-->", i):
            return i + 5
        if text.startswith("<!--->", i):
            return i + 6
        for opener, closer in _CLOSERS:
            if text.startswith(opener, i):
                if opener == "<!" and not text[i + 2:i + 3].isalpha():
                    return None
                close = self.finder.find(closer, i + len(opener))
                return close + len(closer) if close >= 0 and close + len(closer) <= limit else None
        return None

    def entity(self, i: int) -> int:
        """Past the entity at `i`, dropped if it decodes to an invisible character, else past '&'."""
        match = INVISIBLE_REFERENCE.match(self.text, i)
        if match is None:
            self.out.append("&")
            return i + 1
        self.removed += 1
        return match.end()

    def run(self) -> str:
        text, i, index = self.text, 0, 0
        while i < len(text):
            while index < len(self.regions) - 1 and i >= self.regions[index].end:
                index += 1
            region = self.regions[index]
            if region.kind == CODE:
                self.out.append(text[i:region.end])
                i = region.end
            elif region.kind == HTML:
                i = self.html(i, region.end)
            elif region.kind == HIDDEN:
                self.removed += 1
                i = region.end
            elif region.kind == PARANOID:
                i = self.html(i, region.end, comments_close=False)
            else:
                i = self.prose(i, region, index)
        return "".join(self.out)

    def html(self, i: int, end: int, comments_close: bool = True) -> int:
        """Raw HTML up to `end`: everything hidden goes, and a comment left open hides the rest.
        With `comments_close` false (the structure is unknown), any comment hides the rest."""
        text = self.text
        while i < end:
            match = _HTML_SPECIAL.search(text, i, end)
            stop = match.start() if match else end
            self.out.append(text[i:stop])
            i = stop
            if i >= end:
                break
            if text[i] == "&":
                i = self.entity(i)
                continue
            self.removed += 1
            closed = self.hidden_end(i, end)
            if text.startswith("<!--", i) and (closed is None or not comments_close):
                return len(text)  # a comment left open in raw HTML hides the rest of the page
            if closed is None:  # a bogus comment, ended by the next '>'
                close = self.finder.find(">", i)
                return len(text) if close < 0 else close + 1
            i = closed
        return i

    def prose(self, i: int, region: _Region, index: int) -> int:
        text = self.text
        while i < region.end:
            match = _PROSE_SPECIAL.search(text, i, region.end)
            stop = match.start() if match else region.end
            self.out.append(text[i:stop])
            i = stop
            if i >= region.end:
                break
            char = text[i]
            if char == "\\":
                self.out.append(text[i:i + 2])
                i += 2
            elif char == "`":
                i = self.code_span(i, region, self.paragraph_limit(i, index))
            elif char == "&":
                i = self.entity(i)
            else:
                limit = self.paragraph_limit(i, index)
                end = self.hidden_end(i, limit)
                if end is not None:
                    self.removed += 1
                    if "\n" in text[i:end] or "\r" in text[i:end]:
                        # GitHub may have ended the paragraph inside it: backtick pairing after
                        # it is unknown, so no later code span of the paragraph is trusted
                        self.spans_off_until = self.paragraph_limit(end, index)
                    return self.spanned(index, end)
                i = self.opaque(i, limit)
        return i

    def spanned(self, index: int, end: int) -> int:
        """Where removal of a prose comment ending at `end` must stop. If the comment spans HTML
        blocks, GitHub may instead have read it as unclosed text and each block as raw HTML; a
        block whose own hidden markup reaches past `end` (a comment left open) extends it."""
        reach = end
        for region in self.regions[index + 1:]:
            if region.start >= end:
                break
            if region.kind == HTML:
                mark = (len(self.out), self.removed)
                reach = max(reach, self.html(region.start, region.end))
                del self.out[mark[0]:]
                self.removed = mark[1]
        return reach

    def opaque(self, i: int, limit: int) -> int:
        """Copy a raw tag or autolink whole (a backtick inside one opens no code span), or '<'."""
        match = _OPAQUE.match(self.text, i, min(limit, i + OPAQUE_CAP))
        if match is None and _TAG_START.match(self.text, i) and limit > i + OPAQUE_CAP:
            self.spans_off_until = limit  # maybe a longer tag: trust no code span in it
        end = match.end() if match else i + 1
        self.out.append(self.text[i:end])
        return end

    def code_span(self, i: int, region: _Region, limit: int) -> int:
        """Copy a code span or the literal backticks. Only a span closed on the same line with no
        table pipe inside is certain; when a run could pair otherwise (closed on a later line, or
        split by a pipe), no later span of the paragraph is trusted (its pairing could differ)."""
        text = self.text
        run = _RUN.match(text, i)
        assert run is not None
        after = run.end()
        if i < self.spans_off_until:
            self.out.append(run.group(0))
            return after
        line_end = min(p for p in (self.finder.find("\n", i), self.finder.find("\r", i),
                                   region.end) if p >= 0)
        length = after - i
        close = self.next_run(length, after, line_end)
        pipe = self.finder.find("|", after)
        if close >= 0 and not 0 <= pipe < close:
            self.out.append(text[i:close + length])
            return close + length
        if close >= 0 or self.next_run(length, line_end, limit) >= 0:
            self.spans_off_until = limit
        self.out.append(run.group(0))
        return after


def strip_hidden_markup(text: str) -> tuple[str, int]:
    """`text` without markup GitHub hides, and how many pieces were removed.

    The structure-aware scan costs Python work per line and per special character and several
    regex passes per character; a text longer than `PRECISE_MAX_CHARS` or with more lines and
    special characters than `PRECISE_BUDGET` goes through `markup_coarse` instead (one pass per
    opener kind, linear; code is not told apart there). So a short field costs at most about a
    millisecond and a long one a bounded amount per character (docs/BENCHMARKS.md)."""
    openers = text.count("<") + text.count("&") + text.count("]:")
    if openers == 0:
        return text, 0
    if len(text) > PRECISE_MAX_CHARS or (openers + text.count("`") + text.count("\\")
                                         + text.count("\n") + text.count("\r")) > PRECISE_BUDGET:
        return strip_coarse(text, allowance(text, PIECES_CAP))
    if _MAYBE_HIDDEN.search(text) is None:
        return text, 0
    return strip_precise(text)


# The structure-aware scan's allowance (~1 ms at worst): its Python work per line and special
# character, and its regex passes over each line, several per character
PRECISE_BUDGET = 200
PRECISE_MAX_CHARS = 8192
# pieces the coarse pass removes one by one (each a regex-engine step); past it, a cut
PIECES_CAP = (256, 64)
# nothing can be hidden without one of these: `<!`, `<?`, `</` + a non-letter, a link
# definition's `]:`, an entity
_MAYBE_HIDDEN = re.compile(rf"<[!?]|</[^A-Za-z>]|\]:|{INVISIBLE_REFERENCE.pattern}")


def strip_precise(text: str) -> tuple[str, int]:
    """The structure-aware scan (code kept as written), whatever its cost."""
    blanks = [offset for offset, line in _lines(text) if _blank(line)]
    scan = _Scan(text, _segment(text), blanks)
    return scan.run(), scan.removed
