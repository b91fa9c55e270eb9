"""Drive the MCP Inspector CLI (a client no one here wrote) against the stdio server.

    python tests/compat/inspector_compat.py [--eras legacy,modern] [--jobs N] [--report FILE]
    python3 tests/compat/inspector_compat.py --install-only      # just the npm install (CI setup)

Installs @modelcontextprotocol/inspector@2.12.0 into .compat/ (git-ignored) with
`npm install --prefix` when it is missing, starts the demo fake GitHub
(`python -m fakegithub --port P --seed demo`), and runs, per protocol era:

* `tools/list --strict`          expect exit 0 (6 = schema-portability errors);
* `resources/templates/list`     expect exit 0 and the server's template count;
* per tool, one successful call  expect exit 0;
* per tool, one failing call     expect exit 5 (tool error, isError) with the expected error
                                 code, never 1 (protocol or output-schema error).

The Inspector runs with HOME set to a temp dir made for this invocation. Prints a table (era,
check, tool, expected, exit code, outcome, ms) and exits 1 on any mismatch, 2 when node/npm are
missing.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: make `tests.support` importable
    sys.path.insert(0, str(ROOT))

from tests.support.node import NodeSetupError, ensure_npm_package, node_env  # noqa: E402
from tests.support.processes import stop  # noqa: E402

INSPECTOR = "@modelcontextprotocol/inspector"
INSPECTOR_VERSION = "2.12.0"
DEMO_TOKEN = "ghp_demo"
OWNER, REPO = "octo-org", "roadmap"
MISSING_REPO = "no-such-repo-compat"
DOOMED_LABEL = "compat-doomed"  # seeded before each era for github_delete_label
EXIT_MEANING = {0: "ok", 1: "protocol/usage error", 4: "unreachable", 5: "tool error",
                6: "strict schema findings"}


def repo(**more: Any) -> dict[str, Any]:
    return {"owner": OWNER, "repo": REPO, **more}


# tool -> (successful arguments, failing arguments, expected error code); `{era}` is substituted.
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    "github_search_issues": (
        repo(state="open", labels=["bug"], detail="summary"),
        {"owner": OWNER, "repo": MISSING_REPO}, "repo_not_found"),
    "github_get_issue": (
        repo(issue_number=1), repo(issue_number=9999), "issue_not_found"),
    "github_create_issue": (
        repo(title="Compat check ({era})", labels=["bug"], idempotency_key="compat-{era}-0001"),
        repo(title="Compat check ({era}) with a missing label", labels=["no-such-label"]),
        "label_not_found"),
    "github_update_issue": (
        repo(issue_number=1, add_labels=["triage"]), repo(issue_number=9999, state="closed"),
        "issue_not_found"),
    "github_add_comment": (
        repo(issue_number=1, body="Compat check ({era})"),
        repo(issue_number=9999, body="Compat check ({era})"), "issue_not_found"),
    "github_list_labels": (
        repo(), {"owner": OWNER, "repo": MISSING_REPO}, "repo_not_found"),
    "github_create_label": (
        repo(name="compat-{era}", color="#D93F0B", description="Made by make compat"),
        repo(name="bug", color="d73a4a"), "label_exists"),
    "github_update_label": (
        repo(name="question", description="Compat check ({era})"),
        repo(name="no-such-label", color="b60205"), "label_not_found"),
    "github_delete_label": (
        repo(name=DOOMED_LABEL), repo(name="no-such-label"), "label_not_found"),
    "github_update_issues": (
        repo(issue_numbers=[1, 2], add_labels=["triage"], dry_run=True),
        {"owner": OWNER, "repo": MISSING_REPO, "match": {"state": "open"}, "add_labels": ["triage"]},
        "repo_not_found"),
}


@dataclass
class Row:
    era: str
    check: str
    tool: str
    expected: str
    rc: int | None = None
    outcome: str = ""
    ms: int = 0
    ok: bool = False
    detail: str = field(default="", repr=False)


def fail_setup(message: str, code: int = 2) -> NoReturn:
    print(f"inspector_compat: {message}", file=sys.stderr)
    sys.exit(code)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- setup ---------------------------------------------------------------------------------------


def ensure_inspector(prefix: Path) -> Path:
    """The `inspector` bin of @modelcontextprotocol/inspector@2.12.0 under `prefix` (installed if
    missing); the same file `npx --prefix <prefix> inspector` resolves to, without npx's overhead."""
    try:
        return ensure_npm_package(prefix, INSPECTOR, INSPECTOR_VERSION, "inspector")
    except NodeSetupError as exc:
        fail_setup(f"the Inspector CLI: {exc}")


def _http(method: str, url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read()
    return json.loads(raw) if raw.strip() else None


@contextmanager
def demo_fake() -> Iterator[str]:
    """`python -m fakegithub --port P --seed demo` on loopback; yields its base URL."""
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fakegithub", "--port", str(port), "--seed", "demo"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    fail_setup(f"the fake exited with {proc.returncode}:\n{log.read().decode()[-3000:]}")
                try:
                    _http("GET", f"{url}/_fake/health")
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        fail_setup("the fake did not answer /_fake/health within 30 s")
                    time.sleep(0.1)
            yield url
        finally:
            stop(proc)


def server_surface() -> tuple[list[str], int]:
    """Tool names and template count of the generated server (what the Inspector should see)."""
    code = ("import json; from github_issues_mcp import SERVER as S; "
            "print(json.dumps([[t.name for t in S.tools], len(getattr(S, 'templates', ()))]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout
    names, templates = json.loads(out)
    return names, templates


# --- running the Inspector -----------------------------------------------------------------------


class Inspector:
    def __init__(self, binary: Path, api_url: str, home: str) -> None:
        self.binary, self.api_url, self.home = binary, api_url, home

    def run(self, era: str, *method_args: str) -> tuple[int, str, str, int]:
        cmd = [str(self.binary), "--cli", sys.executable, "-m", "github_issues_mcp",
               "-e", f"GITHUB_TOKEN={DEMO_TOKEN}", "-e", f"GITHUB_API_URL={self.api_url}",
               "--cwd", str(ROOT), "--protocol-era", era, "--format", "json", *method_args]
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=90,
                                  env=node_env(self.home), cwd=ROOT)
            rc, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            rc, out, err = -1, str(exc.stdout or ""), f"timed out after 90 s: {exc.stderr or ''}"
        return rc, out, err, round((time.perf_counter() - start) * 1000)


def parse(stdout: str) -> Any:
    try:
        return json.loads(stdout)
    except ValueError:
        return None


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith('{"ts"')]
    return lines[-1][:160] if lines else ""


def fill(value: Any, era: str) -> Any:
    if isinstance(value, str):
        return value.replace("{era}", era)
    if isinstance(value, list):
        return [fill(v, era) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, era) for k, v in value.items()}
    return value


def check_tools_list(ins: Inspector, era: str, expected_names: Sequence[str]) -> tuple[Row, list[str]]:
    row = Row(era, "tools/list --strict", "*", "exit 0, every tool")
    row.rc, out, err, row.ms = ins.run(era, "--method", "tools/list", "--strict")
    data = parse(out) or {}
    tools = data.get("tools", data.get("result", {}).get("tools", [])) if isinstance(data, dict) else []
    names = [t.get("name") for t in tools]
    summary = next((ln for ln in err.splitlines() if "across" in ln and "tools" in ln), "")
    row.outcome = f"{len(names)} tools; {summary.strip() or last_line(err)}"
    row.ok = row.rc == 0 and sorted(names) == sorted(expected_names)
    if not row.ok:
        row.detail = f"listed {names}, expected {list(expected_names)}\n{err[-2000:]}"
    return row, names


def check_templates(ins: Inspector, era: str, expected: int) -> Row:
    row = Row(era, "resources/templates/list", "*", f"exit 0, {expected} templates")
    row.rc, out, err, row.ms = ins.run(era, "--method", "resources/templates/list")
    data = parse(out) or {}
    result = data.get("result", data) if isinstance(data, dict) else {}
    templates = result.get("resourceTemplates", []) if isinstance(result, dict) else []
    row.outcome = f"{len(templates)} templates " + " ".join(t.get("name", "?") for t in templates)
    if row.rc == 0:
        row.ok = len(templates) == expected
    elif expected == 0 and ("-32601" in out + err or "method not found" in (out + err).lower()):
        row.ok, row.outcome = True, "method not found (tolerated: the server has no templates yet)"
    if not row.ok:
        row.detail = (out + err)[-2000:]
    return row


def check_call(ins: Inspector, era: str, tool: str, args: Mapping[str, Any],
               expect_code: str | None) -> Row:
    case = "call ok" if expect_code is None else "call fails"
    row = Row(era, case, tool, "exit 0" if expect_code is None else f"exit 5, {expect_code}")
    row.rc, out, err, row.ms = ins.run(era, "--method", "tools/call", "--tool-name", tool,
                                       "--tool-args-json", json.dumps(args))
    data = parse(out) or {}
    result = data.get("result", {}) if isinstance(data, dict) else {}
    structured = result.get("structuredContent") if isinstance(result, dict) else None
    is_error = bool(result.get("isError")) if isinstance(result, dict) else None
    code = structured.get("code") if isinstance(structured, dict) and is_error else None
    if expect_code is None:
        row.ok = row.rc == 0 and is_error is False and isinstance(structured, dict)
        row.outcome = "ok" if row.ok else (code or last_line(err) or EXIT_MEANING.get(row.rc or 0, "?"))
    else:
        row.ok = row.rc == 5 and is_error is True and code == expect_code
        row.outcome = code or last_line(err) or EXIT_MEANING.get(row.rc or 0, "?")
    if not row.ok:
        row.detail = f"args {json.dumps(args)}\nstdout {out[-1500:]}\nstderr {err[-1500:]}"
    return row


def run_era(ins: Inspector, era: str, names: Sequence[str], templates: int, jobs: int,
            api_url: str) -> list[Row]:
    _http("POST", f"{api_url}/_fake/reset")  # back to the demo checkpoint
    _http("POST", f"{api_url}/_fake/call/add_label", {"owner": OWNER, "repo": REPO,
                                                      "name": DOOMED_LABEL})
    listed, listed_names = check_tools_list(ins, era, names)
    jobs_list: list[tuple[str, dict[str, Any], str | None]] = []
    rows = [listed]
    for tool in listed_names or names:
        if tool not in CASES:
            rows.append(Row(era, "call", tool, "a case in CASES", None,
                            "no compat case for this tool: add one to CASES", 0, False))
            continue
        good, bad, code = CASES[tool]
        jobs_list += [(tool, fill(good, era), None), (tool, fill(bad, era), code)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        templ = pool.submit(check_templates, ins, era, templates)
        calls = [pool.submit(check_call, ins, era, t, a, c) for t, a, c in jobs_list]
        rows.append(templ.result())
        rows += [f.result() for f in calls]
    violations = _http("GET", f"{api_url}/_fake/violations") or []
    rows.append(Row(era, "fake: spec violations", "*", "none", None, f"{len(violations)} violations",
                    0, not violations, json.dumps(violations)[:2000]))
    return rows


def table(rows: Sequence[Row]) -> str:
    header = ("era", "check", "tool", "expected", "rc", "outcome", "ms", "")
    body = [(r.era, r.check, r.tool, r.expected, "" if r.rc is None else str(r.rc),
             r.outcome[:70], str(r.ms) if r.ms else "", "ok" if r.ok else "MISMATCH") for r in rows]
    widths = [max(len(str(x[i])) for x in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eras", default="legacy,modern")
    parser.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--prefix", type=Path, default=ROOT / ".compat")
    parser.add_argument("--report", type=Path, default=ROOT / ".compat" / "inspector-report.json")
    parser.add_argument("--install-only", action="store_true",
                        help="install the pinned Inspector into --prefix and exit (stdlib only)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    binary = ensure_inspector(args.prefix)
    if args.install_only:
        print(f"{INSPECTOR}@{INSPECTOR_VERSION}: {binary}")
        return 0
    names, templates = server_surface()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="inspector-home-") as home, demo_fake() as api_url:
        ins = Inspector(binary, api_url, home)
        for era in args.eras.split(","):
            rows += run_era(ins, era.strip(), names, templates, args.jobs, api_url)
    elapsed = time.perf_counter() - started
    print(table(rows))
    bad = [r for r in rows if not r.ok]
    for r in bad:
        print(f"\n--- MISMATCH {r.era} {r.check} {r.tool}: expected {r.expected}, got rc={r.rc} "
              f"({r.outcome})\n{r.detail}")
    calls = [r for r in rows if r.ms]
    print(f"\nInspector {INSPECTOR_VERSION}, {len(calls)} runs, {len(rows) - len(bad)}/{len(rows)} "
          f"checks ok, {elapsed:.1f} s wall (median run {sorted(r.ms for r in calls)[len(calls) // 2]} ms, "
          f"{args.jobs} at a time)")
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps({"inspector": INSPECTOR_VERSION, "seconds": round(elapsed, 1),
                                       "rows": [asdict(r) for r in rows]}, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
