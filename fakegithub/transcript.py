"""`make demo`: the generated server, spawned over stdio, against the demo fake GitHub.

Uses the official MCP client, needs no token and no network, and prints a short transcript.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from fakegithub.demo import DEMO_TOKEN, OWNER, REPO, demo_fake

WIDTH = 150


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def _show(name: str, args: dict[str, Any], data: dict[str, Any], is_error: bool) -> None:
    print(f"\n→ {name} {_short(args)}")
    if is_error:
        print(f"← error {data['code']}: {data['message']}")
        if "repair" in data:
            print(f"  repair: {data['repair']['tool']} {_short(data['repair']['arguments'])}")
            if "alternative" in data["repair"]:
                print(f"  or: {data['repair']['alternative']}")
        return
    if "issues" in data:
        for issue in data["issues"][:5]:
            print(f"← #{issue['issue_number']} [{issue['state']}] {issue['title']}  "
                  f"labels={issue.get('labels', [])}")
        more = " (more: next_cursor)" if data["has_more"] else ""
        print(f"  {len(data['issues'])} issue(s){more}")
        return
    shown = {k: v for k, v in data.items() if k not in ("request_id", "comments", "issue")}
    if "issue" in data:  # a read, or a write answering with the issue as GitHub shows it
        issue = data["issue"]
        shown.update({k: issue[k] for k in ("issue_number", "title", "state", "labels", "milestone") if k in issue})
    if "comments" in data:
        shown["comments"] = len(data["comments"])
    print(f"← {_short(shown)}")


async def run(url: str) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "github_issues_mcp"],
        env={"PATH": os.environ.get("PATH", ""), "GITHUB_TOKEN": DEMO_TOKEN, "GITHUB_API_URL": url,
             "GHMCP_LOG_LEVEL": "warning"},
    )
    repo = {"owner": OWNER, "repo": REPO}
    async with Client(params, cache=None) as client:
        tools = await client.list_tools()
        print(f"connected: {client.server_info.name if client.server_info else '?'} "
              f"(protocol {client.protocol_version}); tools: {', '.join(t.name for t in tools.tools)}")
        steps: list[tuple[str, dict[str, Any]]] = [
            ("github_search_issues", {**repo, "labels": ["bug"]}),
            ("github_search_issues", {"query": "dark mode", **repo}),
            ("github_create_issue", {**repo, "title": "Sync fails behind a proxy",
                                     "body": "`roadmap sync` ignores HTTPS_PROXY.",
                                     "labels": ["bug", "triage"], "milestone": "v1.1",
                                     "idempotency_key": "demo-proxy-0001"}),
        ]
        created: dict[str, Any] = {}
        for name, args in steps:
            result = await client.call_tool(name, args)
            _show(name, args, result.structured_content or {}, bool(result.is_error))
            if name == "github_create_issue":
                created = result.structured_content or {}
        number = created.get("issue", {}).get("issue_number", 1)
        issue = {**repo, "issue_number": number}
        read = await client.call_tool("github_get_issue", issue)
        _show("github_get_issue", issue, read.structured_content or {}, bool(read.is_error))
        version = (read.structured_content or {}).get("version", "")
        for name, args in [
            ("github_update_issue", {**issue, "remove_labels": ["triage"], "assignee_logins": ["octocat"],
                                     "expected_version": version}),
            ("github_update_issue", {**issue, "title": "Stale write", "expected_version": version}),
            ("github_add_comment", {**issue, "body": "Reproduced; fix in progress.",
                                    "idempotency_key": "demo-comment-0001"}),
            ("github_update_issue", {**issue, "add_labels": ["no-such-label"]}),
        ]:
            result = await client.call_tool(name, args)
            _show(name, args, result.structured_content or {}, bool(result.is_error))


def main() -> None:
    fake = demo_fake()
    with fake.serve() as url:
        anyio.run(run, url)
    if fake.violations:
        print("\nfake GitHub recorded contract violations:", *fake.violations, sep="\n  ")
        sys.exit(1)
    print(f"\n{len(fake.requests)} GitHub requests, every one validated against the pinned spec.")


if __name__ == "__main__":
    main()
