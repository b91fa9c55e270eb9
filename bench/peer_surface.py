"""What a model reads of our pull-request, repository and context tools against github-mcp-server's
comparable tools, and of github-mcp's default surface against github-mcp-server's default
toolsets (issue 33): name, description and inputSchema of each tool, compact JSON (outputSchemas
and annotations stay with the client). github-mcp-server's tools are its own snapshots at
64a49f34 (bench/peers/github-mcp-server/64a49f34/README.md). Deterministic: no timing.

    .venv/bin/python bench/peer_surface.py          # the tables docs/BENCHMARKS.md quotes
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from bench.common import BENCH  # noqa: E402
from generator.build.wire import compact_bytes, model_visible  # noqa: E402

PEER_DIR = BENCH / "peers" / "github-mcp-server" / "64a49f34"
PEER_COMMIT = "64a49f34"
# github-mcp-server's default toolsets (context, repos, issues, pull_requests, users) without
# feature flags, read from pkg/github at 64a49f34
PEER_DEFAULT = (
    "get_me", "get_team_members", "get_teams",
    "add_issue_comment", "get_label", "issue_read", "issue_write", "list_issue_fields", "list_issue_types",
    "list_issues", "search_issues", "sub_issue_write",
    "add_comment_to_pending_review", "add_reply_to_pull_request_comment", "create_pull_request",
    "list_pull_requests", "merge_pull_request", "pull_request_read", "pull_request_review_write",
    "search_pull_requests", "update_pull_request", "update_pull_request_branch",
    "create_branch", "create_or_update_file", "create_repository", "delete_file", "delete_repository",
    "fork_repository", "get_commit", "get_file_contents", "get_latest_release", "get_release_by_tag", "get_tag",
    "list_branches", "list_commits", "list_releases", "list_repository_collaborators", "list_tags", "push_files",
    "search_code", "search_commits", "search_repositories",
    "search_users",
)
# ours -> the github-mcp-server tool doing the same (a conversation comment is its issue comment;
# reviewers: its granular reviewer tool, the smallest that requests them)
PEER_COMPARABLE = {
    "github_list_pull_requests": "list_pull_requests",
    "github_get_pull_request": "pull_request_read",
    "github_create_pull_request": "create_pull_request",
    "github_update_pull_request": "update_pull_request",
    "github_update_pull_request_reviewers": "request_pull_request_reviewers",
    "github_add_pull_request_review": "pull_request_review_write",
    "github_add_pull_request_comment": "add_issue_comment",
    "github_merge_pull_request": "merge_pull_request",
    "github_update_pull_request_branch": "update_pull_request_branch",
    "github_get_file_contents": "get_file_contents",
    "github_list_branches": "list_branches",
    "github_list_commits": "list_commits",
    "github_get_commit": "get_commit",
    "github_create_branch": "create_branch",
    "github_create_or_update_file": "create_or_update_file",
    "github_search_code": "search_code",
    "github_get_me": "get_me",
}


def peer_tool(name: str) -> dict[str, Any]:
    tool: dict[str, Any] = json.loads((PEER_DIR / f"{name}.snap").read_text(encoding="utf-8"))
    return tool


def read_bytes(tools: list[dict[str, Any]]) -> int:
    """What a model reads of these tools (name, description, inputSchema), compact JSON."""
    return compact_bytes(model_visible(tools))


def ours_default() -> list[dict[str, Any]]:
    """github-mcp's tools/list without flags (its default toolsets), as the runtime serves it."""
    from ghmcp_runtime.guards.exposure import ExposureFlags, ExposurePolicy
    from ghmcp_runtime.serving.surface import SurfaceViews
    from github_mcp import SERVER

    views = SurfaceViews(SERVER)
    policy = ExposurePolicy(SERVER.tools, SERVER.toolsets, ExposureFlags(), SERVER.default_toolsets)
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in views.view(policy.base).tools]


def ours_all() -> dict[str, dict[str, Any]]:
    from bench.surfaces import served_tools
    from github_mcp import SERVER

    return {t["name"]: t for t in served_tools(SERVER)}


def comparison() -> dict[str, Any]:
    mine = ours_all()
    per_tool = {ours: {"peer": theirs, "ours": read_bytes([mine[ours]]), "theirs": read_bytes([peer_tool(theirs)])}
                for ours, theirs in PEER_COMPARABLE.items()}
    default = ours_default()
    return {
        "peer_commit": PEER_COMMIT,
        "per_tool": per_tool,
        "default": {"ours_tools": len(default), "ours": read_bytes(default),
                    "theirs_tools": len(PEER_DEFAULT), "theirs": read_bytes([peer_tool(n) for n in PEER_DEFAULT])},
    }


def main() -> None:
    report = comparison()
    print(f"| our tool | bytes | github-mcp-server ({report['peer_commit']}) | bytes | ratio |")
    print("|---|---:|---|---:|---:|")
    for ours, row in report["per_tool"].items():
        print(f"| `{ours}` | {row['ours']:,} | `{row['peer']}` | {row['theirs']:,} | {row['ours'] / row['theirs']:.2f}x |")
    d = report["default"]
    print()
    print(f"default surface: github-mcp {d['ours_tools']} tools, {d['ours']:,} B; github-mcp-server "
          f"{d['theirs_tools']} tools, {d['theirs']:,} B ({d['ours'] / d['theirs']:.2f}x)")


if __name__ == "__main__":
    main()
