"""Untrusted text as an agent gets it: what GitHub's page hides is removed, and counted.

`sanitize` first removes what GitHub's rendering of the Markdown hides (decided from a parse, see
`markup`), then invisible characters everywhere (see `invisible`). The count tells the agent that
something was there: each removed piece of markup and each removed character counts one.

Cleaning a long field costs milliseconds (docs/BENCHMARKS.md §10); a page of them would hold the
event loop, and every other caller, for that long times the rows. So the large strings of every
upstream answer are cleaned ahead (`clean_ahead`), one at a time with the event loop free in
between, before the synchronous projection reads them from the call's `Cleaned`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import anyio

from ghmcp_runtime.base.lazy import lazy_module
from ghmcp_runtime.cleaning.invisible import strip_invisible

if TYPE_CHECKING:
    from ghmcp_runtime.cleaning import markup as _markup
else:  # the Markdown parser loads with the first text that needs it (issue 24, cold start)
    _markup = lazy_module("ghmcp_runtime.cleaning.markup")
# nothing can be hidden in Markdown without one of these (raw HTML, a character reference, a
# link or footnote definition's `]:`, a fence, a table row's cells past its header's count): a
# text without them is not parsed
_MAY_HIDE = ("<", "&", "]:", "```", "~~~", "|")


class Clean(str):
    """Text as a reader sees it: cleaned (and counted) already, or written by this server. The
    outbound layer (outbound.py) cleans every other string it returns."""

    __slots__ = ()


# text -> (cleaned, pieces removed), for one call
Cleaned = dict[str, tuple[str, int]]
AHEAD_CHARS = 2048  # strings at least this long are cleaned ahead, each its own slice of time


def sanitize(text: str) -> tuple[str, int]:
    """`text` as a reader of GitHub's page sees it, and how many hidden pieces were removed."""
    pieces = 0
    if any(mark in text for mark in _MAY_HIDE):
        text, pieces = _markup.strip_hidden_markup(text)
    if text.isascii() and text.isprintable():
        return text, pieces  # most names, dates, URLs: no invisible character either
    text, characters = strip_invisible(text)
    return text, pieces + characters


async def clean_ahead(data: Any, cleaned: Cleaned) -> None:
    """Clean every long string in `data` (an upstream answer) into `cleaned`, yielding to the
    event loop after each: another caller's request waits for one field at most."""
    for text in _long_strings(data):
        if text not in cleaned:
            cleaned[text] = sanitize(text)
            await anyio.sleep(0)


def _long_strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        if len(data) >= AHEAD_CHARS:
            yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from _long_strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _long_strings(value)
