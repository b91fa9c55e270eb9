"""Run an ASGI app with uvicorn on 127.0.0.1 (a free port) in a background thread, or in the foreground."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from fakegithub.asgi import InjectedReset, Receive, Scope, Send

ASGIApp = Callable[[Scope, Receive, Send], Any]


class _ExposeAbort:
    """Put `fakegithub.abort` (drop the TCP connection) into the scope for `reset` faults.

    uvicorn's `send` is a bound method of the per-request cycle, which holds the asyncio transport.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = getattr(getattr(send, "__self__", None), "transport", None)
        if scope["type"] == "http" and transport is not None:
            scope.setdefault("extensions", {})
            scope["extensions"] = {**(scope["extensions"] or {}), "fakegithub.abort": transport.abort,
                                   "fakegithub.close": transport.close}
        await self.app(scope, receive, send)


class _DropInjectedResets(logging.Filter):
    """uvicorn logs every app exception; injected resets are intentional."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, InjectedReset):
                return False
            exc = exc.__cause__ or exc.__context__
        return "returned without starting response" not in record.getMessage()


_filter = _DropInjectedResets()


def _config(app: ASGIApp, host: str, port: int) -> uvicorn.Config:
    logging.getLogger("uvicorn.error").addFilter(_filter)
    return uvicorn.Config(
        _ExposeAbort(app),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=False,
        date_header=False,  # the fake's own Date (its clock, maybe offset) is the only one
        server_header=False,
        timeout_graceful_shutdown=2,
    )


@contextmanager
def serve_in_thread(app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0,
                    on_stop: Callable[[], None] | None = None) -> Iterator[str]:
    """`with serve_in_thread(app) as base_url:` — uvicorn on a free port until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound_port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, bound_port))
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # surfaced in the caller
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"fakegithub-{bound_port}", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"uvicorn failed to start: {failure[:1]}")
            thread.join(0.01)
        yield f"http://{host}:{bound_port}"
    finally:
        if on_stop is not None:
            on_stop()
        server.should_exit = True
        thread.join(10)
        sock.close()


def serve_forever(app: ASGIApp, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    uvicorn.Server(_config(app, host, port)).run()
