"""Shared helpers for the side-by-side benchmarks: statistics, byte counts, process memory, free
ports, and a raw JSON-lines stdio driver (no MCP SDK on the client side).

Byte counts are UTF-8 lengths of compact JSON (`separators=(",", ":")`, `ensure_ascii=False`),
the serialization both servers put on the stdio wire.
"""

from __future__ import annotations

import json
import os
import select
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
WORK = BENCH / ".work"  # git-ignored scratch: trimmed spec, logs
LEGACY_VERSION = "2025-11-25"


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def nbytes(value: Any) -> int:
    return len(compact(value))


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary(samples: Sequence[float]) -> dict[str, Any]:
    """median, min, max (and n) of a list of run-level figures."""
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
            "n": len(samples), "samples": list(samples)}


def rss_kib(pid: int) -> dict[str, int]:
    """Current (VmRSS) and peak (VmHWM) resident memory of a process, in KiB (Linux)."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def tree_rss_kib(pid: int) -> int:
    """VmRSS of a process plus its descendants (a console script may be a wrapper)."""
    total = rss_kib(pid).get("VmRSS", 0)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(tree_rss_kib(int(c)) for c in children)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[Any] | None = None, timeout_s: float = 60.0,
              what: str = "server", log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening\n{tail}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout_s} s")


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextmanager
def fake_process(latency_s: float = 0.0) -> Iterator[str]:
    """bench/fake_server.py in its own process on a free loopback port; yields its base URL."""
    port = free_port()
    WORK.mkdir(exist_ok=True)  # git-ignored: absent in a fresh clone
    logf = WORK / "fake.log"
    argv = [sys.executable, str(BENCH / "fake_server.py"), "--port", str(port)]
    if latency_s:
        argv += ["--latency", str(latency_s)]
    with logf.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_port(port, proc, what="bench fake GitHub", log=logf)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def base_env(**extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
           "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}
    env.update(extra)
    return env


class RawStdio:
    """A JSON-lines client on a server's stdin/stdout: no SDK, no validation, just bytes.

    `start()` is the t0 of a cold start (Popen). `handshake_and_list()` pipelines the legacy
    `initialize`, `notifications/initialized` and `tools/list` and returns when the list arrives.
    """

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path = ROOT,
                 stderr: Path | None = None) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.cwd = cwd
        self.stderr_path = stderr
        self.proc: subprocess.Popen[bytes] | None = None
        self._buf = b""
        self._next_id = 1
        self.t0 = 0.0

    def start(self) -> None:
        err = self.stderr_path.open("ab") if self.stderr_path else subprocess.DEVNULL
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=err, env=self.env, cwd=self.cwd, bufsize=0)
        if self.stderr_path:
            err.close()  # type: ignore[union-attr]

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(compact(message) + b"\n")

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> int:
        rid = self._next_id
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": dict(params or {})})
        return rid

    def read_line(self, timeout_s: float = 60.0) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from {self.argv[0]} within {timeout_s} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError(f"{' '.join(self.argv)} closed stdout (exit {self.proc.poll()})")
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def wait_for(self, rid: int, timeout_s: float = 60.0) -> tuple[dict[str, Any], int]:
        """The response with id `rid` (notifications and other ids are skipped) and its size."""
        while True:
            line = self.read_line(timeout_s)
            message = json.loads(line)
            if message.get("id") == rid:
                return message, len(line)

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self.wait_for(self.request(method, params))[0]

    def handshake_and_list(self) -> tuple[dict[str, Any], int]:
        init = self.request("initialize", {
            "protocolVersion": LEGACY_VERSION, "capabilities": {},
            "clientInfo": {"name": "bench-raw-driver", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listing = self.request("tools/list", {})
        self.wait_for(init)
        return self.wait_for(listing)

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            stop(self.proc)
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> RawStdio:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



def spawn_to_list(argv: Sequence[str], env: Mapping[str, str], cwd: Path = ROOT,
                  stderr: Path | None = None) -> float:
    """Seconds from spawning a stdio server to its tools/list answer (a cold start)."""
    driver = RawStdio(argv, env, cwd=cwd, stderr=stderr)
    driver.start()
    try:
        message, _ = driver.handshake_and_list()
        elapsed = time.perf_counter() - driver.t0
    finally:
        driver.close()
    if "result" not in message:
        raise RuntimeError(f"{list(argv)}: tools/list failed: {message}")
    return elapsed