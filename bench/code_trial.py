"""The agent trial's pull-request and file tasks (issue 33): a careful scripted agent on github-mcp's
`pull_requests` and `repos` toolsets, and the fewest calls an agent that knows FastMCP's
one-tool-per-operation server over the same operations needs, each against the same seeded fake
(reset between them); tool calls, result bytes (what a model reads) and end-state checks read from
the fake.

* review: find the open pull request from a branch, read it with its changed files, reviews and
  checks, approve it, merge it (squash) guarded by the head it read; the base branch requires one
  approving review and the `ci` check.
* edit: read a file, commit a one-line change to it on a new branch (guarded by the file's sha),
  open a pull request from that branch.

    .venv/bin/python bench/code_trial.py            # ours and the peer, side by side (JSON)
    .venv/bin/python bench/code_trial.py --ours     # this tree only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from mcp import Client  # noqa: E402

from fakegithub.demo import DEMO_TOKEN, OWNER, REPO, demo_fake  # noqa: E402
from fakegithub.fake import FakeGitHub  # noqa: E402
from ghmcp_runtime.calls.upstream import ForgeUpstream  # noqa: E402
from ghmcp_runtime.guards.exposure import ExposureFlags  # noqa: E402
from ghmcp_runtime.serving.app import Settings, build_server  # noqa: E402
from github_mcp import SERVER  # noqa: E402

REPO_ARGS = {"owner": OWNER, "repo": REPO}
TOOLSETS = ("pull_requests", "repos")
EXPORT_PY = "def header(rows):\n    return rows[0]\n"
FIXED_PY = "def header(rows):\n    return list(rows[0].keys())\n"
DOC = "# Export\n\nDates are written in UTC.\nColumns follow the table order.\n"
PLAN: dict[str, Any] = {
    "review": {"head": "fix-csv-header", "body": "Checked the header fix."},
    "edit": {"path": "docs/export.md", "old": "Dates are written in UTC.",
             "new": "Dates are written in the user's time zone.", "branch": "docs-local-time",
             "message": "Document local-time exports", "title": "Document local-time exports"},
}
KINDS = {"review": "pull request", "edit": "file"}


def code_fake() -> FakeGitHub:
    """The demo repository with code on main, a pull request fixing it (green `ci`), and main
    protected (one approving review, `ci` required); checkpointed."""
    fake = demo_fake()
    fake.add_commit(OWNER, REPO, "main", {"src/export.py": EXPORT_PY, "docs/export.md": DOC},
                    message="Export module", author="monalisa")
    fake.add_pull_request(OWNER, REPO, "Write the CSV header from the first row's keys", "Fixes #1.",
                          author="hubot", head=PLAN["review"]["head"], files={"src/export.py": FIXED_PY})
    fake.add_check_run(OWNER, REPO, PLAN["review"]["head"], "ci")
    fake.protect_branch(OWNER, REPO, "main", required_checks=["ci"], required_reviews=1)
    fake.checkpoint()
    return fake


class Calls:
    """Tool calls of one agent, with the bytes of each result's text content."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.log: list[dict[str, Any]] = []

    async def __call__(self, task: str, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, {**REPO_ARGS, **args})
        text = "".join(c.text for c in result.content if c.type == "text")
        self.log.append({"task": task, "tool": tool, "bytes": len(text.encode("utf-8")),
                         "error": bool(result.is_error)})
        data: dict[str, Any] = result.structured_content or json.loads(text)
        return data


async def tasks(call: Calls) -> None:
    review = PLAN["review"]
    listed = await call("review", "github_list_pull_requests", head=review["head"])
    number = listed["pull_requests"][0]["pull_number"]
    read = await call("review", "github_get_pull_request", pull_number=number)
    assert all(run["conclusion"] == "success" for run in read["check_runs"]) and read["files"]
    await call("review", "github_add_pull_request_review", pull_number=number, event="APPROVE",
               body=review["body"])
    await call("review", "github_merge_pull_request", pull_number=number, merge_method="squash",
               head_sha=read["pull_request"]["head_sha"])
    edit = PLAN["edit"]
    doc = (await call("edit", "github_get_file_contents", path=edit["path"]))["file"]
    await call("edit", "github_create_branch", branch=edit["branch"])
    await call("edit", "github_create_or_update_file", path=edit["path"], branch=edit["branch"],
               content=doc["text"].replace(edit["old"], edit["new"]), message=edit["message"], sha=doc["sha"])
    await call("edit", "github_create_pull_request", title=edit["title"], head=edit["branch"], base="main")


def checks(fake: FakeGitHub) -> dict[str, bool]:
    """The end state, read from the fake."""
    review, edit = PLAN["review"], PLAN["edit"]
    pulls = {fake.pull(OWNER, REPO, i.number).head: i for i in fake.issues(OWNER, REPO) if i.is_pull_request}
    fixed = pulls.get(review["head"])
    opened = pulls.get(edit["branch"])
    approvals = [r for r in fake.pull(OWNER, REPO, fixed.number).reviews] if fixed else []
    on_branch = fake.branches(OWNER, REPO).get(edit["branch"])
    return {
        "review: approved by the agent": any(r.author == "octocat" and r.state == "APPROVED" for r in approvals),
        "review: merged": fixed is not None and fixed.merged_at is not None,
        "review: main has the fix": fake.file_bytes(OWNER, REPO, "src/export.py") == FIXED_PY.encode(),
        "edit: branch made": on_branch is not None,
        "edit: file changed on it": on_branch is not None and fake.file_bytes(
            OWNER, REPO, edit["path"], edit["branch"]) == DOC.replace(edit["old"], edit["new"]).encode(),
        "edit: main untouched": fake.file_bytes(OWNER, REPO, edit["path"]) == DOC.encode(),
        "edit: pull request opened": opened is not None and opened.state == "open"
        and opened.title == edit["title"] and fake.pull(OWNER, REPO, opened.number).base == "main",
    }


def summarize(calls: list[dict[str, Any]], tools_list_bytes: int, results: dict[str, bool]) -> dict[str, Any]:
    per_task: dict[str, int] = {}
    for c in calls:
        per_task[c["task"]] = per_task.get(c["task"], 0) + 1
    return {"tool_calls": len(calls), "result_bytes": sum(c["bytes"] for c in calls),
            "errors": sum(1 for c in calls if c["error"]), "tools_list_bytes": tools_list_bytes,
            "checks_passed": sum(results.values()), "checks_total": len(results), "checks": results,
            "calls_per_task": per_task, "calls": calls}


async def ours(fake: FakeGitHub) -> dict[str, Any]:
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                             transport=fake.asgi_transport())
    settings = Settings(token=DEMO_TOKEN, write_interval_s=0.0, exposure=ExposureFlags(toolsets=TOOLSETS))
    async with Client(build_server(SERVER, settings, upstream=upstream), cache=None) as client:
        listed = await client.list_tools()
        tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
        call = Calls(client)
        try:
            await tasks(call)
            results = checks(fake)
        except (KeyError, IndexError, AssertionError, TypeError) as exc:
            results = {f"script stopped: {type(exc).__name__}": False}
    tools_bytes = len(json.dumps(tools, separators=(",", ":")).encode("utf-8"))
    return {"server": f"{SERVER.fingerprint} --toolsets {','.join(TOOLSETS)}",
            **summarize(call.log, tools_bytes, results)}


def peer(fake: FakeGitHub) -> dict[str, Any]:
    """The peer's sequence on the same seeded fake, served on loopback."""
    from bench.peer import CODE_OPERATIONS, ensure_peer_venv, trimmed_spec

    python, spec = ensure_peer_venv(log=False), trimmed_spec(CODE_OPERATIONS)
    with fake.serve() as url:
        out = subprocess.run([str(python), str(Path(__file__).with_name("peer_fastmcp.py")), "code-trial",
                              str(spec), url, DEMO_TOKEN], input=json.dumps(PLAN), capture_output=True,
                             text=True, check=True)
    run = json.loads(out.stdout.strip().splitlines()[-1])
    return {"server": "FastMCP 4.1.6 OpenAPI provider", **summarize(run["calls"], run["tools_list_bytes"],
                                                                       checks(fake))}


def compare() -> dict[str, Any]:
    """Ours, then the fake reset to the same seed, then the peer; ratios are ours ÷ peer."""
    fake = code_fake()
    mine = asyncio.run(ours(fake))
    fake.reset()
    theirs = peer(fake)
    return {"ours": mine, "peer": theirs,
            "ratio": {key: round(mine[key] / theirs[key], 3)
                      for key in ("tool_calls", "result_bytes", "tools_list_bytes")}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ours", action="store_true", help="this tree only (no peer venv needed)")
    args = parser.parse_args(argv)
    report = asyncio.run(ours(code_fake())) if args.ours else compare()
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    runs = [report] if args.ours else [report["ours"], report["peer"]]
    return 0 if all(r["checks_passed"] == r["checks_total"] for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
