"""How a client stops a running call between its steps (a batch between items).

* `notifications/cancelled` names the call by its JSON-RPC id. Over stdio the SDK cancels the
  handler itself; over stateless HTTP the notification arrives in a POST of its own, where no
  session knows the call, so `InFlight` keeps the running calls by (caller identity, request id)
  and only the same caller's notification stops them (an id is the client's choice: another
  caller naming it must not). Two calls of one caller sharing an id both stop. The 2026-07-28
  wire has no such notification over HTTP: a client cancels by closing the response stream.
* A client that goes away (its HTTP connection closed, a timeout, a closed response stream) is
  noticed through `ClientGone`'s `Connection`: once the request body is read, a call that asks
  (a running batch) reads the connection until it ends; no other call pays for watching.

Either stops the call (`CallHost.cancelled` returns).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONNECTION = "ghmcp.connection"  # ASGI scope key: the POST's `Connection`


def connection_of(request: Any) -> Connection | None:
    """The HTTP connection that carries this request's call (None without HTTP)."""
    scope = getattr(request, "scope", None)
    found = scope.get(CONNECTION) if isinstance(scope, dict) else None
    return found if isinstance(found, Connection) else None


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


class Connection:
    """One POST's connection as its call sees it. Once the body is read the app never reads the
    connection again (it is answered through `send`), so a call that wants to know when its
    client goes away (`closed`, a running batch) reads it itself; nothing does for other calls."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._body_read = anyio.Event()
        self._gone = anyio.Event()
        self._watched = False

    async def receive(self) -> Message:
        """The app's `receive`: the request body, then a disconnect once the client is gone."""
        if self._body_read.is_set():
            await self._gone.wait()
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.disconnect":
            self._gone.set()
        elif not message.get("more_body", False):
            self._body_read.set()
        return message

    async def closed(self) -> None:
        """Returns once the client disconnected (closed its connection or its response stream)."""
        await self._body_read.wait()
        if self._watched:
            await self._gone.wait()
            return
        self._watched = True
        try:
            while (await self._receive())["type"] != "http.disconnect":
                pass
            self._gone.set()
        finally:
            self._watched = self._gone.is_set()  # a watcher stopped early leaves it to the next


class ClientGone:
    """ASGI middleware for POST requests: the request's `Connection` in `scope[CONNECTION]`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        connection = scope[CONNECTION] = Connection(receive)
        await self.app(scope, connection.receive, send)
