"""Requests and sequential round trips of each forgejo-issues-mcp tool against a slow Forgejo.

    .venv/bin/python bench/forgejo_round_trips.py [--latency 0.05]     # prints a Markdown table
    make bench ONLY=forgejo_round_trips   # into bench/results.json and docs/BENCHMARKS.md section 8

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
import json
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from mcp import Client  # noqa: E402

from bench.peer_surface import read_bytes  # noqa: E402
from fakeforgejo.demo import DEMO_TOKEN, ORG, REPO, demo_fake  # noqa: E402
from fakegithub.core import critical_path  # noqa: E402
from forgejo_issues_mcp import SERVER  # noqa: E402
from ghmcp_runtime.calls.upstream import ForgeUpstream, RetryPolicy  # noqa: E402
from ghmcp_runtime.core.forges import FORGEJO  # noqa: E402
from ghmcp_runtime.serving.app import Settings, build_server  # noqa: E402

API = "https://forgejo.test/api/v1"
GITHUB_ISSUES = Path(__file__).resolve().parents[1] / "generated" / "github_issues_mcp"
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


async def measure(latency: float) -> dict[str, Any]:
    """Each task's requests in arrival order and its sequential round trips, and the listed tools' bytes."""
    fake = demo_fake()
    fake.latency = latency
    upstream = ForgeUpstream(forge=FORGEJO, base_url=API, transport=fake.asgi_transport(), timeout=10.0,
                             retry=RetryPolicy(base_delay_s=0.01, max_delay_s=0.05, max_total_wait_s=0.5))
    server = build_server(SERVER, Settings(token=DEMO_TOKEN, api_url=API), upstream=upstream)
    tasks = []
    async with Client(server, cache=None) as client:
        listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in (await client.list_tools()).tools]
        for what, tool, args in TASKS:
            fake.reset()
            fake.timeline.clear()
            result = await client.call_tool(tool, args)
            assert not result.is_error, result.structured_content
            spans = [(t.started, t.ended) for t in fake.timeline]
            ops = [f"{t.operation_id} {t.status}" for t in sorted(fake.timeline, key=lambda t: t.started)]
            tasks.append({"what": what, "tool": tool, "operations": ops, "sequential": critical_path(spans)})
    fake.assert_no_violations()
    return {"latency_s": latency, "tasks": tasks, "model_visible": model_visible(listed)}


def model_visible(listed: list[dict[str, Any]]) -> dict[str, Any]:
    """Bytes a model reads of forgejo-issues-mcp's listed tools and of github-issues-mcp's same verbs."""
    github = json.loads((GITHUB_ISSUES / "tools.json").read_text(encoding="utf-8"))["tools"]
    counterparts = {t["name"].replace("forgejo_", "github_", 1) for t in listed}
    same = [t for t in github if t["name"] in counterparts]
    assert len(same) == len(listed), sorted(counterparts - {t["name"] for t in same})
    return {"tools": len(listed), "ours": read_bytes(listed), "github_issues_mcp": read_bytes(same)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    measured = asyncio.run(measure(args.latency))
    print("| task | tool | requests | sequential |")
    print("|---|---|---:|---:|")
    for task in measured["tasks"]:
        print(f"| {task['what']} | `{task['tool']}` | {len(task['operations'])} | {task['sequential']} |")
    print()
    for task in measured["tasks"]:
        print(f"* {task['what']} (`{task['tool']}`): " + ", ".join(f"`{op}`" for op in task["operations"]))
    print(json.dumps(measured["model_visible"]))


if __name__ == "__main__":
    main()
