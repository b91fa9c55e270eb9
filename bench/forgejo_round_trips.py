"""Requests and sequential round trips of each forgejo-issues-mcp tool against a slow Forgejo.

    .venv/bin/python bench/forgejo_round_trips.py [--latency 0.05]     # prints a Markdown table
    make bench ONLY=forgejo_round_trips                                # into docs/BENCHMARKS.md

The Forgejo fake (`fakeforgejo`, seeded with `demo_fake()`) answers every request after a fixed
delay and records when each request arrived and when its answer left (`fake.timeline`). The
sequential round trips of a call are the longest chain of its requests in which each started
after the previous one ended (`fakegithub.core.critical_path`): measured from those times, not
inferred from the declaration. The server runs in process on the fake's ASGI transport (the
official MCP client, 2026-07-28 era); the fake is reset to the demo state before every call.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from mcp import Client  # noqa: E402

from fakeforgejo.demo import DEMO_TOKEN, ORG, REPO, demo_fake  # noqa: E402
from fakegithub.core import critical_path  # noqa: E402
from forgejo_issues_mcp import SERVER  # noqa: E402
from ghmcp_runtime.calls.upstream import ForgeUpstream, RetryPolicy  # noqa: E402
from ghmcp_runtime.core.forges import FORGEJO  # noqa: E402
from ghmcp_runtime.serving.app import Settings, build_server  # noqa: E402

API = "https://forgejo.test/api/v1"
# github-issues-mcp's tools doing what the five Forgejo issue tools do
GITHUB_COUNTERPARTS = ("github_search_issues", "github_get_issue", "github_create_issue", "github_update_issue",
                       "github_add_comment")
WHERE = {"owner": ORG, "repo": REPO}
TASKS: list[tuple[str, str, dict[str, Any]]] = [
    ("search by a label and two milestones", "forgejo_search_issues",
     {**WHERE, "labels": ["bug"], "milestones": ["v1.0", "v1.1"]}),
    ("read issue 1 with its comments", "forgejo_get_issue", {**WHERE, "issue_number": 1}),
    ("open an issue: two labels, a milestone by title, an assignee", "forgejo_create_issue",
     {**WHERE, "title": "New", "labels": ["bug", "triage"], "milestone": "v1.1", "assignee_logins": ["bob"]}),
    ("close issue 4, add `wontfix`, remove `bug` and `triage`, milestone by title", "forgejo_update_issue",
     {**WHERE, "issue_number": 4, "state": "closed", "add_labels": ["wontfix"], "remove_labels": ["bug", "triage"],
      "milestone": "v1.0"}),
    ("clear issue 1's milestone", "forgejo_update_issue", {**WHERE, "issue_number": 1, "milestone": None}),
    ("comment on issue 1", "forgejo_add_comment", {**WHERE, "issue_number": 1, "body": "On it."}),
]


async def measure(latency: float) -> list[tuple[str, str, list[str], int]]:
    fake = demo_fake()
    fake.latency = latency
    upstream = ForgeUpstream(forge=FORGEJO, base_url=API, transport=fake.asgi_transport(), timeout=10.0,
                             retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.05, max_total_wait_s=0.5))
    server = build_server(SERVER, Settings(token=DEMO_TOKEN, api_url=API), upstream=upstream)
    out = []
    async with Client(server, cache=None) as client:
        for what, tool, args in TASKS:
            fake.reset()
            fake.timeline.clear()
            result = await client.call_tool(tool, args)
            assert not result.is_error, result.structured_content
            spans = [(t.started, t.ended) for t in fake.timeline]
            ops = [f"{t.operation_id} {t.status}" for t in sorted(fake.timeline, key=lambda t: t.started)]
            out.append((what, tool, ops, critical_path(spans)))
    fake.assert_no_violations()
    return out


def results(latency: float = 0.05) -> dict[str, Any]:
    """What bench/run.py keeps in results.json: each task's requests and round trips, and what a
    model reads of the server's tools."""
    from bench.surfaces import model_visible_bytes
    from github_issues_mcp import SERVER as GITHUB_ISSUES

    rows = asyncio.run(measure(latency))
    return {"latency_s": latency, "model_visible_bytes": model_visible_bytes(SERVER),
            "github_counterparts_bytes": model_visible_bytes(GITHUB_ISSUES, GITHUB_COUNTERPARTS),
            "tasks": [{"what": what, "tool": tool, "operations": ops, "sequential": sequential}
                      for what, tool, ops, sequential in rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    rows = asyncio.run(measure(args.latency))
    print("| task | tool | requests | sequential |")
    print("|---|---|---:|---:|")
    for what, tool, ops, sequential in rows:
        print(f"| {what} | `{tool}` | {len(ops)} | {sequential} |")
    print()
    for what, tool, ops, _ in rows:
        print(f"* {what} (`{tool}`): " + ", ".join(f"`{op}`" for op in ops))


if __name__ == "__main__":
    main()
