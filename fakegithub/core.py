"""`FakeForge`: what every forge's fake shares — the lock, state snapshots, the spec contract and
router, faults, the request log and timeline, latency, the ASGI app around `ApiApp` and a forge
pipeline, transports and serving. `FakeGitHub` and `fakeforgejo.FakeForgejo` add their forge's
world and seed helpers."""

from __future__ import annotations

import copy
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import httpx
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route

from fakegithub.app import ApiApp, ForgePipeline
from fakegithub.asgi import Incoming
from fakegithub.clock import Clock
from fakegithub.faults import Faults
from fakegithub.routing import Router
from fakegithub.transport import FakeTransport
from fakegithub.validation import Contract

API_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


class RecordedRequest(NamedTuple):
    """One API request as received (control calls under /_fake are not recorded)."""

    method: str
    path: str  # percent-decoded, no query string
    query: dict[str, str]
    body: Any  # parsed JSON, raw text if unparsable, None if empty
    operation_id: str | None  # None when no implemented operation matched


class TimedRequest(NamedTuple):
    """When one API request was received and when its answer was sent (time.monotonic() seconds of
    the fake's process), so a client can see which of its requests ran one after another."""

    method: str
    path: str
    operation_id: str | None
    status: int  # 0 when no answer was started (a dropped connection)
    started: float
    ended: float
    spent: bool  # it took a unit of rate-limit budget (a 304 or an injected fault does not)


TIMELINE_LIMIT = 10_000


def critical_path(spans: Sequence[tuple[float, float]]) -> int:
    """Sequential round trips among (started, ended) spans: the longest chain of requests each
    starting after the previous one ended."""
    ordered = sorted(spans, key=lambda s: s[1])
    depth: list[int] = []
    for i, (start, _) in enumerate(ordered):
        before = [depth[j] for j in range(i) if ordered[j][1] <= start]
        depth.append(1 + max(before, default=0))
    return max(depth, default=0)


class FakeForge:
    """A stateful forge fake whose requests and responses are checked against a pinned spec.

    Seed with the subclass's `add_*`, drive over `asgi_transport()` or `with serve() as base_url:`,
    and assert `violations == []` at the end."""

    state: Any  # the subclass's world; it has a `clock`

    def __init__(self, *, state: Any, contract: Contract, router: Router,
                 pipeline: Callable[[Any], ForgePipeline],
                 routes: Sequence[BaseRoute] = ()) -> None:
        self.lock = threading.RLock()
        self.state = state
        self.contract = contract
        self.router = router
        self.faults = Faults()
        self.requests: list[RecordedRequest] = []
        self.violations: list[str] = []
        # every API request's start and end, newest TIMELINE_LIMIT kept
        self.timeline: deque[TimedRequest] = deque(maxlen=TIMELINE_LIMIT)
        self.latency = 0.0  # seconds every API answer waits before it is sent (a network's RTT)
        self._closing = threading.Event()
        self._checkpoint: Any = None
        api = ApiApp(self, pipeline(self))
        self.app = Starlette(routes=[*routes, Route("/{path:path}", api, methods=API_METHODS)])

    def fresh_state(self, clock: Clock) -> Any:
        """An empty world on `clock` (what `reset()` returns to without a checkpoint)."""
        raise NotImplementedError

    # time ------------------------------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        clock: Clock = self.state.clock
        return clock

    @clock.setter
    def clock(self, value: Clock) -> None:
        self.state.clock = value

    # snapshots ---------------------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Remember the current data; `reset()` (and POST /_fake/reset) returns to it."""
        with self.lock:
            clock = self.state.clock
            self.state.clock = None  # type: ignore[assignment]  # clocks are not copied
            try:
                self._checkpoint = copy.deepcopy(self.state)
            finally:
                self.state.clock = clock

    def reset(self) -> None:
        """Back to the last checkpoint (or empty); clears faults, requests and violations."""
        with self.lock:
            clock = self.state.clock
            if self._checkpoint is None:
                self.state = self.fresh_state(clock)
            else:
                self.state = copy.deepcopy(self._checkpoint)
                self.state.clock = clock
            self.faults.clear()
            self.requests.clear()
            self.timeline.clear()
            self.violations.clear()

    def calls(self, operation_id: str | None = None) -> list[RecordedRequest]:
        """Recorded requests, optionally only those of one operation."""
        with self.lock:
            return [r for r in self.requests if operation_id is None or r.operation_id == operation_id]

    def assert_no_violations(self) -> None:
        with self.lock:
            if self.violations:
                listing = "\n  ".join(self.violations)
                raise AssertionError(f"{len(self.violations)} contract violation(s):\n  {listing}")

    def _time(self, incoming: Incoming, operation: str | None, status: int, started: float,
              ended: float) -> None:
        with self.lock:
            self.timeline.append(TimedRequest(incoming.method, incoming.path, operation, status,
                                              started, ended, incoming.spent))

    def _record(self, incoming: Incoming, operation: str | None) -> None:
        self.requests.append(RecordedRequest(incoming.method, incoming.path, dict(incoming.query),
                                             incoming.json, operation))

    # transports and serving ------------------------------------------------------------------------

    def asgi_transport(self) -> httpx.ASGITransport:
        """In-process transport; honours client read timeouts and injected resets like a network."""
        return FakeTransport(app=self.app)

    @contextmanager
    def serve(self, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
        """`with fake.serve() as base_url:` — uvicorn in a background thread on a free port."""
        from fakegithub.serve import serve_in_thread

        self._closing.clear()
        with serve_in_thread(self.app, host=host, port=port, on_stop=self._closing.set) as url:
            yield url
