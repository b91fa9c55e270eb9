"""What GitHub's page hides in Markdown, decided from a parse: pulldown-cmark (through pyromark, a
CommonMark 0.31 parser with GitHub's tables, task lists, strikethrough and footnotes), which reads
any input in linear time and gives every event its exact byte range in the source.

Hidden, and removed (each piece counted once):
- HTML comments, processing instructions, declarations and CDATA, inline or in HTML blocks, and
  a comment an HTML block leaves open, which hides the rest of the page up to a raw `-->`
  (`raw_html`);
- link reference definitions (pyromark reports them; a second one of the same label is not
  reported, so the source no event covers is looked at too) and footnote definitions nothing
  refers to (cmark-gfm renders neither);
- a fenced code block's info string (rendered as an attribute, if at all);
- a table row's cells past the header's count;
- character references that decode to an invisible character, outside code.
The rest of the text is kept byte for byte: the reader of the result still reads Markdown.

GitHub renders with cmark-gfm (CommonMark 0.29); where the two specs differ this module takes the
reading that removes more (see `raw_html`). tests/runtime/test_markup.py checks the
property against cmark-gfm itself: nothing its rendering hides survives.

A text's events cost Python work each, and the densest texts make about one and a half per
character; a text may spend `EVENTS_PER_CHARACTER` events per character (at least `EVENTS_FLOOR`) and hold
one HTML block, code block or footnote or link definition per `BYTES_PER_NODE` bytes, and is cut where either runs out
(the rest counted as one more piece); so may hidden pieces inside raw HTML (see `raw_html`). A
plain issue body makes one event per 12 characters; docs/BENCHMARKS.md §10 has the costs.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

import pyromark

from ghmcp_runtime.cleaning.char_refs import INVISIBLE_REFERENCE
from ghmcp_runtime.cleaning.raw_html import RawHtml

_O = pyromark.Options
OPTIONS = _O.ENABLE_TABLES | _O.ENABLE_STRIKETHROUGH | _O.ENABLE_TASKLISTS | _O.ENABLE_FOOTNOTES
EVENTS_PER_CHARACTER = 0.2
# a field under ~60 KB may spend as many events as a 60 KB one: tables of short cells (0.4 events
# per character) up to ~30 KB are read whole, and no field costs more than a 64 KiB one
EVENTS_FLOOR = 12288
# HTML blocks, code blocks and footnote and link definitions cost about ten events' work each: a
# text may hold one per `BYTES_PER_NODE` bytes (at least `NODES_FLOOR`)
BYTES_PER_NODE = 64
NODES_FLOOR = 64
# hidden pieces inside raw HTML: a text may hold one per `BYTES_PER_PIECE` (at least `PIECES_FLOOR`)
BYTES_PER_PIECE = 64
PIECES_FLOOR = 256
# HTML block starts CommonMark 0.30 and 0.31 added (`textarea`, `search`, declarations in lower
# case) and the one they dropped (`source`): GitHub's cmark-gfm follows 0.29
_READ_APART = re.compile(rb"[ \t]*(?i:<(?:textarea|/?search)(?:[\t\n\f\r />]|$)|<![a-z])")
# a `<script`, `<pre`, `<style` or `<textarea` block ends with the first line that holds one of
# their end tags (this parser waits for its own, GitHub's does not): after it GitHub reads Markdown
_SCRIPT_LIKE = re.compile(rb"[ \t]*(?i:<(?:script|pre|style|textarea)(?:[\t\n\f\r >]|$))")
_SCRIPT_END = re.compile(rb"(?i)</(?:script|pre|style|textarea)>")
# a GFM table's delimiter row (with a pipe, so not a setext underline or a rule)
_DELIMITER_ROW = re.compile(rb"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*(?:\r\n?|\n|$)")
# inline HTML that hides what it holds, by its opener, and what closes it
_INLINE_HIDING = re.compile(rb"<!--|<\?|<!\[CDATA\[|<![A-Za-z]")
_CLOSERS = {b"<!--": b"-->", b"<?": b"?>", b"<![CDATA[": b"]]>"}
_SOURCE_TAG = re.compile(rb"(?i)</?source(?:[\t\n\f\r />]|$)")
# leaf blocks whose inline content may hold inline HTML
_LEAVES = frozenset(("Paragraph", "Heading", "TableCell", "Item"))
# container blocks: their range spans their children, so they cover no source of their own
_CONTAINERS = frozenset(("Item", "TableHead", "TableRow", "BlockQuote", "List", "Table",
                         "FootnoteDefinition"))
_ENTITY = re.compile(INVISIBLE_REFERENCE.pattern.encode())
_BLANK = b" \t\r\n"
_CELL_EDGE = b" \t\r\n|"
_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_END = re.compile(rb"[\r\n]")
# events GitHub may render without a tag of its own (a tight list's paragraph), so a bogus comment
# an HTML block left open is still open after them
_UNTAGGED = ("Paragraph", "HtmlBlock")
_QUOTE_ITEM_FOOTNOTE = frozenset(("BlockQuote", "Item", "FootnoteDefinition"))
# where a text is cut (see _Walk.cut) the reader is told, so a cut is not taken for its end
CUT_NOTE = " [… {} more characters not shown: this server could not check them for hidden content]"
_HIDING = b"!?"  # after `<`: a comment, declaration, CDATA section or processing instruction


def strip_hidden_markup(text: str) -> tuple[str, int]:
    """`text` without what GitHub's rendering of it hides, and how many pieces were removed."""
    try:
        raw = text.encode()
    except UnicodeEncodeError:  # lone surrogates: parsed as the U+FFFD a reader sees (3 bytes too)
        raw = text.encode("utf-8", "surrogatepass")
        text = _SURROGATE.sub("\ufffd", text)
    walk = _Walk(raw, text)
    spans = walk.spans()
    if not spans:
        return text, 0
    kept, pieces, at, note = [], 0, 0, ""
    for start, end in sorted(spans):
        if end <= at:
            continue  # inside a piece already removed
        if start >= at:
            pieces += 1
            kept.append(raw[at:start])
            if start == walk.end:  # the rest was cut, not found hidden: say so
                note = CUT_NOTE.format(len(raw[start:].decode("utf-8", "surrogatepass")))
        at = end
    kept.append(raw[at:])
    return b"".join(kept).decode("utf-8", "surrogatepass") + note, pieces


class _Walk:
    """One pass over a document's events, collecting the byte spans to remove."""

    def __init__(self, raw: bytes, text: str) -> None:
        self.raw, self.text = raw, text
        self.hidden: list[tuple[int, int]] = []
        self.html = RawHtml(raw, self.hidden, max(PIECES_FLOOR, len(raw) // BYTES_PER_PIECE))
        self.code: list[tuple[int, int]] = []  # code spans and blocks: references there show
        self.footnotes: list[tuple[str, int, int]] = []
        self.footnote_labels: set[str] = set()
        self.end = len(raw)  # where the text is cut (see `cut`)
        self.nodes_left = max(NODES_FLOOR, len(raw) // BYTES_PER_NODE)
        self.referenced: set[str] = set()
        self.defined = sorted((d["span"]["start"], d["span"]["end"])
                              for d in pyromark.reference_definitions(text, options=OPTIONS).values())
        self.hidden += self.defined
        self.leaf_start = self.leaf_end = 0  # the paragraph (or other leaf block) being read
        self.line_start = True  # whether the next inline event starts a line of its block
        self.first_line = False  # whether it is on the first line of its paragraph
        self.after_definition = False  # whether source no event covers, a definition, precedes it
        self.containers = 0  # block quotes, list items and footnote definitions open
        self.unmatched_tick = -1  # the paragraph (its start) where a backtick run found no pair
        self.footnote_left_open = False  # whether a footnote's raw HTML left something open
        self.maybe_source = _SOURCE_TAG.search(raw) is not None
        self.maybe_cdata = b"<![CDATA[" in raw

    def spans(self) -> list[tuple[int, int]]:
        raw, hidden, html = self.raw, self.hidden, self.html
        covered = 0  # where the source last covered by an event ends (a gap holds definitions)
        block: list[tuple[int, int]] = []  # the lines of the HTML block being read
        script_like = False  # whether it is a <script>, <pre>, <style> or <textarea> block
        hidden_to = -1  # while raw HTML may hide the renderer's output: the end of what it hid
        body_html, body_hidden_to = html, hidden_to  # the text's, while a footnote's is read
        # events are probed by key, not matched against pyromark's TypedDicts: Any
        events: Iterator[tuple[Any, Any]] = pyromark.events_with_range(
            self.text, options=OPTIONS, merge_text=True)
        allowance = max(EVENTS_FLOOR, int(len(self.text) * EVENTS_PER_CHARACTER))
        reached = 0  # the furthest event start read (an End event's start is its block's)
        for event, where in islice(events, allowance):
            start, end = where["start"], where["end"]
            if start > reached:
                reached = start
            if start > covered:
                self.after_definition = raw.find(b"[", covered, start) >= 0
                if self.after_definition:
                    self._gap(covered, start)
                covered = start
            if type(event) is str:  # SoftBreak, HardBreak, Rule
                covered = end if end > covered else covered
                self.line_start, self.first_line = True, False
                if hidden_to >= 0:
                    if event == "SoftBreak":
                        hidden_to = covered
                    else:
                        html.gap(hidden_to)
                        hidden_to = -1
                continue
            if "Text" in event:
                if self.first_line:
                    self.first_line = False
                    if raw[start] in b"[<" and self._first_line_differs(start):
                        break
                if self.line_start and raw[start] == 60 and self.containers and self._lazy_tag(start):
                    break
                if self.maybe_source and self._splits_specs(start):
                    break
                if self.line_start and raw[start] in b"|:-" and self._table_here(start):
                    break
                self.line_start = False
                if raw.find(b"`", start, end) >= 0:
                    self.unmatched_tick = self.leaf_start
                if self.maybe_cdata:
                    self._cdata_in_text(start, end)
                covered = end if end > covered else covered
                if hidden_to >= 0:
                    hidden_to = covered  # text before the renderer's next tag
                continue
            if hidden_to >= 0 and not _renders_no_tag(event):
                html.gap(hidden_to)
                hidden_to = -1
            if "Start" in event:
                tag = event["Start"]
                kind = tag if type(tag) is str else next(iter(tag))
                if kind in _CONTAINERS:
                    if kind in _QUOTE_ITEM_FOOTNOTE:
                        self.containers += 1
                    if kind == "Item":  # a tight list's item holds its text itself
                        self.leaf_end, self.line_start, self.first_line = end, True, True
                    elif kind == "FootnoteDefinition":
                        if self._spent(start):
                            break
                        covered = self._footnote(tag[kind], start, end)
                        # GitHub renders it at the end of the page, if at all: its raw HTML is
                        # read apart, and ends nothing the text left open
                        body_html, body_hidden_to = html, hidden_to
                        html, hidden_to = RawHtml(raw, hidden, body_html.limit), -1
                    continue
                covered = end if end > covered else covered
                if kind == "CodeBlock":
                    if self._spent(start):
                        break
                    self._code_block(tag[kind], start, end)
                elif kind in _LEAVES:
                    self.leaf_start, self.leaf_end, self.line_start = start, end, True
                    self.first_line = True
                elif kind == "HtmlBlock" and _READ_APART.match(raw, start):
                    # GitHub's paragraph before it may go on through it
                    self._splits_specs(self.leaf_start if self.leaf_end >= start else start, always=True)
                    break
            elif "End" in event:
                closed = event["End"]
                if closed == "Item" or closed == "FootnoteDefinition" or (
                        type(closed) is dict and "BlockQuote" in closed):
                    self.containers -= 1
                if closed == "FootnoteDefinition":
                    if html.pending or html.cut_at >= 0:
                        self.footnote_left_open = True
                    html.end(end)
                    html, hidden_to = body_html, body_hidden_to
                elif closed == "TableRow" and end > covered:
                    covered = self._excess_cells(covered, end)
                elif closed == "HtmlBlock" and block:
                    if self._spent(block[0][0]):
                        block = []
                        break
                    html.feed(block)
                    block = []
                    if html.cut_at >= 0:
                        self.cut(html.cut_at)
                        break
                    if html.pending:
                        hidden_to = covered
            elif "Html" in event:
                if not block:
                    script_like = _SCRIPT_LIKE.match(raw, start) is not None
                elif script_like and _SCRIPT_END.search(raw, *block[-1]):
                    self.cut(start)  # GitHub's block ended on the line before (see _SCRIPT_END)
                    break
                block.append((start, end))
            elif "InlineHtml" in event:
                if self.first_line:
                    self.first_line = False
                    if raw[start] in b"[<" and self._first_line_differs(start):
                        break
                if self.line_start and raw[start] == 60 and self.containers and self._lazy_tag(start):
                    break
                if self.maybe_source and self._splits_specs(start):
                    break
                self.line_start = False
                if not html.pending and raw[start + 1] not in _HIDING:  # a tag: nothing to do
                    if end > covered:
                        covered = end
                    continue
                reach = end
                if raw[start + 2:start + 3].isalpha() and b"\n" in raw[start:end]:
                    # a declaration over lines: in a block quote this parser ends it at the next
                    # line's `>` marker, GitHub's at a `>` of its text, up to its paragraph's end
                    reach = max(end, self.leaf_end)
                html.feed_inline(start, reach)
                covered = end if end > covered else covered
                if html.pending:
                    hidden_to = covered
            else:
                if "Code" in event:
                    if self.unmatched_tick == self.leaf_start and raw.find(b"<", start, end) >= 0:
                        self._uncertain_code(start, end)
                    else:
                        self.code.append((start, end))
                elif "FootnoteReference" in event:
                    self.referenced.add(_label(event["FootnoteReference"]))
                covered = end if end > covered else covered
        else:
            if next(events, None) is not None:  # past the allowance: the rest goes, as one piece
                self.cut(reached)
            elif covered < len(raw) and raw.find(b"[", covered) >= 0:
                self._gap(covered, len(raw))  # definitions after the last block
        if block:
            html.feed(block)
        if html is not body_html:  # the text ended (or was cut) in a footnote
            self.footnote_left_open = self.footnote_left_open or html.pending
            html.end(len(raw))
            html = body_html
        if html.pending or self.footnote_left_open:  # hides the footnotes GitHub renders after it
            self.referenced.clear()
        html.end(len(raw))
        hidden += [(start, end) for name, start, end in self.footnotes if name not in self.referenced]
        if b"&" in raw:
            self._references(self.end)
        return hidden

    def _cdata_in_text(self, start: int, end: int) -> None:
        """A CDATA section this parser took for text (it misses some with a `[` inside; GitHub's
        does not): hidden up to its `]]>`, or to its paragraph's end."""
        raw = self.raw
        at = raw.find(b"<![CDATA[", start, end)
        while at >= 0:
            close = raw.find(b"]]>", at + 9, max(self.leaf_end, end))
            stop = max(self.leaf_end, end) if close < 0 else close + 3
            self.hidden.append((at, stop))
            at = raw.find(b"<![CDATA[", stop, end)

    def _spent(self, at: int) -> bool:
        """Count one costly node; past the allowance the text is cut where it starts."""
        self.nodes_left -= 1
        if self.nodes_left >= 0:
            return False
        self.cut(at)
        return True

    def _first_line_differs(self, start: int) -> bool:
        """A paragraph's first line GitHub may read otherwise: after a definition, a line that
        opens with a tag may start an HTML block there (GitHub's parser ends the paragraph the
        definition was in, this one reads the line as its continuation): the rest goes. A line
        that opens like a definition and is not one here may be one there (GitHub's takes an
        unbalanced parenthesis in the address): the line goes."""
        raw = self.raw
        if self.after_definition and raw[start] == 60:  # `<`
            self.cut(start)
            return True
        if raw[start] == 91:  # `[`
            line_end = _LINE_END.search(raw, start)
            stop = line_end.start() if line_end else len(raw)
            if raw.find(b"]:", start, stop) >= 0:
                if self._spent(start):
                    return True
                self.hidden.append((start, stop))
        return False

    def _uncertain_code(self, start: int, end: int) -> None:
        """A code span after a backtick run that found no pair in its paragraph: cmark-gfm then
        remembers closers wrongly and may read a later span as text, its comments and their kin
        as raw HTML. Those go (each to its closer: a later opener of its kind has none either)."""
        raw, at, closed = self.raw, start, set()
        while (opener := _INLINE_HIDING.search(raw, at, end)) is not None:
            kind = opener.group()[:3] if opener.group()[2:3].isalpha() else opener.group()
            closer = raw.find(_CLOSERS.get(kind, b">"), opener.end(), end) if kind not in closed else -1
            if closer < 0:
                closed.add(kind)
                at = opener.end()
                continue
            at = closer + len(_CLOSERS.get(kind, b">"))
            self.hidden.append((opener.start(), at))

    def _lazy_tag(self, start: int) -> bool:
        """A line in a quote, list item or footnote that opens with a tag and no marker (a lazy
        continuation here): GitHub's parser may start an HTML block there instead. The rest
        goes; else False."""
        raw = self.raw
        if start > 0 and raw[start - 1] not in b"\r\n":
            return False
        self.cut(start)
        return True

    def _table_here(self, start: int) -> bool:
        """A paragraph's line that is a table's delimiter row: GitHub may read a table there
        (its header needs no pipe, and may end a paragraph), whose rows hide their cells past the
        header's count. The rows go; else False."""
        row = _DELIMITER_ROW.match(self.raw, start)
        if row is None or self.raw.find(b"|", start, row.end()) < 0:
            return False
        self.cut(row.end())
        return True

    def cut(self, at: int) -> None:
        """Remove the rest of the text from `at`, as one piece. What the rest would have left
        open might hide the footnotes GitHub renders after it: they go too."""
        self.hidden.append((at, len(self.raw)))
        self.end = min(self.end, at)
        self.footnote_left_open = True

    def _splits_specs(self, start: int, *, always: bool = False) -> bool:
        """A line GitHub's parser (CommonMark 0.29) and this one (0.31) read differently: an
        HTML block of one is a paragraph of the other, and the blocks after it may differ (see
        _READ_APART); the rest of the text goes. Else False."""
        if not always and not (self.line_start and _SOURCE_TAG.match(self.raw, start)):
            return False
        self.cut(start)
        return True

    def _gap(self, start: int, end: int) -> None:
        """Source no event covers holds container markers, blank lines and link reference
        definitions only: a `[` there opens a definition pyromark did not report (a second one
        of a label), which ends at the last line break before the next event."""
        raw, defined = self.raw, self.defined
        last_break = max(raw.rfind(b"\n", start, end), raw.rfind(b"\r", start, end))
        if last_break > 0 and raw[last_break] == 10 and raw[last_break - 1] == 13:
            last_break -= 1
        at = raw.find(b"[", start, end)
        while at >= 0:
            following = bisect.bisect_right(defined, (at, len(raw)))
            if following and defined[following - 1][1] > at:  # inside a reported definition
                at = raw.find(b"[", defined[following - 1][1], end)
                continue
            stop = last_break if last_break > at else end
            if following < len(defined) and defined[following][0] < stop:
                stop = defined[following][0]
            if self._spent(at):
                return
            self.hidden.append((at, stop))
            at = raw.find(b"[", stop, end)

    def _excess_cells(self, start: int, end: int) -> int:
        """A table row's cells past the header's count, which GitHub does not render: the source
        after the last cell the parser reported, pipes and blanks aside. Returns the row's end."""
        row = self.raw[start:end]
        first = len(row) - len(row.lstrip(_CELL_EDGE))
        last = len(row.rstrip(_CELL_EDGE))
        if last > first:
            self.hidden.append((start + first, start + last))
        return end

    def _footnote(self, label: str, start: int, end: int) -> int:
        """A footnote definition, kept only if something refers to it and it is its label's first
        (GitHub renders no other): its label is source of its own (returned as covered)."""
        name = _label(label)
        if name in self.footnote_labels:
            self.hidden.append((start, end))
        else:
            self.footnote_labels.add(name)
            self.footnotes.append((name, start, end))
        colon = self.raw.find(b"]:", start, end)
        return start if colon < 0 else colon + 2

    def _code_block(self, kind: object, start: int, end: int) -> None:
        self.code.append((start, end))
        if not isinstance(kind, dict):
            return  # indented: no info string
        raw = self.raw
        line_end = _LINE_END.search(raw, start, end)
        first = raw[start:line_end.start() if line_end else end]
        fenced = first.lstrip(b" \t")
        info = fenced.lstrip(fenced[:1])
        if info.strip(_BLANK):
            self.hidden.append((start + len(first) - len(info), start + len(first)))

    def _references(self, end: int) -> None:
        """Character references that decode to an invisible character, outside code."""
        code, index = self.code, 0
        for match in _ENTITY.finditer(self.raw, 0, end):
            while index < len(code) and code[index][1] <= match.start():
                index += 1
            if not (index < len(code) and code[index][0] <= match.start()):
                self.hidden.append(match.span())


def _renders_no_tag(event: dict[str, Any]) -> bool:
    return "Html" in event or "InlineHtml" in event or next(iter(event.values())) in _UNTAGGED


def _label(name: str) -> str:
    """A footnote label as cmark-gfm matches it: case-folded, inner whitespace collapsed."""
    return " ".join(name.split()).casefold()
