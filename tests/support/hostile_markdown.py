"""Hostile Markdown for the untrusted-text tests: documents built from the constructs GitHub's page
hides (and the ones that decide where they start and end), with markers (MARK<n>X) to follow
(`documents`, `fragment_documents`), and one adversarial text per construct family: every opener
without its closer, nested in lists and quotes, with CRLF line breaks, and mixed (`ADVERSARIAL`).
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

# whole lines: fences, HTML blocks, comments open and closed, definitions, footnotes, containers
LINES = [
    "", "text {m}", "```", "~~~", "````", "```py", "``` a`b", "    ```", "  ```", "   ```", "- ```",
    "1. ```", "> ```", "> ", ">", "- item", "  - nested", "1. item", "   continued", "2. next",
    "<!-- {m} -->", "<!-- {m}", "{m} -->", "-->", "<!--", "a <!-- {m} --> b", "`<!-- {m} -->`",
    "``<!-- {m} -->``", "`x", "y` <!-- {m} --> `z`", "<div>", "</div>", "<span>", "<details>",
    "  <div>", "- <div>", "> <div>", "> <!-- {m}", "> {m} -->", "- <!-- {m}", "  {m} -->",
    "# h `x", "## <!-- {m} -->", "---", "===", "| a | `b | <!-- {m} --> ` |", "| --- | --- |",
    '<a title="`"> <!-- {m} --> <b title="`">', "\\<!-- {m} -->", "<?x {m} ?>", "<!X {m}>",
    "<![CDATA[ {m} ]]>", "&lt;!-- {m} --&gt;", "<script>", "</script>", "<pre>", "</pre>",
    "    <!-- {m} -->", "\t<!-- {m} -->", "<!-->{m}", "<!--->{m}", "text <!-- {m}",
    "more --> tail", "  <!-- {m}", "{m} `tick", "- a `<!-- {m} -->`", "> `<!-- {m} -->`",
    "[//]: # ({m})", '[x]: /url "{m}"', "[y]: <{m}>", "[z]:", "  /url '{m}'", "'{m}", "{m}'",
    "> [q]: /u '{m}'", "- [r]: /u ({m})", "[a]({m}) and [x]", "    [c]: /u '{m}'", "`[d]: /u '{m}'`",
    "[X]: /dup '{m}'", "[note", "{m}]: #", "```text {m}", "~~~ {m}", "x[^1]", "[^1]: {m}",
    "[^2]: {m}", "*", "    1. <!--", "-", "    - <?", "    > <![CDATA[", "<!doctype {m}>",
    "<source", "<textarea>", "<search>", "<![CDATA[ [{m}] ]]>", "<div title='{m}", "&#8203;{m}",
    "a &zwj; b `&#8203;` {m}", "text\r", "<img", '  src="{m}"', "  alt={m}>",
]
# pieces of lines: a line is one to four of them, a marker often after
FRAGMENTS = [
    "text", "", "> ", "- ", "1. ", "   ", "    ", "```", "~~~", "`", "``", "<div>", "</div>", "<!--",
    "-->", "[a", "]: /b", "[x]: /y", '"T', 'T"', "(", ")", "'", "# h", "===", "---", "| a |", "<?", "?>",
    "<![CDATA[", "]]>", "<pre>", "</pre>", "&#8203;", "\\", "[", "]", ":", " ", "\t", "*", "<!X", ">",
    "[^1]", "[^1]:", "|-|", "<!doctype x>", "--!>", "<!-->", "--", "\r\n", "<details>", "<span>",
    "<a href='", "<script>", "</script>", "&zwj;", "~~", "[ ]", "<source", "<textarea>", "<search>",
    "<![CDATA[ [", "\n\n", "- <div>", "> <!--", "  ", "[^1]: ", "<details>\n",
]


@st.composite
def documents(draw: st.DrawFn) -> str:
    """Up to 12 whole lines, each `{m}` a fresh marker."""
    lines = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=12))
    counter = iter(range(1000))
    filled = [re.sub(r"\{m\}", lambda _: f"MARK{next(counter)}X", line) for line in lines]
    return "\n".join(filled) + draw(st.sampled_from(["", "\n"]))


@st.composite
def fragment_documents(draw: st.DrawFn) -> str:
    """Up to 7 lines of 1-4 fragments each, most ending in a marker (the security review's n9)."""
    lines = []
    for index in range(draw(st.integers(1, 7))):
        line = "".join(draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4)))
        lines.append(line + (f"MARK{index}X" if draw(st.booleans()) else ""))
    return draw(st.sampled_from(["", "x\n\n"])) + "\n".join(lines)


# Adversarial texts: a unit repeated to any length. Each construct family's openers without their
# closers, nested in lists and quotes, with CRLF, and mixed: the costliest inputs found for the
# parser (deep containers make about one and a half events per character).
ADVERSARIAL = {
    "comments": ["<!-- ", "<!--\n", "a <!-- b\n", "<!---", "<!-->"],
    "processing instructions": ["<?", "<?\n", "a <? b\n"],
    "declarations and CDATA": ["<!X ", "<!X\n", "<![CDATA[ ", "<![CDATA[ [\n", "<!doctype x\n"],
    "HTML blocks": ["<div>\n", "\n\n<div>\n<!--\n", "<script>\n", "<pre>\n</pre>x\n", "<textarea>\n"],
    "tags": ["<a ", "<a b='", '<a b="', "<a b=", "<a\n", "</ ", "<a>"],
    "link definitions": ["[a]: b (\n", "[]:b (\n", "[a]: b\n", "[a\n", "[a]:\n", "[a]: <b\n", "[a]: b '\n"],
    "footnotes": ["[^1]: x\n", "[^1]\n\n[^1]: x\n\n", "[^", "[^1]:\n"],
    "fences": ["```x\n", "- ```\n", "~~~ a\n", "```", "> ```x\n"],
    "character references": ["&#8203;", "&zwj;", "&#x200B", "&", "&#"],
    "code spans and escapes": ["`", "`a", "\\<", "``<!--"],
    "emphasis and links": ["*a", "_a_ ", "[a](", "[a]", "[", "![a](<", "*a**"],
    "containers": ["> ", "- ", "1. ", "> - > - > - > - > - > - > - > - > - > - \n", "- > ", "> \n"],
    "tables": ["| a | b |\n|---|---|\n", "|a", "x\n|-|\n"],
    "lines": ["a\n", "\n", "a\r\n", "\r", "a\\\n"],
    "mixed": ["> - <!-- a\r\n", "- [a]: b (\r\n", "> <?\r\n", "1. <div>\r\n<!--\r\n",
              "> ```x <!-- \r\n", "* [^1]: <!X\r\n"],
}
