"""The oracle of the untrusted-text tests: what GitHub's page shows of a Markdown document.

cmark-gfm (the `cmarkgfm` binding of the renderer GitHub runs, with GitHub's extensions: tables,
autolinks, tag filter, strikethrough, task lists, footnotes; raw HTML passed through as GitHub's
sanitizer receives it) renders the document; html5lib (the WHATWG tokenizer and tree builder,
as a browser and GitHub's HTML5 sanitizer parse) reads the HTML. Shown: text nodes, and what raw tags hold (their names, attribute names and values:
a link's address, a title, an alt text; the cleaner keeps tags as written, so it counts them as
shown; names are compared without case, as the parser lowers them),
except a code block's language (`<pre lang>`, the first word of the info string; the rest is not
rendered at all). Comments, processing instructions, doctypes, whatever an unclosed comment
swallows and a tag the page's end leaves open reach no node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import cmarkgfm
import html5lib
from cmarkgfm.cmark import Options

OPTIONS = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_FOOTNOTES
MARKER = re.compile(r"MARK\d+X")


def render(document: str) -> str:
    """GitHub's HTML for `document` (before its sanitizer, which drops what the browser would
    not show anyway)."""
    return str(cmarkgfm.github_flavored_markdown_to_html(document, options=OPTIONS))


def shown(html: str) -> str:
    """Everything a reader of the page can perceive, joined by line breaks."""
    fragment = html5lib.parseFragment(html, treebuilder="etree", namespaceHTMLElements=False)
    return "\n".join([fragment.text or "", *_perceived(fragment)])


def _perceived(parent: Any) -> Iterator[str]:
    for node in parent:
        if isinstance(node.tag, str):  # an element (comments are not)
            yield node.tag
            for name, value in node.attrib.items():
                if not (node.tag == "pre" and name == "lang"):
                    yield f"{name} {value}"
            yield node.text or ""
            yield from _perceived(node)
        yield node.tail or ""


def hidden_markers(document: str, markers: Iterable[str] | None = None) -> set[str]:
    """The markers of `document` (MARK<n>X unless given) that GitHub's page does not show."""
    wanted = set(MARKER.findall(document) if markers is None else markers)
    visible = shown(render(document)).casefold()
    return {m for m in wanted if m.casefold() not in visible}
