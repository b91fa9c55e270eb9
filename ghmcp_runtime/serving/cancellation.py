"""How a client stops a running call between its steps (a batch between items).

* `notifications/cancelled` names the call by its JSON-RPC id. Over stdio the SDK cancels the
  handler itself; over stateless HTTP the notification arrives in a POST of its own, where no
  session knows the call, so `InFlight` keeps the running calls by (caller identity, request id)
  and only the same caller's notification stops them (an id is the client's choice: another
  caller naming it must not). Two calls of one caller sharing an id both stop. The 2026-07-28
  wire has no such notification over HTTP: a client cancels by closing the response stream.
* A client that goes away (its HTTP connection closed, a timeout, a closed response stream) is
  noticed by `ClientGone`, which watches the connection once the request body is read.

Both set the call's one `stop` event (`CallHost.cancelled` returns when it is set).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

GONE = "ghmcp.client_gone"  # ASGI scope key: an anyio.Event set when the client went away


def stop_event(request: Any) -> anyio.Event:
    """The event that stops this request's call: its HTTP client's `GONE` when there is one."""
    scope = getattr(request, "scope", None)
    gone = scope.get(GONE) if isinstance(scope, dict) else None
    return gone if isinstance(gone, anyio.Event) else anyio.Event()


def _key(request_id: Any) -> str:
    return json.dumps(request_id)  # "1" and 1 are different ids


class InFlight:
    """The running calls a caller may stop by their JSON-RPC id (entries only while they run)."""

    def __init__(self) -> None:
        self._calls: dict[tuple[str, str], list[anyio.Event]] = {}

    @contextmanager
    def running(self, identity: str, request_id: Any, stop: anyio.Event) -> Iterator[None]:
        key = (identity, _key(request_id))
        self._calls.setdefault(key, []).append(stop)
        try:
            yield
        finally:
            stops = self._calls.get(key, [])
            stops.remove(stop)
            if not stops:
                self._calls.pop(key, None)

    def cancel(self, identity: str, request_id: Any) -> int:
        """Stop `identity`'s calls with this id; how many there were."""
        stops = self._calls.get((identity, _key(request_id)), [])
        for stop in stops:
            stop.set()
        return len(stops)


class ClientGone:
    """ASGI middleware for POST requests: once the body is read, the connection is watched, and
    `scope[GONE]` is set when the client disconnects before the answer is complete."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        gone = scope[GONE] = anyio.Event()
        body_read = anyio.Event()

        async def app_receive() -> Message:
            if body_read.is_set():  # from here on the watcher reads the connection
                await gone.wait()
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                body_read.set()
            return message

        async def watch() -> None:
            await body_read.wait()
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            try:
                await self.app(scope, app_receive, send)
            finally:
                group.cancel_scope.cancel()
