"""Texts that make an untrusted-text cleaner work hard, each as long as GitHub allows a body
(65,536 characters), and the plain fields they are measured against. Shared by the cost test
(tests/runtime/test_cleaner_cost.py) and its benchmark (bench/cleaner_cost.py)."""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Iterator

FIELD = 65536
# an ordinary issue body with nothing hidden (bench/untrusted_cost.py's "plain bodies"): the
# plain-text field the issue measures the cleaner against
PLAIN = "Steps: run `tool --flag <id>`; it throws. Expected a `Promise<string>`.\n"
# prose without a single markup character: the cheapest text there is, reported beside it
PROSE = "The quick brown fox jumps over the lazy dog; then it rests a while. "

# the security review's cases (repro/security/t25_sanitize_cpu.py) and its t26 body
REVIEW = {
    "plain text": "a",
    "'<a ' repeated": "<a ",
    "'<a a=' repeated": "<a a=",
    "'<a\\n' lines": "<a\n",
    "'`' runs + '<'": "`<",
    "'``x' pattern": "``x",
    "'<!' repeated": "<!",
    "'<!-- ' no close": "<!-- ",
    "'&#8203;' entities": "&#8203;",
    "'- ```' list fences": "- ```\n",
    "'> <div>' quotes": "> <div>\n",
    "'<div>\\n```' pairs": "<div>\n```\n",
    "long attr tag": "<a b=c ",
    "'<a title=\"`\">' x": '<a title="`">',
    "zero-width every char": "a\u200b",
    "VS after every char": "a\ufe0f\ufe0f",
    "'| `' table": "| `a | b` |\n",
    "'`' + '\\n' + '<!--x-->'": "`\n<!--x-->\n",
    "t26 '<?\\n' lines": "<?\n",
}
# more shapes: every opener and character class the cleaner stops at, densely
MORE = {
    "'<!-->' empty comments": "<!-->",
    "'<!--x-->' closed comments": "<!--x-->",
    "'<!x>' declarations": "<!x>",
    "'<?>' instructions": "<?>",
    "'</ >' bogus ends": "</ >",
    "'&lt;' entities": "&lt;",
    "'&zwj;' entities": "&zwj;",
    "'&#x200b;' entities": "&#x200b;",
    "'\\<' escapes": "\\<",
    "'\\n' lines": "\n",
    "blank line + comment": "\n\n<!--\n-->",
    "'<!-- a' + blank": "<!-- a\n\n",
    "'<!--<!' nesting": "<!--<!",
    "ZWJ between letters": "\u00e9\u200d",
    "ZWNJ in Persian": "\u0645\u200c",
    "VS16 after emoji": "\u2764\ufe0f",
    "emoji": "\U0001f600",
    "emoji + zero-width": "\U0001f600\u200b",
    "tag characters": "\U000e0041",
    "England flags": "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "ideographic variants": "\u845b\U000e0100",
    "CJK": "\u4e2d",
    "mixed openers": "<!x>\u200b&#8203;<?y>",
    "link definitions": "[x]: /u 't'\n",
    "'[]:' without a definition": "[]:",
}


def repeated(unit: str, size: int = FIELD) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def generated(count: int, seed: int = 19) -> Iterator[tuple[str, str]]:
    """Documents of the oracle's lines (tests/support/hostile_markdown.py LINES) and of
    invisible characters, drawn at random and repeated to a field's length."""
    from tests.support.hostile_markdown import LINES

    extra = ["\u200b", "\u200d", "\ufe0f", "\u202e", "&#8203;", "&zwj;", "\U000e0041", "- - -", "> >"]
    rng = random.Random(seed)
    for n in range(count):
        lines = [rng.choice(LINES).replace("{m}", "x") for _ in range(rng.randint(1, 12))]
        lines += [rng.choice(extra) * rng.randint(1, 4) for _ in range(rng.randint(0, 3))]
        rng.shuffle(lines)
        yield f"generated #{n}", repeated("\n".join(lines) + "\n")


def corpus(generated_count: int = 40, size: int = FIELD) -> list[tuple[str, str]]:
    return ([(name, repeated(unit, size)) for name, unit in {**REVIEW, **MORE}.items()]
            + [(name, text[:size]) for name, text in generated(generated_count)])


def fastest(runs: int, clean: Callable[[str], object], texts: dict[str, str],
            clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Seconds of the fastest of `runs` cleanings of each text, the texts interleaved so a busy
    machine slows all of them alike, the garbage collector off as in `timeit` (a test process's
    heap makes one collection cost more than a cleaning). `time.thread_time` as the clock counts
    this thread's CPU only, so other processes on a loaded machine cannot skew a ratio."""
    best = dict.fromkeys(texts, float("inf"))
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            for name, text in texts.items():
                started = clock()
                clean(text)
                best[name] = min(best[name], clock() - started)
    finally:
        if collecting:
            gc.enable()
    return best
