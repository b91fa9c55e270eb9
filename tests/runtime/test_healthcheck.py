"""The container healthcheck probe against canned loopback answers (the real server answering it
is tested from the installed wheels in tests/packaging)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ghmcp_runtime.serving.healthcheck import main, probe


@contextmanager
def answering(status: int, body: bytes, headers: dict[str, str]) -> Iterator[int]:
    seen: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert all(b'"method": "ping"' in s for s in seen)


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(("status", "body", "headers", "healthy"), [
    (200, b'{"jsonrpc": "2.0", "id": "healthcheck", "result": {}}', JSON, True),
    (401, b"", {"WWW-Authenticate": 'Bearer resource_metadata="http://x/.well-known"'}, True),
    (401, b"", {}, False),
    (403, b"", {"WWW-Authenticate": "Bearer"}, False),
    (500, b"boom", {}, False),
    (200, b"<html>", {}, False),
    (200, b'{"jsonrpc": "2.0", "id": "healthcheck", "error": {"code": -32601}}', JSON, False),
])
def test_probe_verdicts(status: int, body: bytes, headers: dict[str, str], healthy: bool) -> None:
    with answering(status, body, headers) as port:
        verdict = probe(f"http://127.0.0.1:{port}/mcp", 3.0)
    assert (verdict is None) is healthy, verdict


def test_main_reads_the_port_from_the_environment_and_exits_1_when_nothing_listens(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with answering(200, b'{"result": {}}', JSON) as port:
        monkeypatch.setenv("GHMCP_PORT", str(port))
        assert main([]) == 0
    assert main(["--port", str(port), "--timeout", "1"]) == 1
    assert "unhealthy: no answer" in capsys.readouterr().err
