"""What sanitizing untrusted text costs: projecting a search page of 30 issue rows (full detail)
with the issue shape as generated (untrusted fields) and the same shape with the flags off, side
by side, for plain bodies and for bodies carrying an issue template's HTML comments.

    .venv/bin/python bench/untrusted_cost.py

Prints medians per page and the ratio; nothing here asserts a time.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Any

from ghmcp_runtime.core.model import FieldRule, Shape
from ghmcp_runtime.core.projection import ShapeProjector
from github_issues_mcp.server import SHAPES

TEMPLATE = (
    "<!-- Thanks for reporting! Please fill in every section. -->\n### Steps to reproduce\n"
    "1. Run `tool --flag <id>`\n2. See error\n\n<!-- What did you expect? -->\n### Expected\n"
    "It returns a `Promise<string>`.\n\n```ts\nconst x = await load<string>(id); // <!-- not hidden -->\n```\n"
)
PLAIN = "Steps: run `tool --flag <id>`; it throws. Expected a `Promise<string>`.\n" * 8


def rows(body: str) -> list[dict[str, Any]]:
    return [{"number": n, "title": f"Crash {n}", "state": "open", "user": {"login": "octocat"},
             "author_association": "NONE", "labels": [{"name": "bug"}], "comments": 1,
             "updated_at": "2026-01-01T00:00:00Z", "html_url": "https://github.com/o/r/issues/1",
             "body": body, "milestone": None, "assignees": [], "locked": False,
             "active_lock_reason": None, "created_at": "2026-01-01T00:00:00Z", "closed_at": None,
             "state_reason": None, "repository_url": "https://api.github.com/repos/o/r"}
            for n in range(30)]


def trusting(shape: Shape) -> Shape:
    def off(fields: tuple[FieldRule, ...]) -> tuple[FieldRule, ...]:
        return tuple(dataclasses.replace(f, untrusted=False, nested=off(f.nested)) for f in fields)
    return dataclasses.replace(shape, fields=off(shape.fields))


def page_ms(projector: ShapeProjector, page: list[dict[str, Any]], repeat: int = 200) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        for raw in page:
            projector.project("issue", raw, "full", {})
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    issue = SHAPES["issue"]
    sanitizing = ShapeProjector({"issue": issue})
    plain = ShapeProjector({"issue": trusting(issue)})
    for name, body in (("plain bodies", PLAIN), ("template comments", TEMPLATE)):
        page = rows(body)
        with_flags, without = page_ms(sanitizing, page), page_ms(plain, page)
        print(f"{name:18} 30 rows: sanitizing {with_flags:.3f} ms, flags off {without:.3f} ms, "
              f"ratio {with_flags / without:.2f}, +{(with_flags - without) / 30 * 1000:.1f} µs/row")


if __name__ == "__main__":
    main()
