"""One upstream endpoint as the spec pins it, and what the forge answered to a request of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Operation:
    """One upstream endpoint, as pinned in the spec."""

    operation_id: str
    method: str  # upper case: GET, POST, PATCH, PUT, DELETE
    path: str  # template, e.g. /repos/{owner}/{repo}/issues/{issue_number}
    not_found: str  # error code a 404 means once the repository is known to exist
    success_status: tuple[int, ...]
    # path parameters whose value spans segments (a file path, a branch with `/`: the spec's
    # x-multi-segment): sent with their `/` as it is, each segment percent-encoded
    multi_segment: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    status: int
    data: Any  # parsed JSON body, None for 204
    headers: Mapping[str, str]  # lower-cased names
