"""Prism (`@stoplight/prism-cli`) serving GitHub's documented examples for chosen operations.

    with prism_mock(["issues/get-milestone", "repos/get-release"]) as mock:
        httpx.get(f"{mock.base_url}/repos/o/r/milestones/1")   # 200, the documented example

or, in a test, the session-scoped `prism` fixture (registered in tests/conftest.py):

    def test_x(prism): mock = prism(["issues/get-milestone"], overrides=Path("overrides/x.yaml"))

Prism 5.14.2 (the newest release that runs on Node 20) is installed with npm into the git-ignored
`.prism/` on first use; without node/npm the fixture raises NodeSetupError (an error, never a
skip). Each mock gets a trimmed + normalized copy of the pinned spec (tests/support/mock_spec.py),
runs `prism mock` in static mode on 127.0.0.1 at a free port in its own process group, and that
group is killed when the mock is no longer needed. Prism validates every request against the spec
and answers 422 when it does not match.

    python3 -m tests.support.prism --install-only          # CI setup (standard library only)
    .venv/bin/python -m tests.support.prism --measure [--runs 3] [--full] OPID...
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `python3 -m tests.support.prism` from elsewhere
    sys.path.insert(0, str(ROOT))

from tests.support.node import ensure_npm_package, node_env  # noqa: E402

PRISM = "@stoplight/prism-cli"
PRISM_VERSION = "5.14.2"  # 5.15+ declares engines.node >= 24.14
PREFIX = ROOT / ".prism"
READY_TIMEOUT = 120.0  # the full 13 MB spec needs ~10 s on a quiet machine
STOP_TIMEOUT = 10.0
PORT_ATTEMPTS = 3
DEFAULT_OPERATIONS = ("repos/list-releases", "repos/get-release", "issues/get-milestone",
                      "issues/create-milestone")


def ensure_prism(prefix: Path = PREFIX) -> Path:
    """The `prism` bin under `prefix`, installed when missing (NodeSetupError without node/npm)."""
    return ensure_npm_package(prefix, PRISM, PRISM_VERSION, "prism")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def group_rss_bytes(pgid: int) -> int | None:
    """Resident memory of every process in the group (Linux /proc), None when unreadable."""
    total, found = 0, False
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) != pgid:  # state, ppid, pgrp, ...
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    found = True
        except (OSError, ValueError, IndexError):
            continue
    return total if found else None


@dataclass(frozen=True)
class PrismMock:
    base_url: str
    pid: int  # also the process group id
    spec_path: Path
    ready_seconds: float  # from spawn to the first HTTP answer
    log: Path

    def rss_bytes(self) -> int | None:
        return group_rss_bytes(self.pid)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP status (Prism: 404 NO_PATH_MATCHED_ERROR) means it is serving
    except OSError:
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the process group started for `proc` (kill it if it lingers)."""
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, STOP_TIMEOUT)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    if proc.poll() is None:
        proc.wait(STOP_TIMEOUT)


def _spawn(binary: Path, spec_path: Path, log: IO[bytes], dynamic: bool
           ) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [str(binary), "mock", str(spec_path), "--host", "127.0.0.1", "--port", str(port)]
    if dynamic:
        cmd.append("--dynamic")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=node_env(), start_new_session=True)
    return proc, f"http://127.0.0.1:{port}"


@contextmanager
def run_prism(spec_path: Path, *, dynamic: bool = False, binary: Path | None = None
              ) -> Iterator[PrismMock]:
    """`prism mock spec_path` until it answers HTTP; its process group is killed on exit."""
    binary = binary or ensure_prism()
    log_path = spec_path.with_suffix(".prism.log")
    with open(log_path, "wb") as log:
        for attempt in range(1, PORT_ATTEMPTS + 1):
            started = time.perf_counter()
            proc, base_url = _spawn(binary, spec_path, log, dynamic)
            exited = None
            try:
                while not _answers(base_url + "/"):
                    exited = proc.poll()
                    if exited is not None or time.perf_counter() - started > READY_TIMEOUT:
                        break
                    time.sleep(0.05)
                else:
                    yield PrismMock(base_url, proc.pid, spec_path, time.perf_counter() - started,
                                    log_path)
                    return
            finally:
                _stop(proc)
            text = log_path.read_text(encoding="utf-8", errors="replace")
            if exited is not None and "EADDRINUSE" in text and attempt < PORT_ATTEMPTS:
                continue  # another process took the free port first
            state = (f"exited with {exited}" if exited is not None
                     else f"did not answer within {READY_TIMEOUT:.0f} s")
            raise RuntimeError(f"prism mock {spec_path} {state}; log tail:\n{text[-3000:]}")


@contextmanager
def prism_mock(operation_ids: Iterable[str] | None = DEFAULT_OPERATIONS, *,
               overrides: Path | None = None, dynamic: bool = False) -> Iterator[PrismMock]:
    """Prism serving the pinned spec trimmed to `operation_ids` (None = all), with `overrides`'
    spec patches when given, normalized; the spec and log live in a temporary directory."""
    from tests.support.mock_spec import write_mock_spec

    binary = ensure_prism()  # before the spec work: a missing node fails fast
    with tempfile.TemporaryDirectory(prefix="prism-") as tmp:
        spec_path = write_mock_spec(operation_ids, Path(tmp) / "spec.json", overrides=overrides)
        with run_prism(spec_path, dynamic=dynamic, binary=binary) as mock:
            yield mock


StartPrism = Callable[..., PrismMock]


@contextmanager
def prism_pool() -> Iterator[StartPrism]:
    """`start(operation_ids, overrides=None, dynamic=False)`: one mock per distinct argument set,
    reused until the pool closes (then every mock's process group is killed)."""
    running: dict[tuple[tuple[str, ...], str, bool], PrismMock] = {}
    with ExitStack() as stack:

        def start(operation_ids: Iterable[str], overrides: Path | None = None,
                  dynamic: bool = False) -> PrismMock:
            ops = tuple(sorted(set(operation_ids)))
            key = (ops, str(overrides.resolve()) if overrides else "", dynamic)
            if key not in running:
                running[key] = stack.enter_context(
                    prism_mock(ops, overrides=overrides, dynamic=dynamic))
            return running[key]

        yield start


try:
    import pytest
except ImportError:  # `python3 -m tests.support.prism --install-only` runs without the venv
    pass
else:

    @pytest.fixture(scope="session")
    def prism() -> Iterator[StartPrism]:
        """Start (or reuse) a Prism mock: `prism(["issues/get-milestone"], overrides=path)`."""
        with prism_pool() as start:
            yield start


# measuring ------------------------------------------------------------------------------------


def measure(operation_ids: Sequence[str] | None, runs: int) -> list[tuple[float, int | None, int]]:
    """(seconds to the first answer, RSS bytes once ready, spec bytes) per run."""
    from tests.support.mock_spec import write_mock_spec

    binary = ensure_prism()
    rows = []
    with tempfile.TemporaryDirectory(prefix="prism-measure-") as tmp:
        spec_path = write_mock_spec(operation_ids, Path(tmp) / "spec.json")
        for _ in range(runs):
            with run_prism(spec_path, binary=binary) as mock:
                rows.append((mock.ready_seconds, mock.rss_bytes(), spec_path.stat().st_size))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install Prism or measure its start-up.")
    parser.add_argument("--install-only", action="store_true")
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also measure the whole spec")
    parser.add_argument("operation_ids", nargs="*", default=list(DEFAULT_OPERATIONS))
    args = parser.parse_args(argv)
    binary = ensure_prism()
    if not args.measure:
        print(f"{PRISM}@{PRISM_VERSION}: {binary}")
        return 0
    floor = []
    for _ in range(args.runs):
        started = time.perf_counter()
        subprocess.run([str(binary), "--version"], capture_output=True, env=node_env(), check=True)
        floor.append(time.perf_counter() - started)
    print(f"floor (`prism --version`: node + prism load): "
          f"{' / '.join(f'{t:.2f}' for t in floor)} s (median {sorted(floor)[len(floor) // 2]:.2f} s)")
    cases: list[tuple[str, Sequence[str] | None]] = [
        (f"{len(args.operation_ids)} operations", args.operation_ids)]
    if args.full:
        cases.append(("full spec", None))
    for label, ops in cases:
        rows = measure(ops, args.runs)
        times = sorted(r[0] for r in rows)
        rss = sorted(r[1] or 0 for r in rows)
        print(f"{label}: spec {rows[0][2]:,} B; ready {' / '.join(f'{t:.2f}' for t, *_ in rows)} s "
              f"(median {times[len(times) // 2]:.2f} s); RSS at ready "
              f"{' / '.join(f'{(r[1] or 0) / 2**20:.0f}' for r in rows)} MiB "
              f"(median {rss[len(rss) // 2] / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
