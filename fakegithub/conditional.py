"""Conditional GETs the way GitHub answers them: validators on every 200, 304 when they match.

Every successful GET carries a weak `ETag` (a digest of the body), GitHub's `Cache-Control:
private, max-age=60, s-maxage=60` and `Vary`; a JSON object with `updated_at` (an issue, a
comment, a milestone) also carries `Last-Modified`. A request whose `If-None-Match` names the
current tag (weak comparison, `*` matches anything), or, when it sends no `If-None-Match`, whose
`If-Modified-Since` is not older than `Last-Modified` (RFC 9110 §13.2.2), gets 304 with no body,
the validators and GitHub's usual headers. A 304 spends no rate-limit budget, as on GitHub
("a 304 does not count against your primary rate limit").
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

CACHE_CONTROL = "private, max-age=60, s-maxage=60"
VARY = "Accept, Authorization, Cookie, X-GitHub-OTP"


def etag(body: bytes) -> str:
    return 'W/"' + hashlib.sha256(body).hexdigest() + '"'


def last_modified(body: Any) -> str | None:
    stamp = body.get("updated_at") if isinstance(body, dict) else None
    if not isinstance(stamp, str):
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return format_datetime(when, usegmt=True)


def validators(body: Any, encoded: bytes) -> dict[str, str]:
    """The caching headers of a 200 answer to a GET."""
    headers = {"etag": etag(encoded), "cache-control": CACHE_CONTROL, "vary": VARY}
    modified = last_modified(body)
    if modified is not None:
        headers["last-modified"] = modified
    return headers


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag[:2] in ("W/", "w/") else tag


def not_modified(request_headers: dict[str, str], response_headers: dict[str, str]) -> bool:
    """Whether the request's preconditions say the client's copy is current (§13.2.2 order)."""
    if_none_match = request_headers.get("if-none-match")
    if if_none_match is not None:
        current = _opaque(response_headers.get("etag", ""))
        tags = [_opaque(t) for t in if_none_match.split(",")]
        return "*" in tags or (bool(current) and current in tags)
    since, modified = request_headers.get("if-modified-since"), response_headers.get("last-modified")
    if since is None or modified is None:
        return False
    try:
        return parsedate_to_datetime(modified) <= parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False
