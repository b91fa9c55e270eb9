"""`github-mcp --dynamic-toolsets` through clients no one here wrote: the MCP Inspector 2.12.0 CLI
(one request per run) and `mcpdo`, the connection CLI of the same Inspector package (one
connection across runs, through its daemon), both protocol eras, against the demo fake GitHub.

    python tests/compat/dynamic_compat.py [--eras legacy,modern]

Per era:

* Inspector CLI over stdio: `tools/list --strict` shows the three toolset tools with no
  schema-portability finding; `tools/call github_enable_toolsets` exits 0 (the Inspector checks
  the answer against the published outputSchema) and reports it applied and notified;
* mcpdo over stdio, one connection: the server advertises `tools.listChanged`; tools/list shows 3
  tools, an enable of `milestones` is applied, and tools/list on the same connection then shows
  the milestones tools too, which it calls. In the modern era the Inspector's SDK serves
  tools/list from its response cache (ttlMs 300000) until a `list_changed` evicts it, so the
  grown list there is the notification arriving;
* Inspector CLI over HTTP: an enable answers the X-MCP-Toolsets header to send and changes
  nothing (the next run still lists 3 tools); a run that sends the header lists the toolset too.

Exits 1 on any mismatch (a table of every check), 2 when node/npm are missing. Every process it
starts (fake, HTTP server, mcpdo daemon) is stopped before it exits.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.compat.inspector_compat import (  # noqa: E402
    DEMO_TOKEN,
    OWNER,
    REPO,
    demo_fake,
    ensure_inspector,
    free_port,
)
from tests.support.node import node_env  # noqa: E402
from tests.support.processes import stop  # noqa: E402

SCRIPT = Path(sys.executable).parent / "github-mcp"
META = ["github_enable_toolsets", "github_get_toolset_tools", "github_list_toolsets"]
ERAS = {"legacy": "2025-11-25", "modern": "2026-07-28"}


def milestone_tools() -> list[str]:
    code = ("from github_mcp import SERVER as S; "
            "print(' '.join(sorted(t.name for t in S.tools if t.toolset == 'milestones')))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          check=True).stdout.split()


class Checks:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, bool, str]] = []

    def __call__(self, era: str, what: str, ok: bool, detail: Any = "") -> bool:
        self.rows.append((era, what, ok, "" if ok else str(detail)[-1500:]))
        return ok


def run(cmd: Sequence[str], home: str, timeout: int = 90) -> tuple[int, str, str]:
    done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout,
                          env=node_env(home), cwd=ROOT)
    return done.returncode, done.stdout, done.stderr


def as_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {}


def structured(data: Any) -> dict[str, Any]:
    result = data.get("result", data) if isinstance(data, dict) else {}
    content = result.get("structuredContent") if isinstance(result, dict) else None
    return content if isinstance(content, dict) else {}


def names(data: Any) -> list[str]:
    result = data.get("result", data) if isinstance(data, dict) else {}
    return sorted(t.get("name") for t in (result.get("tools", []) if isinstance(result, dict) else []))


def inspector_stdio(binary: Path, check: Checks, era: str, api_url: str, home: str) -> None:
    base = [str(binary), "--cli", str(SCRIPT), "--dynamic-toolsets", "-e", f"GITHUB_TOKEN={DEMO_TOKEN}",
            "-e", f"GITHUB_API_URL={api_url}", "--cwd", str(ROOT), "--protocol-era", era,
            "--format", "json"]
    rc, out, err = run([*base, "--method", "tools/list", "--strict"], home)
    check(era, "inspector stdio: tools/list --strict = the 3 toolset tools", rc == 0 and names(as_json(out)) == META,
          f"rc {rc} {out} {err}")
    rc, out, err = run([*base, "--method", "tools/call", "--tool-name", "github_enable_toolsets",
                        "--tool-args-json", json.dumps({"toolsets": ["milestones"]})], home)
    answer = structured(as_json(out))
    check(era, "inspector stdio: enable exits 0, applied and notified",
          rc == 0 and answer.get("applied") is True and answer.get("notified") is True, f"rc {rc} {out} {err}")


@contextmanager
def mcpdo_daemon(binary: Path, home: str) -> Iterator[Path]:
    mcpdo = binary.with_name("mcpdo")
    try:
        yield mcpdo
    finally:
        run([str(mcpdo), "daemon", "stop"], home, timeout=30)


def mcpdo_stdio(mcpdo: Path, check: Checks, era: str, api_url: str, home: str, grown: list[str]) -> None:
    rc, out, err = run([str(mcpdo), "--format", "json", "connect", "--era", era, "-e",
                        f"GITHUB_TOKEN={DEMO_TOKEN}", "-e", f"GITHUB_API_URL={api_url}", "--cwd",
                        str(ROOT), "--", str(SCRIPT), "--dynamic-toolsets"], home)
    if not check(era, "mcpdo: connect", rc == 0, f"rc {rc} {out} {err}"):
        return
    listed = as_json(run([str(mcpdo), "--format", "json", "connections/list"], home)[1])
    connections = listed.get("connections", listed) if isinstance(listed, dict) else listed
    name = connections[0]["name"] if connections else ""
    conn = [str(mcpdo), "--format", "json", "--connection", name]
    try:
        shown = as_json(run([*conn, "connections/show"], home)[1])
        check(era, f"mcpdo: {ERAS[era]} negotiated, tools.listChanged advertised",
              shown.get("protocolVersion") == ERAS[era]
              and shown.get("capabilities", {}).get("tools", {}).get("listChanged") is True, shown)
        rc, out, err = run([*conn, "tools/list"], home)
        check(era, "mcpdo: tools/list = the 3 toolset tools", names(as_json(out)) == META, f"{out} {err}")
        rc, out, err = run([*conn, "tools/call", "github_enable_toolsets", 'toolsets:=["milestones"]'], home)
        answer = structured(as_json(out))
        check(era, "mcpdo: enable milestones applied and notified",
              answer.get("applied") is True and answer.get("notified") is True, f"{out} {err}")
        rc, out, err = run([*conn, "tools/list"], home)
        check(era, "mcpdo: the same connection's tools/list now holds milestones",
              names(as_json(out)) == sorted(META + grown), f"{out} {err}")
        rc, out, err = run([*conn, "tools/call", "github_list_milestones",
                            json.dumps({"owner": OWNER, "repo": REPO})], home)
        check(era, "mcpdo: an enabled tool answers", rc == 0 and "milestones" in structured(as_json(out)),
              f"rc {rc} {out} {err}")
    finally:
        run([str(mcpdo), "disconnect", name], home, timeout=30)


@contextmanager
def http_server(api_url: str) -> Iterator[str]:
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "GITHUB_API_URL": api_url, "HOME": tempfile.gettempdir()}
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([str(SCRIPT), "--transport", "http", "--port", str(port),
                                 "--dynamic-toolsets"], env=env, cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            from tests.http.http_support import _wait_for_port

            _wait_for_port(port, proc, None, "github-mcp --transport http")
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop(proc)


def inspector_http(binary: Path, check: Checks, era: str, url: str, home: str, grown: list[str]) -> None:
    base = [str(binary), "--cli", url, "--protocol-era", era, "--format", "json"]
    auth = f"Authorization: Bearer {DEMO_TOKEN}"
    rc, out, err = run([*base, "--header", auth, "--method", "tools/call", "--tool-name",
                        "github_enable_toolsets", "--tool-args-json",
                        json.dumps({"toolsets": ["milestones"]})], home)
    answer = structured(as_json(out))
    header = answer.get("send_header", {}).get("X-MCP-Toolsets")
    check(era, "inspector http: enable answers the header, applies nothing",
          rc == 0 and answer.get("applied") is False and header == "milestones", f"rc {rc} {out} {err}")
    rc, out, err = run([*base, "--header", auth, "--method", "tools/list"], home)
    check(era, "inspector http: a run without the header still lists 3 tools", names(as_json(out)) == META,
          f"{out} {err}")
    rc, out, err = run([*base, "--header", auth, f"X-MCP-Toolsets: {header}", "--method", "tools/list"], home)
    check(era, "inspector http: a run with the header lists the toolset", names(as_json(out)) == sorted(META + grown),
          f"{out} {err}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eras", default="legacy,modern")
    parser.add_argument("--prefix", type=Path, default=ROOT / ".compat")
    args = parser.parse_args(argv)
    binary = ensure_inspector(args.prefix)
    grown = milestone_tools()
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="dynamic-compat-") as home, demo_fake() as api_url, \
            mcpdo_daemon(binary, home) as mcpdo, http_server(api_url) as url:
        for era in (e.strip() for e in args.eras.split(",")):
            inspector_stdio(binary, check, era, api_url, home)
            mcpdo_stdio(mcpdo, check, era, api_url, home, grown)
            inspector_http(binary, check, era, url, home, grown)
    width = max(len(what) for _, what, _, _ in check.rows)
    for era, what, ok, detail in check.rows:
        print(f"{era:<7} {what:<{width}}  {'ok' if ok else 'MISMATCH'}")
        if detail:
            print(f"        {detail}")
    bad = sum(not ok for _, _, ok, _ in check.rows)
    print(f"\n{len(check.rows) - bad}/{len(check.rows)} checks ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
