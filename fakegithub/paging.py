"""`per_page`/`page` slicing and GitHub's `Link` header."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeVar
from urllib.parse import urlencode

T = TypeVar("T")

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100


def page_args(query: Mapping[str, str]) -> tuple[int, int]:
    """(page, per_page) like GitHub: per_page defaults to 30 and is capped at 100."""
    try:
        per_page = int(query.get("per_page", DEFAULT_PER_PAGE))
    except ValueError:
        per_page = DEFAULT_PER_PAGE
    try:
        page = int(query.get("page", 1))
    except ValueError:
        page = 1
    if per_page < 1:
        per_page = DEFAULT_PER_PAGE
    return max(1, page), min(per_page, MAX_PER_PAGE)


def link_header(url: str, query: Mapping[str, str], page: int, last: int) -> str | None:
    """`<url?page=2>; rel="next", <...>; rel="last"` (and prev/first), or None for one page."""
    if last <= 1 and page <= 1:
        return None

    def at(n: int) -> str:
        params = dict(query)
        params["page"] = str(n)
        return f"<{url}?{urlencode(params)}>"

    parts: list[str] = []
    if page > 1:
        parts.append(f'{at(min(page - 1, max(last, 1)))}; rel="prev"')
    if page < last:
        parts.append(f'{at(page + 1)}; rel="next"')
        parts.append(f'{at(last)}; rel="last"')
    if page > 1:
        parts.append(f'{at(1)}; rel="first"')
    return ", ".join(parts) or None


def paginate(
    items: Sequence[T], query: Mapping[str, str], url: str, *, cap: int | None = None
) -> tuple[list[T], str | None]:
    """The requested page of `items` and its Link header (`cap` limits reachable items)."""
    page, per_page = page_args(query)
    reachable = len(items) if cap is None else min(len(items), cap)
    last = max(1, math.ceil(reachable / per_page))
    start = (page - 1) * per_page
    chunk = list(items[start : min(start + per_page, reachable)])
    return chunk, link_header(url, query, page, last)
