"""`python -m ghmcp_runtime.serving.healthcheck [--port N]`: exit 0 when the HTTP server on this machine
answers an MCP `ping` on its endpoint, 1 otherwise (for container HEALTHCHECKs).

Standard library only, one request, no credential: a server that demands a bearer token answers
with its own 401 challenge (`WWW-Authenticate: Bearer …`), which counts as alive too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence

PING = json.dumps({"jsonrpc": "2.0", "id": "healthcheck", "method": "ping"}).encode()


def probe(url: str, timeout_s: float) -> str | None:
    """None when healthy, else why not."""
    request = urllib.request.Request(url, data=PING, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read(65536)
    except urllib.error.HTTPError as exc:
        challenge = exc.headers.get("WWW-Authenticate", "")
        if exc.code == 401 and challenge.lower().startswith("bearer"):
            return None
        return f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return f"no answer: {exc}"
    try:
        answer = json.loads(body)
    except ValueError:
        return "the answer is not JSON"
    if not isinstance(answer, dict) or "result" not in answer:
        return f"the ping was not answered with a result: {body[:200]!r}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ghmcp_runtime.serving.healthcheck")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GHMCP_PORT", "8000")),
                        help="the server's HTTP port (default: $GHMCP_PORT, else 8000)")
    parser.add_argument("--path", default="/mcp", help="the MCP endpoint (default /mcp)")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds (default 3)")
    args = parser.parse_args(argv)
    problem = probe(f"http://127.0.0.1:{args.port}{args.path}", args.timeout)
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
