"""Raw HTML of a Markdown document as a browser's tokenizer reads it (HTML5 §13.2.5), for what it
hides: comments (`<!-- … -->`, ended by `-->` or `--!>`; `<!-->` and `<!--->` are empty ones),
bogus comments, which run to the next `>` (processing instructions `<?…>`, declarations and CDATA
sections `<!…>`: CDATA is a comment outside SVG and MathML; `</` + anything but a letter), and
whatever a tag left open swallows (a tag open at the end of the page is dropped with all it took).

The parser hands over the document's raw HTML node by node, in document order (`feed`): an HTML
block (its lines joined: container markers between them are not part of it) or one inline piece.
Between two nodes GitHub's renderer writes its own output, which never closes a comment or a quoted
attribute value it did not open (it escapes `>`, `"` and `'` in text) but may end a tag or a bogus
comment with its next tag's `>` (`gap`), or close a double-quoted value with one of its own
attributes. Where the reading is not certain every possible state is followed (`branches`), and
what any of them hides is removed.
"""

from __future__ import annotations

import bisect
import re

DATA, COMMENT, BOGUS, TAG, BEFORE_VALUE, DQ, SQ = (
    "data", "comment", "bogus", "tag", "before-value", "double-quoted", "single-quoted")
# states a renderer tag's `>` ends; quoted values wait for their quote (see `gap`)
_ENDED_BY_A_TAG = frozenset((BOGUS, TAG, BEFORE_VALUE))

_WS = rb"\t\n\f\r "
# a tag's attributes, from the before-attribute-name state: names (`=` and quotes may start one
# there), values after `=` (quoted, or unquoted up to a blank or `>`)
_ATTRIBUTES = (
    rb"(?:[" + _WS + rb"/]|[^" + _WS + rb"/>][^" + _WS + rb"/=>]*+"
    rb"(?:(?>[" + _WS + rb"]*+=[" + _WS + rb"]*+)(?:\"[^\"]*+\"|'[^']*+'|(?=>)|[^" + _WS + rb">\"'][^"
    + _WS + rb">]*+)|(?![" + _WS + rb"]*+=)))*+")
_TAG_NAME = rb"</?[A-Za-z][^" + _WS + rb"/>]*+"
# text and whole tags, up to anything that may hide
_DATA_RUN = re.compile(rb"(?:[^<]++|<(?![!?A-Za-z/])|" + _TAG_NAME + _ATTRIBUTES + rb">)*+")
_TAG_REST = re.compile(_ATTRIBUTES + rb">")
_TAG_PREFIX = re.compile(_TAG_NAME + _ATTRIBUTES)
_ATTRIBUTES_RUN = re.compile(_ATTRIBUTES)
_OPEN_VALUE = re.compile(rb"(?:[^" + _WS + rb"/>][^" + _WS + rb"/=>]*+)?[" + _WS + rb"]*+=[" + _WS
                         + rb"]*+([\"']?)")
_BEFORE_VALUE = re.compile(rb"[" + _WS + rb"]*+(?:([\"'>])|[^" + _WS + rb">\"'][^" + _WS + rb">]*+)?")
_COMMENT_END = re.compile(rb"--!?>")
# Inline HTML that GitHub's cmark-gfm (CommonMark 0.29) reads as raw HTML, as the parser here
# (0.31) does: the later spec added `<!-->`, `<!--->`, `--` inside comments, and declarations
# in lower case or without a blank; GitHub shows those as text, so they close nothing.
_SAME_IN_0_29 = re.compile(
    rb"<!--(?!>|->)(?:[^-]|-(?!-))*+(?<!-)-->|<![A-Z]+[ \t\r\n\f\v][^>]*+>"
    rb"|<!\[CDATA\[[\s\S]*\]\]>|<\?[\s\S]*\?>|</?[A-Za-z][\s\S]*")


class RawHtml:
    """The tokenizer over one document's raw HTML: its possible states, and the hidden spans."""

    __slots__ = ("_branches", "cut_at", "limit", "pending", "raw", "spans")

    def __init__(self, raw: bytes, spans: list[tuple[int, int]], limit: int) -> None:
        self.raw = raw
        self.spans = spans  # (start, end) of each hidden piece, in the source's bytes
        self._branches: dict[str, int] = _ONLY_DATA  # state -> where what it hides began
        self.pending = False  # whether renderer output after the last node may be hidden
        # each piece costs Python work: past `limit` of them, reading stops at the next one
        self.limit, self.cut_at = limit, -1

    @property
    def branches(self) -> dict[str, int]:
        return self._branches

    @branches.setter
    def branches(self, after: dict[str, int]) -> None:
        self._branches = _ONLY_DATA if after == _ONLY_DATA else after
        self.pending = self._branches is not _ONLY_DATA

    def feed_inline(self, start: int, end: int) -> None:
        """Read one inline piece: a whole tag, comment, processing instruction, declaration or
        CDATA section (by CommonMark's grammar)."""
        raw = self.raw
        if DATA in self.branches and raw[start + 1] in b"!?":
            self.spans.append((start, end))  # hidden whole, wherever HTML5 ends it
        if self.branches is _ONLY_DATA or _SAME_IN_0_29.fullmatch(raw, start, end) is None:
            return  # nothing open, or GitHub shows it as text: it ends nothing that is open
        self._feed(_Node(raw, start, end))

    def feed(self, pieces: list[tuple[int, int]]) -> None:
        """Read one HTML block: its lines' byte ranges (joined: container markers lie between
        them in a quote or a list)."""
        start, end = pieces[0][0], pieces[-1][1]
        if all(pieces[k][1] == pieces[k + 1][0] for k in range(len(pieces) - 1)):
            node = _Node(self.raw, start, end)
        else:
            node = _Node(b"".join(self.raw[a:b] for a, b in pieces), 0, 0, pieces)
        if self.branches is _ONLY_DATA and _DATA_RUN.match(node.data, node.lo, node.hi).end() == node.hi:  # type: ignore[union-attr]
            return  # text and whole tags only
        self._feed(node)

    def _feed(self, node: _Node) -> None:
        after: dict[str, int] = {}
        for state, since in self.branches.items():
            _merge(after, *self._read(node, state, since))
        self.branches = after

    def gap(self, hidden_to: int) -> None:
        """GitHub's renderer wrote a tag of its own after the last node: its `>` ends a tag or a
        bogus comment (hiding the source up to `hidden_to`); its attributes may close a
        double-quoted value, after which the rest of its tag ends."""
        after: dict[str, int] = {}
        for state, since in self.branches.items():
            if state in _ENDED_BY_A_TAG:
                self.spans.append((since, hidden_to))
                _merge(after, DATA, -1)
                continue
            if state == DQ:
                _merge(after, DATA, -1)
            _merge(after, state, since)
        self.branches = after

    def end(self, at: int) -> None:
        """The document ends at `at`: anything open hides the rest (a tag is dropped)."""
        for state, since in self.branches.items():
            if state != DATA:
                self.spans.append((since, at))
        self.branches = _ONLY_DATA

    def _read(self, node: _Node, state: str, since: int) -> tuple[str, int]:
        """Tokenize `node` from `state` (what it hides began at `since`); the state at its end."""
        data, i, end = node.data, node.lo, node.hi
        while i < end:
            if state == DATA:
                i = _DATA_RUN.match(data, i, end).end()  # type: ignore[union-attr]  # matches empty
                if i >= end:
                    break
                since = node.source(i)
                if len(self.spans) >= self.limit:
                    self.cut_at = since if self.cut_at < 0 else min(self.cut_at, since)
                    break
                if data.startswith(b"<!--", i, end):
                    i += 4
                    empty = 1 if data.startswith(b">", i, end) else 2 if data.startswith(b"->", i, end) else 0
                    if empty:
                        i += empty
                        self.spans.append((since, node.source(i)))
                    else:
                        state = COMMENT
                elif data[i + 1:i + 2] in (b"!", b"?") or not data[i + 1:min(i + 3, end)].lstrip(b"/")[:1].isalpha():
                    state, i = BOGUS, i + 2
                else:  # a tag that does not end in this node
                    prefix = _TAG_PREFIX.match(data, i, end)
                    assert prefix is not None  # `<` + a letter always starts one
                    return _open_value(data, prefix.end(), end), since
            elif state == COMMENT:
                close = _COMMENT_END.search(data, i, end)
                if close is None:
                    break
                state, i = DATA, self._close(node, since, close.end())
            elif state == BOGUS:
                close_at = data.find(b">", i, end)
                if close_at < 0:
                    break
                state, i = DATA, self._close(node, since, close_at + 1)
            elif state in (DQ, SQ):
                close_at = data.find(b'"' if state == DQ else b"'", i, end)
                if close_at < 0:
                    break
                state, i = TAG, close_at + 1
            elif state == BEFORE_VALUE:
                value = _BEFORE_VALUE.match(data, i, end)
                assert value is not None  # every part is optional
                quote = value.group(1)
                state = {b'"': DQ, b"'": SQ}.get(quote or b"", TAG)
                i = value.end() - (quote == b">")
            else:  # TAG: the rest of a tag an earlier node opened
                rest = _TAG_REST.match(data, i, end)
                if rest is None:
                    return _open_value(data, _ATTRIBUTES_RUN.match(data, i, end).end(), end), since  # type: ignore[union-attr]
                state, i = DATA, self._close(node, since, rest.end())
        return state, since if state != DATA else -1

    def _close(self, node: _Node, since: int, at: int) -> int:
        self.spans.append((since, node.source(at)))
        return at


_ONLY_DATA: dict[str, int] = {DATA: -1}


class _Node:
    """A node's bytes data[lo:hi], and where each of them lies in the source: the same offset,
    or for lines joined from `pieces`, their place in the source."""

    __slots__ = ("data", "hi", "lo", "offsets", "pieces")

    def __init__(self, data: bytes, lo: int, hi: int, pieces: list[tuple[int, int]] | None = None) -> None:
        self.data, self.lo, self.hi, self.pieces = data, lo, hi, pieces
        self.offsets: list[int] = []
        if pieces is not None:
            at = 0
            for start, end in pieces:
                self.offsets.append(at)
                at += end - start
            self.hi = at

    def source(self, at: int) -> int:
        """The source offset of data[at] (a piece's end for an offset between two pieces)."""
        if self.pieces is None:
            return at
        index = bisect.bisect_right(self.offsets, at) - 1
        if index > 0 and at == self.offsets[index]:
            index -= 1
        return self.pieces[index][0] + at - self.offsets[index]


def _merge(branches: dict[str, int], state: str, since: int) -> None:
    """Add a possible state; of two equal ones the one that began hiding earlier stays."""
    branches[state] = min(branches.get(state, since), since)


def _open_value(data: bytes, at: int, end: int) -> str:
    """The state after a tag's attributes that stop at data[at] without its `>` (before `end`)."""
    value = _OPEN_VALUE.match(data, at, end)
    if value is None or (value.end() < end and not value.group(1)):
        return TAG
    return {b'"': DQ, b"'": SQ, b"": BEFORE_VALUE}[value.group(1)]
