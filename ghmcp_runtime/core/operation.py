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
    # what a success body is, as the spec pins it: its JSON type (object, array) and the keys an
    # object carries; an answer that is not it (a proxy's page, `{"message": "ok"}`) is refused
    answer: str | None = None
    required: tuple[str, ...] = ()

    def is_answer(self, status: int, data: Any) -> bool:
        """Whether a success answer is what this operation returns: a status the description
        lists, and a body of its type and keys (a 204 has none)."""
        if self.success_status and status not in self.success_status:
            return False
        if self.answer is None or status == 204:
            return True
        if self.answer == "array":
            return isinstance(data, list)
        return isinstance(data, Mapping) and all(key in data for key in self.required)


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    status: int
    data: Any  # parsed JSON body, None for 204
    headers: Mapping[str, str]  # lower-cased names
