"""Fault injection: declarative rules consulted (in order) before each API request is handled.

    fake.faults.add("issues/create", "status", status=502)
    fake.faults.add("POST /repos/.*/issues$", "timeout", after_commit=True, delay=5)
    fake.faults.add(Match(operation="issues/get"), "reset", times=2)

`match` is an operationId, `"METHOD /path-regex"`, `"/path-regex"` (any method), `"*"`, or a
`Match`. Path regexes are searched (`re.search`) in the request path (no query string).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Kind = Literal["status", "timeout", "reset", "malformed_json", "html", "slow_body", "slow_commit"]
KINDS: tuple[str, ...] = ("status", "timeout", "reset", "malformed_json", "html", "slow_body",
                          "slow_commit")

SECONDARY_RATE_LIMIT = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID.",
    "documentation_url": "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    "status": "403",
}

GITHUB_HTML_500 = (
    "<!DOCTYPE html>\n<html>\n<head><meta charset='utf-8'><title>Unicorn! &middot; GitHub</title></head>\n"
    "<body><h1>No server is currently available to service your request.</h1>\n"
    "<p>Sorry about that. Please try refreshing and contact us if the problem persists.</p></body>\n</html>\n"
)


@dataclass(frozen=True, slots=True)
class Match:
    """Select requests: every given criterion must hold; nothing given = every request."""

    operation: str | None = None  # operationId, e.g. "issues/create"
    method: str | None = None  # e.g. "POST"
    path: str | None = None  # regex searched in the request path

    @classmethod
    def parse(cls, spec: str | Match | dict[str, Any] | None) -> Match:
        if spec is None or isinstance(spec, Match):
            return spec or cls()
        if isinstance(spec, dict):
            return cls(**spec)
        text = spec.strip()
        if text in ("", "*"):
            return cls()
        if text.startswith("/"):
            return cls(path=text)
        method, sep, rest = text.partition(" ")
        if sep and rest.strip().startswith("/") and method.isalpha():
            return cls(method=method.upper(), path=rest.strip())
        return cls(operation=text)

    def hits(self, operation: str | None, method: str, path: str) -> bool:
        if self.operation is not None and self.operation != operation:
            return False
        if self.method is not None and self.method.upper() != method.upper():
            return False
        return self.path is None or re.search(self.path, path) is not None


@dataclass
class Fault:
    """One rule. Fields used per kind:

    * status: `status`, `headers`, `body` (JSON; default = a GitHub-shaped body for the status);
      the request is NOT performed (unless `after_commit`, then the write happens first).
    * timeout: stall `delay` seconds (longer than the client's timeout), then 504 if the client
      is still there. `after_commit=True` performs the real request first (lost response).
    * reset: drop the connection without a response. `after_commit=True` performs the real
      request first; `partial=True` performs it too, then sends the headers and half the body.
    * malformed_json: `status` (default 200) with a truncated JSON body; request not performed.
    * html: `status` (default 500) with GitHub's HTML error page; request not performed.
    * slow_commit: wait `delay` seconds, THEN perform the request and answer normally (a write
      that is still in flight at GitHub when a duplicate arrives).
    * slow_body: perform the request, then send the real body in `chunks` pieces, `delay`
      seconds apart.
    """

    match: Match
    kind: Kind
    times: int | None = 1  # None = forever
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float | None = None
    after_commit: bool = False
    partial: bool = False
    chunks: int = 4
    id: int = 0
    fired: int = 0

    def describe(self) -> dict[str, Any]:
        out = asdict(self)
        out["match"] = asdict(self.match)
        return out


_ids = itertools.count(1)


class Faults:
    """Ordered fault rules; the first live rule matching a request fires and uses up one `times`."""

    def __init__(self) -> None:
        self._rules: list[Fault] = []
        self._lock = threading.Lock()

    def add(
        self,
        match: str | Match | dict[str, Any] | None = None,
        kind: Kind = "status",
        *,
        times: int | None = 1,
        status: int | None = None,
        headers: dict[str, str] | None = None,
        body: Any = None,
        delay: float | None = None,
        after_commit: bool = False,
        partial: bool = False,
        chunks: int = 4,
    ) -> Fault:
        if kind not in KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {KINDS}")
        if kind == "status" and status is None:
            raise ValueError("a 'status' fault needs status=")
        if after_commit and kind not in ("timeout", "reset", "status"):
            raise ValueError("after_commit applies to 'timeout', 'reset' and 'status' faults")
        fault = Fault(
            Match.parse(match), kind, times, status, dict(headers or {}), body, delay,
            after_commit, partial, max(1, chunks), next(_ids),
        )
        with self._lock:
            self._rules.append(fault)
        return fault

    def secondary_rate_limit(self, match: str | Match | None = None, *, retry_after: int = 30,
                             times: int | None = 1) -> Fault:
        """GitHub's 403 secondary rate limit with `retry-after`."""
        return self.add(match, "status", status=403, times=times, body=dict(SECONDARY_RATE_LIMIT),
                        headers={"retry-after": str(retry_after)})

    def take(self, operation: str | None, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._rules:
                if fault.times is not None and fault.fired >= fault.times:
                    continue
                if fault.match.hits(operation, method, path):
                    fault.fired += 1
                    return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def remove(self, fault_id: int) -> bool:
        with self._lock:
            before = len(self._rules)
            self._rules = [f for f in self._rules if f.id != fault_id]
            return len(self._rules) != before

    @property
    def pending(self) -> list[Fault]:
        """Rules that can still fire."""
        with self._lock:
            return [f for f in self._rules if f.times is None or f.fired < f.times]

    def __iter__(self) -> Iterator[Fault]:
        with self._lock:
            return iter(list(self._rules))

    def __len__(self) -> int:
        return len(self.pending)
