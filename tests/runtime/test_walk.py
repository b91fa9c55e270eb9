"""walk(): pages of kept rows over upstream pages, exactly the kept items in order, bounded."""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from ghmcp_runtime.engine.walk import walk


def walk_all(items: list[bool], *, want: int, cap: int, limit: int, reads: int,
             sizes: tuple[int, int]) -> tuple[list[int], bool, list[tuple[int, int]]]:
    """Every page of a walk over `items` (True = kept) with a row cap, like search_issues."""
    fetched: list[tuple[int, int]] = []

    async def fetch(page: int, per_page: int) -> tuple[list[Any], bool]:
        fetched.append((page, per_page))
        start = (page - 1) * per_page
        return list(range(start, min(start + per_page, len(items)))), start + per_page < len(items)

    async def run() -> tuple[list[int], bool]:
        delivered: list[int] = []
        offset: int | None = 0
        for _ in range(10_000):
            assert offset is not None
            done = await walk(fetch, lambda i: items[i], offset=offset, want=min(want, cap - len(delivered)),
                              sizes=sizes, max_reads=reads, scan_limit=limit)
            delivered += done.rows
            more = done.next_offset is not None
            if done.scan_capped or (more and len(delivered) >= cap):
                return delivered, True
            if not more:
                return delivered, False
            offset = done.next_offset
        raise AssertionError("no end")

    delivered, truncated = anyio.run(run)
    return delivered, truncated, fetched


def expected(items: list[bool], cap: int, limit: int) -> tuple[list[int], bool]:
    kept = [i for i, k in enumerate(items[:limit]) if k]
    if len(kept) >= cap:
        return kept[:cap], kept[cap - 1] + 1 < len(items)
    return kept, len(items) > limit


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(items=st.lists(st.booleans(), max_size=400), want=st.integers(1, 40), cap=st.integers(1, 120),
       limit=st.sampled_from([10, 50, 100, 170, 300]), reads=st.integers(1, 4))
def test_a_walk_delivers_exactly_the_kept_items_before_the_limits(
        items: list[bool], want: int, cap: int, limit: int, reads: int) -> None:
    delivered, truncated, _ = walk_all(items, want=want, cap=cap, limit=limit, reads=reads, sizes=(30, 100))
    assert (delivered, truncated) == expected(items, cap, limit)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(items=st.lists(st.booleans(), min_size=900, max_size=1100))
def test_no_page_past_githubs_search_limit_is_requested(items: list[bool]) -> None:
    _, _, fetched = walk_all(items, want=30, cap=300, limit=1000, reads=3, sizes=(30, 100))
    assert all(page * per_page <= 1000 for page, per_page in fetched)


def test_mostly_skipped_items_are_read_in_large_pages() -> None:
    # r_pagination.py (B): 310 skipped items, then 5 kept: two calls, not ten empty pages
    items = [False] * 310 + [True] * 5
    delivered, truncated, fetched = walk_all(items, want=30, cap=300, limit=1000, reads=3, sizes=(30, 100))
    assert delivered == list(range(310, 315)) and not truncated
    assert len(fetched) <= 6
