"""Filtered paging: fill a page of rows from upstream pages where some items do not count.

GitHub lists pull requests with issues, and some filters can only be applied here; a page of
rows is filled by reading on until it is full. The position is an item offset into the upstream
sequence, so each read may use another page size (a first small read, then larger ones), and the
walk stops at a scan limit (GitHub search serves no item past its 1,000th).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

# (page, per_page) -> (items of that page, whether a next page exists)
Fetch = Callable[[int, int], Awaitable[tuple[list[Any], bool]]]


@dataclass(frozen=True, slots=True)
class Walked:
    rows: list[Any]
    next_offset: int | None  # where the next page starts; None when upstream has no more items
    scan_capped: bool  # stopped at the scan limit while upstream had more items


async def walk(fetch: Fetch, keep: Callable[[Any], bool], *, offset: int, want: int,
               sizes: tuple[int, int], max_reads: int, scan_limit: int) -> Walked:
    """Read from `offset` until `want` kept rows, `max_reads` reads, or the scan limit.

    `sizes` = (per_page of the first read, per_page of the following ones); the first size is
    used only where its page ends within `scan_limit` (GitHub search refuses pages past its
    limit). Items at or past `scan_limit` are never looked at."""
    rows: list[Any] = []
    for read in range(max_reads):
        if offset >= scan_limit:
            return Walked(rows, offset, True)
        size = sizes[0] if read == 0 and (offset // sizes[0] + 1) * sizes[0] <= scan_limit else sizes[1]
        page = offset // size + 1
        base = (page - 1) * size
        items, more = await fetch(page, size)
        end = min(len(items), scan_limit - base)
        for i in range(offset - base, end):
            if keep(items[i]):
                rows.append(items[i])
                if len(rows) == want:
                    after = base + i + 1
                    if after >= base + len(items) and not more:
                        return Walked(rows, None, False)
                    return Walked(rows, after, after >= scan_limit)
        if end < len(items):
            return Walked(rows, base + end, True)
        if not more or len(items) <= offset - base:
            return Walked(rows, None, False)
        offset = base + len(items)
    return Walked(rows, offset, offset >= scan_limit)
