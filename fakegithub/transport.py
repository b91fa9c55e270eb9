"""An in-process httpx transport that behaves like a network for fault injection.

Unlike plain `httpx.ASGITransport` it honours the client's read timeout (as an idle timeout between
response messages, raising `httpx.ReadTimeout`) and turns an injected connection reset into
`httpx.RemoteProtocolError`, so client code sees the same exceptions as over real HTTP.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import anyio
import httpx

from fakegithub.asgi import InjectedReset


class FakeTransport(httpx.ASGITransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout") or {}
        read_timeout: float | None = timeouts.get("read")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for (k, v) in request.headers.raw],
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "server": (request.url.host, request.url.port),
            "client": self.client,
            "root_path": self.root_path,
            "extensions": {},
        }
        body = b"".join([chunk async for chunk in request.stream])  # type: ignore[union-attr]
        request_sent = False
        response_done = anyio.Event()
        status: list[int] = []
        headers: list[list[tuple[bytes, bytes]]] = []
        parts: list[bytes] = []
        last_activity = [anyio.current_time()]
        failure: list[BaseException] = []
        partial = [False]  # a body chunk with more_body=True was sent

        async def receive() -> MutableMapping[str, Any]:
            nonlocal request_sent
            if not request_sent:
                request_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await response_done.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            last_activity[0] = anyio.current_time()
            if message["type"] == "http.response.start":
                status.append(message["status"])
                headers.append(list(message.get("headers", [])))
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
                if message.get("more_body", False):
                    partial[0] = True
                else:
                    response_done.set()

        finished = anyio.Event()

        async def run_app() -> None:
            try:
                await self.app(scope, receive, send)
            except Exception as exc:  # handed to the caller below
                failure.append(exc)
            finally:
                response_done.set()
                finished.set()

        timed_out = False
        async with anyio.create_task_group() as group:
            group.start_soon(run_app)
            while not finished.is_set():
                if read_timeout is None:
                    await finished.wait()
                    break
                remaining = last_activity[0] + read_timeout - anyio.current_time()
                if remaining <= 0:
                    timed_out = True
                    group.cancel_scope.cancel()
                    break
                with anyio.move_on_after(remaining):
                    await finished.wait()

        if timed_out:
            raise httpx.ReadTimeout("timed out (fakegithub in-process transport)", request=request)
        if failure:
            exc = failure[0]
            if isinstance(exc, InjectedReset):
                if partial[0]:
                    raise httpx.RemoteProtocolError(
                        "peer closed connection without sending complete message body",
                        request=request,
                    ) from exc
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                ) from exc
            raise exc
        if not status:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.",
                                            request=request)
        return httpx.Response(status[0], headers=headers[0], content=b"".join(parts),
                              request=request)
