"""The fault matrix: every upstream condition x every tool, observed through the official client.

For each cell a fresh fake GitHub is seeded, the condition is injected on the tool's primary
endpoint for every request (a persistent fault), and the tool is called once in memory. Recorded:
the code returned, `temporary`, `retry_after_ms`, how many requests reached the faulted endpoint
(retries), and how many writes were applied there. The observations are rendered into
docs/FAULTS.md; `test_committed_fault_table_is_current` fails when the committed file differs
(regenerate with `FAULTS_WRITE=1 .venv/bin/python -m pytest tests/reliability/test_fault_matrix.py`).

Asserted for every cell: a schema-valid result or error envelope (never a JSON-RPC error), no
token in the output, no contract violation in the fake, a write endpoint is never sent a request
twice and no write is ever applied twice.

A second matrix covers keyed writes whose attempt lasts longer than the idempotency lease (scaled
down to LEASE_S): calls with the same key start at set times while the first attempt is slow,
and exactly one write may be applied, every successful answer being the same.

A third matrix faults a multi-step write (github_update_issue: update, add a label, remove two,
lock) at every step, and asserts that what the answer says was written (`changed_fields`, or
`details.applied_fields` on failure) is exactly what GitHub then shows.

A fourth part runs the write-truth scenarios of issue 20 (tests/reliability/write_truth.py):
refusals beside other writes, lost answers meeting other writers, skewed clocks, restarts.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from fakegithub import FakeGitHub
from fakegithub.faults import Match
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from tests.reliability.reliability_support import (
    FIXED_NOW,
    OWNER,
    REPO,
    TOKEN,
    TOOLS,
    Recorder,
    closed_port,
    server_for,
    small_seed,
)
from tests.reliability.write_truth import EXPECTED, SCENARIOS, ScenarioCell, render_scenarios

ROOT = Path(__file__).resolve().parents[2]
FAULTS_MD = ROOT / "docs" / "FAULTS.md"
TIMEOUT_S = 0.5
WRITE_METHODS = {"POST", "PATCH", "PUT", "DELETE"}


@dataclass(frozen=True)
class ToolCase:
    tool: str
    op: str  # the primary endpoint, where the fault is injected
    args: Callable[[dict[str, Any]], dict[str, Any]]


REPO_ARGS = {"owner": OWNER, "repo": REPO}
CASES = [
    ToolCase("github_get_issue", "issues/get", lambda s: {**REPO_ARGS, "issue_number": s["first"]}),
    ToolCase("github_search_issues", "search/issues-and-pull-requests",
             lambda s: {**REPO_ARGS, "query": "crash"}),
    ToolCase("github_list_labels", "issues/list-labels-for-repo", lambda s: dict(REPO_ARGS)),
    ToolCase("github_create_issue", "issues/create", lambda s: {**REPO_ARGS, "title": "Matrix issue"}),
    ToolCase("github_update_issue", "issues/update",
             lambda s: {**REPO_ARGS, "issue_number": s["first"], "title": "Renamed by the matrix"}),
    ToolCase("github_add_comment", "issues/create-comment",
             lambda s: {**REPO_ARGS, "issue_number": s["first"], "body": "Matrix comment"}),
    ToolCase("github_create_label", "issues/create-label",
             lambda s: {**REPO_ARGS, "name": "matrix-label", "color": "00ff00"}),
    ToolCase("github_update_label", "issues/update-label",
             lambda s: {**REPO_ARGS, "name": "triage", "description": "Updated by the matrix"}),
    ToolCase("github_delete_label", "issues/delete-label", lambda s: {**REPO_ARGS, "name": "wontfix"}),
    ToolCase("github_update_issues", "issues/update",
             lambda s: {**REPO_ARGS, "issue_numbers": [s["first"]], "state": "closed"}),
]


@dataclass(frozen=True)
class Condition:
    key: str
    label: str
    inject: Callable[[FakeGitHub, str], None]
    applies: bool = False  # the faulted request is still performed (the write happens)
    refused: bool = False  # no server at all: every request fails to connect
    off_spec: bool = False  # the injected answer breaks the spec on purpose (the fake records it)


def _status(status: int, body: Any = None, headers: dict[str, str] | None = None
            ) -> Callable[[FakeGitHub, str], None]:
    def inject(fake: FakeGitHub, op: str) -> None:
        fake.faults.add(op, "status", status=status, body=body, headers=headers, times=None)
    return inject


def _kind(kind: str, **kw: Any) -> Callable[[FakeGitHub, str], None]:
    def inject(fake: FakeGitHub, op: str) -> None:
        fake.faults.add(op, kind, times=None, **kw)  # type: ignore[arg-type]
    return inject


def _both_404(fake: FakeGitHub, op: str) -> None:
    fake.faults.add(op, "status", status=404, times=None)
    fake.faults.add("repos/get", "status", status=404, times=None)


RESET_AT = str(int(FIXED_NOW) + 60)
DOCS = {"documentation_url": "https://docs.github.com/rest"}
CONDITIONS = [
    Condition("401", "401 Bad credentials", _status(401, {"message": "Bad credentials", "status": "401", **DOCS})),
    Condition("403-scope", "403 missing scope (X-Accepted-OAuth-Scopes: repo, token has read:org)",
              _status(403, {"message": "Resource not accessible by personal access token", "status": "403",
                       **DOCS},
                      {"x-accepted-oauth-scopes": "repo", "x-oauth-scopes": "read:org"})),
    Condition("403-primary", "403 primary rate limit (remaining 0, reset in 60 s)",
              _status(403, {"message": "API rate limit exceeded for user ID 1.", "status": "403", **DOCS},
                      {"x-ratelimit-remaining": "0", "x-ratelimit-reset": RESET_AT})),
    Condition("429-primary", "429 primary rate limit (remaining 0, reset in 60 s)",
              _status(429, None, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": RESET_AT})),
    Condition("403-secondary", "403 secondary rate limit (Retry-After: 30)",
              lambda fake, op: fake.faults.secondary_rate_limit(op, retry_after=30, times=None)),
    Condition("404", "404 on the endpoint, repository exists", _status(404)),
    Condition("404-repo", "404 on the endpoint and on the repository", _both_404),
    Condition("409", "409 Conflict", _status(409)),
    Condition("410", "410 Gone", _status(410)),
    Condition("422", "422 Validation Failed (field title, code invalid)",
              _status(422, {"message": "Validation Failed", "status": "422", **DOCS, "errors": [
                  {"resource": "Issue", "field": "title", "code": "invalid"}]})),
    Condition("500", "500 (HTML error page)", _kind("html", status=500)),
    Condition("502", "502 Bad Gateway", _status(502)),
    Condition("503", "503 Service Unavailable", _status(503)),
    Condition("timeout", f"timeout (no answer within the {TIMEOUT_S} s read timeout)",
              _kind("timeout", delay=5.0)),
    Condition("refused", "connection refused (nothing listening)", lambda fake, op: None, refused=True),
    Condition("reset", "connection reset mid-body (request performed)", _kind("reset", partial=True),
              applies=True),
    Condition("malformed", "200 with malformed (truncated) JSON", _kind("malformed_json")),
    Condition("not-resource", "200 whose body is not what the endpoint returns ({\"message\": \"ok\"}, a proxy)",
              _status(200, {"message": "ok"}), off_spec=True),
    Condition("slow-body", "slow body (4 chunks 50 ms apart, within the timeout)",
              _kind("slow_body", delay=0.05, chunks=4), applies=True),
    Condition("stalled-body", f"stalled body (chunks {TIMEOUT_S * 2} s apart, past the read timeout)",
              _kind("slow_body", delay=TIMEOUT_S * 2, chunks=2), applies=True),
]

OFF_SPEC = {c.key for c in CONDITIONS if c.off_spec}


@dataclass(frozen=True)
class Cell:
    condition: str
    tool: str
    endpoint: str
    code: str
    temporary: bool | None
    retry_after_ms: int | None
    attempts: int
    writes_applied: int
    other_writes: int


async def _run(case: ToolCase, cond: Condition) -> tuple[Cell, Any, FakeGitHub, Recorder]:
    fake = FakeGitHub()
    seeded = small_seed(fake)
    op = fake.contract.operations[case.op]
    cond.inject(fake, case.op)
    if cond.refused:
        recorder = Recorder(httpx.AsyncHTTPTransport())
        server = server_for(recorder, base_url=f"http://127.0.0.1:{closed_port()}", timeout=TIMEOUT_S)
    else:
        recorder = Recorder(fake.asgi_transport())
        server = server_for(recorder, timeout=TIMEOUT_S)
    async with Client(server, cache=None) as client:
        result = await client.call_tool(case.tool, case.args(seeded))

    def route(method: str, path: str) -> str | None:
        matched = fake.router.match(method, path)
        return matched.operation.operation_id if matched else None

    ops = [route(s.method, s.raw_path) for s in recorder.sent]
    attempts = ops.count(case.op)
    is_write = op.method in WRITE_METHODS
    writes_applied = (attempts if cond.applies else 0) if is_write else 0
    other_writes = sum(1 for s, o in zip(recorder.sent, ops, strict=True)
                       if s.method in WRITE_METHODS and o != case.op)
    data = result.structured_content or {}
    failed = data if result.is_error else next(  # a batch answers its item's envelope
        (item["error"] for item in data.get("items", []) if item["outcome"] == "error"), None)
    cell = Cell(
        condition=cond.key, tool=case.tool, endpoint=f"{op.method} {case.op}",
        code=("" if result.is_error else "item ") + failed.get("code", "ok") if failed else "ok",
        temporary=failed.get("temporary") if failed else None,
        retry_after_ms=failed.get("retry_after_ms") if failed else None,
        attempts=attempts, writes_applied=writes_applied, other_writes=other_writes,
    )
    return cell, result, fake, recorder


@pytest.fixture(scope="module")
def observed() -> list[tuple[Cell, Any, FakeGitHub, Recorder]]:
    return [anyio.run(_run, case, cond) for cond in CONDITIONS for case in CASES]


LEASE_S = 0.6  # production: 60 s; the runner renews it every third of that while an attempt runs


@dataclass(frozen=True)
class LeaseScenario:
    key: str
    label: str
    inject: Callable[[FakeGitHub, str], None]  # on the tool's write endpoint, once
    timeout_s: float  # the upstream read timeout
    starts: tuple[float, ...]  # when each call with the same key starts, in leases after the first


LEASE_SCENARIOS = [
    LeaseScenario("slow-commit", "GitHub commits after 2.5 leases; a duplicate arrives after 1.5",
                  lambda fake, op: fake.faults.add(op, "slow_commit", delay=2.5 * LEASE_S),
                  5.0, (0.0, 1.5)),
    LeaseScenario("lost-after-long", "applied, then no answer until the read timeout (2.5 leases); "
                  "a duplicate after 1.5 leases, a retry after 4",
                  lambda fake, op: fake.faults.add(op, "timeout", after_commit=True, delay=6 * LEASE_S),
                  2.5 * LEASE_S, (0.0, 1.5, 4.0)),
    LeaseScenario("trickle", "answer trickles in for 2.5 leases (each chunk within the read timeout); "
                  "a duplicate after 1.5",
                  lambda fake, op: fake.faults.add(op, "slow_body", delay=0.5 * LEASE_S, chunks=5),
                  5.0, (0.0, 1.5)),
]
KEYED = [c for c in CASES if c.tool in ("github_create_issue", "github_add_comment")]


@dataclass(frozen=True)
class LeaseCell:
    scenario: str
    tool: str
    answers: tuple[str, ...]  # code per call, in the order the calls started
    applied: int  # objects the fake holds with the call's content
    same_answer: bool  # every successful answer identical (request_id aside)


def _applied(fake: FakeGitHub, case: ToolCase, args: dict[str, Any]) -> int:
    if case.tool == "github_create_issue":
        return sum(1 for i in fake.issues(OWNER, REPO) if i.title == args["title"])
    return sum(1 for c in fake.comments(OWNER, REPO, args["issue_number"]) if c.body == args["body"])


async def _lease_run(case: ToolCase, scenario: LeaseScenario) -> tuple[LeaseCell, FakeGitHub]:
    fake = FakeGitHub()
    args = {**case.args(small_seed(fake)), "idempotency_key": f"lease-{scenario.key}-0001"}
    scenario.inject(fake, case.op)
    server = server_for(fake.asgi_transport(), timeout=scenario.timeout_s,
                        idempotency=IdempotencyRunner(MemoryStore(), lease_s=LEASE_S))
    results: dict[int, Any] = {}

    async def one(i: int, start: float) -> None:
        await anyio.sleep(start * LEASE_S)
        async with Client(server, cache=None) as client:
            results[i] = await client.call_tool(case.tool, args)

    async with anyio.create_task_group() as group:
        for i, start in enumerate(scenario.starts):
            group.start_soon(one, i, start)
    answers = [results[i] for i in range(len(scenario.starts))]
    codes = tuple((r.structured_content or {}).get("code", "?") if r.is_error else "ok" for r in answers)
    oks = [{k: v for k, v in r.structured_content.items() if k != "request_id"}
           for r in answers if not r.is_error]
    cell = LeaseCell(scenario.key, case.tool, codes, _applied(fake, case, args),
                     all(o == oks[0] for o in oks))
    return cell, fake


@pytest.fixture(scope="module")
def lease_observed() -> list[tuple[LeaseCell, FakeGitHub]]:
    async def all_cells() -> list[tuple[LeaseCell, FakeGitHub]]:
        cells: dict[int, tuple[LeaseCell, FakeGitHub]] = {}

        async def cell(i: int, case: ToolCase, scenario: LeaseScenario) -> None:
            cells[i] = await _lease_run(case, scenario)

        pairs = [(case, scenario) for scenario in LEASE_SCENARIOS for case in KEYED]
        async with anyio.create_task_group() as group:  # independent fakes: run side by side
            for i, (case, scenario) in enumerate(pairs):
                group.start_soon(cell, i, case, scenario)
        return [cells[i] for i in range(len(pairs))]

    return anyio.run(all_cells)


def test_an_attempt_longer_than_the_lease_is_never_repeated(
        lease_observed: list[tuple[LeaseCell, FakeGitHub]]) -> None:
    """Regression: the lease was not renewed, so a duplicate arriving after 60 s took the key
    over and posted a second time while GitHub was still committing the first."""
    for cell, fake in lease_observed:
        where = f"{cell.scenario} \u00d7 {cell.tool}"
        assert cell.applied == 1, f"{where}: applied {cell.applied} times ({cell.answers})"
        assert "ok" in cell.answers and cell.same_answer, f"{where}: {cell.answers}"
        assert fake.violations == [], (where, fake.violations[:3])


def test_every_cell_is_a_valid_answer_and_no_write_is_ever_duplicated(
        observed: list[tuple[Cell, Any, FakeGitHub, Recorder]]) -> None:
    for cell, result, fake, recorder in observed:
        where = f"{cell.condition} \u00d7 {cell.tool}"
        tool = TOOLS[cell.tool]
        data = result.structured_content
        assert isinstance(data, dict), where
        problems = [e.message for e in Draft202012Validator(tool.output_schema).iter_errors(data)]
        assert not problems, (where, problems[:2])
        assert result.is_error == ("code" in data), where
        assert TOKEN not in json.dumps(result.model_dump(mode="json")), where
        if cell.condition in OFF_SPEC:  # only the injected answers break the spec
            assert all(" response 200: " in v for v in fake.violations), (where, fake.violations[:3])
        else:
            assert fake.violations == [], (where, fake.violations[:3])
        if cell.endpoint.split()[0] in WRITE_METHODS:
            assert cell.attempts <= 1, f"{where}: the write endpoint was sent {cell.attempts} requests"
        assert cell.writes_applied <= 1, f"{where}: a write was applied {cell.writes_applied} times"
        sent_writes = [(s.method, s.raw_path) for s in recorder.sent if s.method in WRITE_METHODS]
        assert len(sent_writes) == len(set(sent_writes)), f"{where}: a write was repeated: {sent_writes}"
        if result.is_error:
            assert data["temporary"] or data["retry_after_ms"] is None, where
            assert not data["temporary"] or data["retry_after_ms"] is not None, where


def test_the_matrix_covers_every_tool() -> None:
    assert {c.tool for c in CASES} == set(TOOLS), "add the new tool to CASES (its primary endpoint)"


def test_reads_are_retried_only_when_the_failure_is_temporary(
        observed: list[tuple[Cell, Any, FakeGitHub, Recorder]]) -> None:
    for cell, _result, _fake, _rec in observed:
        if cell.endpoint.split()[0] in WRITE_METHODS:
            continue
        transient = cell.condition in ("500", "502", "503", "timeout", "refused", "reset", "malformed",
                                       "not-resource", "stalled-body")
        expected = 3 if transient else 1
        assert cell.attempts == expected, f"{cell.condition} \u00d7 {cell.tool}: {cell.attempts} attempts"


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def render(cells: list[Cell], lease_cells: list[LeaseCell]) -> str:
    by_cond = {c.key: c for c in CONDITIONS}
    lines = [
        "# Fault matrix",
        "",
        "<!-- Generated by tests/reliability/test_fault_matrix.py from what the run observed; do not edit.",
        "     Regenerate: FAULTS_WRITE=1 .venv/bin/python -m pytest tests/reliability/test_fault_matrix.py -->",
        "",
        "Every upstream condition \u00d7 every tool, observed through the official MCP client (in memory)",
        "against the fake GitHub. In each cell a freshly seeded fake answers **every** request to the",
        "tool's primary endpoint with the condition (a persistent fault); the tool's other requests",
        f"are served normally. Upstream read timeout {TIMEOUT_S} s; read retries: up to 3 attempts with",
        "millisecond backoff (production: 0.25\u20132 s), waits from `Retry-After` honoured only when they fit",
        "the retry budget; writes are never retried.",
        "",
        "Columns: **code** returned (`ok` = success; `item X` = a batch answered, its one item failed",
        "with X), **temp.** = `temporary`, **retry after** =",
        "`retry_after_ms`, **attempts** = requests that reached the faulted endpoint (more than 1 =",
        "retried), **applied** = writes the fake performed at that endpoint, **dup.** = a write",
        "applied twice (asserted never). The test also asserts, for every cell: a schema-valid result",
        "or error envelope (no JSON-RPC error), no token in the output, no request the spec rejects,",
        "and never the same write request sent twice. Attempts 0 means the tool failed at an",
        "earlier request (with nothing listening, its first read fails), so nothing reached the",
        "faulted endpoint.",
        "",
    ]
    # compact grid first
    tools = [c.tool for c in CASES]
    lines.append("## At a glance (code; ↻ = retried)")
    lines.append("")
    lines.append("| condition | " + " | ".join(f"`{t.removeprefix('github_')}`" for t in tools) + " |")
    lines.append("|---|" + "---|" * len(tools))
    index = {(c.condition, c.tool): c for c in cells}
    for cond in CONDITIONS:
        row = []
        for t in tools:
            c = index[(cond.key, t)]
            row.append(f"{c.code}{' ↻' if c.attempts > 1 else ''}")
        lines.append(f"| {cond.label} | " + " | ".join(row) + " |")
    lines.append("")
    lines.append("## Cells")
    lines.append("")
    for cond in CONDITIONS:
        lines.append(f"### {by_cond[cond.key].label}")
        lines.append("")
        lines.append("| tool | faulted endpoint | code | temp. | retry after | attempts | retried | applied | dup. |")
        lines.append("|---|---|---|---|---:|---:|---|---:|---|")
        for t in tools:
            c = index[(cond.key, t)]
            retry_after = "—" if c.retry_after_ms is None else f"{c.retry_after_ms:,} ms"
            lines.append(
                f"| `{c.tool}` | `{c.endpoint}` | `{c.code}` | {_yes(c.temporary)} | {retry_after} | "
                f"{c.attempts} | {'yes' if c.attempts > 1 else 'no'} | "
                f"{c.writes_applied if c.endpoint.split()[0] in WRITE_METHODS else '—'} | "
                f"{'YES' if c.writes_applied > 1 else 'no'} |")
        lines.append("")
    lines += [
        "## Keyed writes: attempts longer than the idempotency lease",
        "",
        "`github_create_issue` and `github_add_comment` with an `idempotency_key`, the lease scaled down to",
        f"{LEASE_S} s (production: 60 s) and renewed every third of it while an attempt runs. Calls with",
        "the same key start at the times given, in leases after the first call. **answers** = the code",
        "of each call in that order, **applied** = objects GitHub holds with that content (asserted 1),",
        "**same answer** = every successful answer is identical.",
        "",
        "| scenario | tool | answers | applied | same answer |",
        "|---|---|---|---:|---|",
    ]
    by_scenario = {sc.key: sc.label for sc in LEASE_SCENARIOS}
    for lc in lease_cells:
        lines.append(f"| {by_scenario[lc.scenario]} | `{lc.tool}` | {', '.join(f'`{a}`' for a in lc.answers)} | "
                     f"{lc.applied} | {'yes' if lc.same_answer else 'NO'} |")
    return "\n".join(lines).rstrip() + "\n"


@pytest.fixture(scope="module")
def scenarios() -> list[ScenarioCell]:
    async def run_all() -> list[ScenarioCell]:
        return [await scenario.run() for scenario in SCENARIOS]

    return anyio.run(run_all)


def test_write_truth_scenarios_answer_what_github_holds(scenarios: list[ScenarioCell]) -> None:
    for cell in scenarios:
        assert (cell.answers, cell.holds) == EXPECTED[cell.key], cell


def test_committed_fault_table_is_current(observed: list[tuple[Cell, Any, FakeGitHub, Recorder]],
                                         lease_observed: list[tuple[LeaseCell, FakeGitHub]],
                                         stepped: list[StepCell], scenarios: list[ScenarioCell]) -> None:
    text = render([cell for cell, *_ in observed], [cell for cell, _ in lease_observed]) + "\n" \
        + render_steps(stepped) + "\n" + render_scenarios(scenarios)
    if os.environ.get("FAULTS_WRITE") == "1":
        FAULTS_MD.write_text(text, encoding="utf-8")
    committed = FAULTS_MD.read_text(encoding="utf-8") if FAULTS_MD.exists() else ""
    if committed != text:
        diff = "".join(difflib.unified_diff(committed.splitlines(True), text.splitlines(True),
                                            "docs/FAULTS.md (committed)", "docs/FAULTS.md (this run)"))
        pytest.fail("docs/FAULTS.md differs from what this run observed; if the change is intended, "
                    "regenerate it with FAULTS_WRITE=1 .venv/bin/python -m pytest "
                    f"tests/reliability/test_fault_matrix.py\n{diff[:6000]}")


# -- multi-step writes: a fault at every step ------------------------------------------------------

UPDATE_FIELDS = ("title", "labels", "locked", "lock_reason")  # the issue's fields, as reported
STEPS = [  # the requests of one github_update_issue call (waves: the first four, then the add)
    ("PATCH issues/update", Match(operation="issues/update")),
    ("POST issues/add-labels", Match(operation="issues/add-labels")),
    ("DELETE issues/remove-label (bug)", Match(operation="issues/remove-label", path="/labels/bug$")),
    ("DELETE issues/remove-label (triage)", Match(operation="issues/remove-label", path="/labels/triage$")),
    ("PUT issues/lock", Match(operation="issues/lock")),
]
STEP_FAULTS = {  # key: (label, fault kwargs, every later read fails too)
    "502": ("502, nothing written", {"status": 502}, False),
    "lost": ("502 after the write (answer lost)", {"status": 502, "after_commit": True}, False),
    "403": ("403 refused", {"status": 403, "body": {"message": "Must have push access to this repository.",
                                                   "documentation_url": "https://docs.github.com/rest"}},
            False),
    "lost-down": ("answer lost, then every read fails", {"status": 502, "after_commit": True}, True),
}


@dataclass(frozen=True)
class StepCell:
    step: str
    fault: str
    code: str
    reported: tuple[str, ...]  # changed_fields, or details.applied_fields on failure
    shown: tuple[str, ...]  # issue fields whose value GitHub shows changed
    writes: int  # write requests sent
    distinct_writes: int
    message: str


class _ArmReads(httpx.AsyncBaseTransport):
    """After the faulted write fired, every GET of the issue fails (the re-read cannot settle it)."""

    def __init__(self, fake: FakeGitHub, fault: Any) -> None:
        self.inner, self.fake, self.fault, self.armed = fake.asgi_transport(), fake, fault, False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if self.fault.fired and not self.armed:
            self.armed = True
            self.fake.faults.add(Match(operation="issues/get"), "status", status=502, times=None)
        return response


def _shown(fake: FakeGitHub, number: int) -> dict[str, Any]:
    item = fake.get_issue(OWNER, REPO, number)
    labels = set(fake.label_names(OWNER, REPO, number))
    return {"title": item.title, "labels": labels & {"enhancement", "bug", "triage"},
            "locked": item.locked, "lock_reason": item.lock_reason}


async def _run_step(step: str, match: Match, fault_key: str) -> StepCell:
    fake = FakeGitHub()
    seeded = small_seed(fake)
    number = seeded["first"]  # labels bug and triage, not locked
    before = _shown(fake, number)
    _, kwargs, reads_fail = STEP_FAULTS[fault_key]
    fault = fake.faults.add(match, "status", times=None, **kwargs)
    recorder = Recorder(_ArmReads(fake, fault) if reads_fail else fake.asgi_transport())
    async with Client(server_for(recorder, timeout=TIMEOUT_S), cache=None) as client:
        result = await client.call_tool("github_update_issue", {
            **REPO_ARGS, "issue_number": number, "title": "Renamed by the matrix",
            "add_labels": ["enhancement"], "remove_labels": ["bug", "triage"], "locked": True,
            "lock_reason": "resolved"})
    data = result.structured_content or {}
    Draft202012Validator(TOOLS["github_update_issue"].output_schema).validate(data)
    assert fake.violations == [], fake.violations[:3]
    after = _shown(fake, number)
    writes = [(s.method, s.raw_path) for s in recorder.sent if s.method in WRITE_METHODS]
    reported = data.get("details", {}).get("applied_fields", []) if result.is_error \
        else data["changed_fields"]
    return StepCell(step, fault_key, data.get("code", "ok") if result.is_error else "ok",
                    tuple(reported), tuple(f for f in UPDATE_FIELDS if before[f] != after[f]),
                    len(writes), len(set(writes)), data.get("message", ""))


@pytest.fixture(scope="module")
def stepped() -> list[StepCell]:
    return [anyio.run(_run_step, step, match, key) for step, match in STEPS for key in STEP_FAULTS]


def test_a_fault_at_any_step_reports_exactly_what_github_shows(stepped: list[StepCell]) -> None:
    for cell in stepped:
        where = f"{cell.fault} at {cell.step}"
        assert cell.writes == cell.distinct_writes, f"{where}: a write was sent twice"
        if STEP_FAULTS[cell.fault][2]:
            # the lost answer cannot be settled: what is reported is certain, the rest is named
            unknown = set(cell.shown) - set(cell.reported)
            assert set(cell.reported) <= set(cell.shown), where
            assert all(f in cell.message for f in unknown) and "unknown" in cell.message, where
            continue
        assert cell.reported == cell.shown, (where, cell)
        assert (cell.code == "ok") == (cell.fault == "lost"), where  # a settled lost answer goes on


def render_steps(cells: list[StepCell]) -> str:
    lines = [
        "## Multi-step writes: a fault at every step",
        "",
        "One `github_update_issue` call (new title, add `enhancement`, remove `bug` and `triage`, lock",
        "as resolved) sends five writes in two waves: the PATCH, both removals and the lock together,",
        "then the add (its answer is the final label list). Each row faults one of them (every request",
        "to it); the other writes of its wave still run, a later wave does not;",
        "**reported** is `changed_fields` on success or `details.applied_fields` on failure, **GitHub",
        "shows** the parameters whose value GitHub then shows changed. A lost answer is settled by",
        "re-reading the issue: when it shows the values sent, the call goes on. Asserted: reported = shown,",
        "except when the re-read fails too (then the message names the fields whose change is unknown),",
        "and no write request is ever sent twice.",
        "",
        "| faulted step | fault | answer | reported | GitHub shows | equal |",
        "|---|---|---|---|---|---|",
    ]
    for cell in cells:
        fields = ", ".join(cell.reported) or "—"
        shown = ", ".join(cell.shown) or "—"
        equal = "yes" if cell.reported == cell.shown else "no (the rest is named unknown)"
        lines.append(f"| `{cell.step}` | {STEP_FAULTS[cell.fault][0]} | `{cell.code}` | {fields} | "
                     f"{shown} | {equal} |")
    return "\n".join(lines) + "\n"
