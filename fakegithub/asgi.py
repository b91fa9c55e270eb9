"""ASGI plumbing every forge's fake shares, below the app and the fakes: the ASGI callable types,
`Incoming` (one request as read), `InjectedReset` (a `reset` fault drops the connection) and
`Forge`, what the app and a pipeline ask of the fake they serve (`core.FakeForge` is one). The
app, transports and servers import this module; it imports none of them, so a fake and the app
that serves it need not import each other."""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote

from fakegithub.faults import Faults
from fakegithub.routing import Router
from fakegithub.validation import Contract

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class InjectedReset(Exception):
    """Raised by the app to drop the connection (a `reset` fault)."""


@dataclass
class Incoming:
    method: str
    path: str  # percent-decoded
    raw_path: str
    query_string: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes
    base: str  # scheme://host[:port] as the client addressed us
    spent: bool = False  # whether answering it took a unit of rate-limit budget

    @property
    def json(self) -> Any:
        if not self.body.strip():
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return self.body.decode("utf-8", "replace")


async def read_incoming(scope: Scope, receive: Receive) -> Incoming:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        elif message["type"] == "http.disconnect":
            break
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    raw_path = scope.get("raw_path") or scope["path"].encode()
    raw = raw_path.decode("latin-1").split("?", 1)[0]
    query_string = scope.get("query_string", b"").decode("latin-1")
    host = headers.get("host")
    if not host:
        server = scope.get("server") or ("testserver", 80)
        host = f"{server[0]}:{server[1]}"
    return Incoming(
        method=scope["method"].upper(),
        path=unquote(raw),
        raw_path=raw,
        query_string=query_string,
        query=dict(parse_qsl(query_string, keep_blank_values=True)),
        headers=headers,
        body=b"".join(chunks),
        base=f"{scope.get('scheme', 'http')}://{host}",
    )


class Forge(Protocol):
    """What `app.ApiApp` and a forge's pipeline ask of the fake they serve (read-only here)."""

    @property
    def lock(self) -> AbstractContextManager[Any]: ...
    @property
    def router(self) -> Router: ...
    @property
    def contract(self) -> Contract: ...
    @property
    def faults(self) -> Faults: ...
    @property
    def violations(self) -> list[str]: ...
    @property
    def latency(self) -> float: ...
    @property
    def _closing(self) -> threading.Event: ...

    def _record(self, incoming: Incoming, operation: str | None) -> None: ...
    def _time(self, incoming: Incoming, operation: str | None, status: int, started: float,
              ended: float) -> None: ...
