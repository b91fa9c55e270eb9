"""FastMCP 4.1.6's OpenAPI provider on the trimmed spec; runs under bench/.peer-venv/bin/python.

    peer_fastmcp.py stdio  SPEC BASE_URL TOKEN          # a stdio server (cold start, stdio calls)
    peer_fastmcp.py http   SPEC BASE_URL TOKEN PORT     # streamable HTTP, stateless, JSON responses
    peer_fastmcp.py inmem  SPEC BASE_URL TOKEN ISSUE WARMUP CALLS   # per-call timings -> stdout JSON
    peer_fastmcp.py trial  SPEC BASE_URL TOKEN < PLAN.json   # the agent trial's best sequence
    peer_fastmcp.py code-trial SPEC BASE_URL TOKEN < PLAN.json   # ... of its pull-request and file tasks

The upstream client is `httpx2.AsyncClient(base_url=BASE_URL)` carrying the token and GitHub's
headers, the documented way to point the provider at an API (fastmcp 4.x has no httpx).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import httpx2
from fastmcp import FastMCP

HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
OWNER, REPO = "octo-org", "roadmap"


def server(spec_path: str, base_url: str, token: str) -> FastMCP:
    with open(spec_path, "rb") as f:
        spec = json.load(f)
    client = httpx2.AsyncClient(base_url=base_url, headers={**HEADERS, "Authorization": f"Bearer {token}"},
                                timeout=30)
    return FastMCP.from_openapi(openapi_spec=spec, client=client, name="OpenAPI Server",
                                validate_output=True)


async def _inmem(spec_path: str, base_url: str, token: str, issue: int, warmup: int,
                 calls: int) -> dict[str, Any]:
    from mcp import Client

    mcp = server(spec_path, base_url, token)
    args = {"owner": OWNER, "repo": REPO, "issue_number": issue}
    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(base_url=base_url, headers={**HEADERS, "Authorization": f"Bearer {token}"}) as http:
        async def direct() -> None:
            r = await http.get(f"/repos/{OWNER}/{REPO}/issues/{issue}")
            r.json()

        out["direct"] = await _time(direct, warmup, calls)
    handler: list[float] = []
    real = FastMCP.call_tool

    async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await real(self, *args, **kwargs)
        finally:
            handler.append(time.perf_counter() - t0)

    FastMCP.call_tool = timed  # type: ignore[method-assign]
    for mode in ("auto", "legacy"):
        handler.clear()
        async with Client(mcp._mcp_server, mode=mode, cache=None) as client:
            async def call() -> None:
                result = await client.call_tool("issuesget", args)
                if result.is_error:
                    raise RuntimeError(str(result.content)[:500])

            out[f"inmem_{mode}"] = await _time(call, warmup, calls)
        if mode == "auto":
            out["handler"] = handler[-calls:]  # FastMCP.call_tool: middleware, request, parsing
    FastMCP.call_tool = real  # type: ignore[method-assign]
    return out


async def _time(fn: Any, warmup: int, calls: int) -> list[float]:
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t0)
    return samples


# -- the agent trial's best sequence (bench/agent_trial.py) ---------------------------------------


class _Calls:
    """Calls one client made, with the bytes of each result's text content (what a model reads)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.log: list[dict[str, Any]] = []

    async def __call__(self, task: str, tool: str, **args: Any) -> Any:
        result = await self.client.call_tool(tool, {"owner": OWNER, "repo": REPO, **args}
                                             if tool != "searchissues_and_pull_requests" else args)
        text = "".join(c.text for c in result.content if c.type == "text")
        self.log.append({"task": task, "tool": tool, "bytes": len(text.encode("utf-8")),
                         "error": bool(result.is_error)})
        data = result.structured_content or {}
        return data.get("result", data)


def _names(row: dict[str, Any]) -> list[str]:
    return [lb["name"] for lb in row.get("labels", [])]


async def _trial(spec_path: str, base_url: str, token: str, plan: dict[str, Any]) -> dict[str, Any]:
    """The fewest calls an agent that knows FastMCP's tools needs for each task of the trial."""
    from mcp import Client

    mcp = server(spec_path, base_url, token)
    async with Client(mcp._mcp_server, cache=None) as client:
        listed = await client.list_tools()
        tools_bytes = len(json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json")
                                      for t in listed.tools], separators=(",", ":")).encode("utf-8"))
        call = _Calls(client)
        scope = f"repo:{OWNER}/{REPO} is:issue"

        async def find(task: str, words: str) -> dict[str, Any]:
            found = await call(task, "searchissues_and_pull_requests", q=f"{words} {scope}")
            row: dict[str, Any] = found["items"][0]
            return row

        safari = await find("find", plan["find"])
        await call("read", "issuesget", issue_number=safari["number"])
        await call("read", "issueslist_comments", issue_number=safari["number"])
        milestones = await call("create", "issueslist_milestones", state="open")
        number = next(m["number"] for m in milestones if m["title"] == plan["milestone"])
        await call("create", "issuescreate", title=plan["new_title"], labels=["bug"],
                   assignees=["monalisa"], milestone=number)
        await call("comment", "issuescreate_comment", issue_number=safari["number"], body=plan["comment"])
        boards = await find("close", plan["close"])
        keep = [n for n in _names(boards) if n != "triage"]
        await call("close", "issuesupdate", issue_number=boards["number"], state="closed",
                   state_reason="not_planned", labels=[*keep, "wontfix"])
        await call("new label", "issuescreate_label", name=plan["new_label"], color="e4e669")
        await call("new label", "issuesadd_labels", issue_number=safari["number"],
                   body={"labels": [plan["new_label"]]})
        # triage one issue: a comment and a label swapped
        triaged = plan["triage"]
        await call("triage", "issuescreate_comment", issue_number=triaged["number"], body=triaged["comment"])
        await call("triage", "issuesremove_label", issue_number=triaged["number"], name=triaged["remove"])
        await call("triage", "issuesadd_labels", issue_number=triaged["number"],
                   body={"labels": [triaged["add"]]})
        # batch: reopen and tag every closed issue mentioning a word, then a summary issue
        word = plan["reopen"]
        found = await call("reopen", "searchissues_and_pull_requests",
                           q=f"{word['word']} {scope} is:closed", per_page=100)
        for row in found["items"]:
            await call("reopen", "issuesupdate", issue_number=row["number"], state="open",
                       labels=[*_names(row), word["label"]])
        numbers = ", ".join(f"#{row['number']}" for row in found["items"])
        await call("reopen", "issuescreate", title=word["summary_title"], body=f"{word['summary']} {numbers}")
        # batch: a label on every open issue by a user that lacks it
        tag = plan["tag"]
        rows = await call("tag", "issueslist_for_repo", state="open", creator=tag["author"], per_page=100)
        for row in rows:
            if "pull_request" not in row and tag["label"] not in _names(row):
                await call("tag", "issuesadd_labels", issue_number=row["number"], body={"labels": [tag["label"]]})
        # batch: assign every open issue with a label that nobody is assigned to
        assign = plan["assign"]
        rows = await call("assign", "issueslist_for_repo", state="open", labels=assign["label"], assignee="none",
                          per_page=100)
        for row in rows:
            if "pull_request" not in row:
                await call("assign", "issuesupdate", issue_number=row["number"], assignees=[assign["login"]])
        # batch: close every open issue that has a comment
        rows = await call("close commented", "issueslist_for_repo", state="open", per_page=100)
        for row in rows:
            if "pull_request" not in row and row["comments"] > 0:
                await call("close commented", "issuesupdate", issue_number=row["number"], state="closed")
        # issue 34: close every open issue with a label, with a comment on each
        stale = plan["stale"]
        rows = await call("close stale", "issueslist_for_repo", state="open", labels=stale["label"], per_page=100)
        for row in rows:
            if "pull_request" not in row:
                await call("close stale", "issuesupdate", issue_number=row["number"], state="closed",
                           state_reason="not_planned")
                await call("close stale", "issuescreate_comment", issue_number=row["number"], body=stale["comment"])
        # move the open issues of one milestone to another (numbers from the create task's list)
        move = plan["move"]
        source, target = (next(m["number"] for m in milestones if m["title"] == move[k]) for k in ("from", "to"))
        rows = await call("move milestone", "issueslist_for_repo", state="open", milestone=str(source), per_page=100)
        for row in rows:
            if "pull_request" not in row:
                await call("move milestone", "issuesupdate", issue_number=row["number"], milestone=target)
        # a pull request's number asked for as an issue: the issue API answers it, marked
        read = await call("pr number", "issuesget", issue_number=plan["pr"])
        learned = {"pr": read.get("html_url") if "pull_request" in read else None}
    return {"tools_list_bytes": tools_bytes, "calls": call.log, "learned": learned}


async def _code_trial(spec_path: str, base_url: str, token: str, plan: dict[str, Any]) -> dict[str, Any]:
    """The fewest calls an agent that knows FastMCP's tools needs for the code trial
    (bench/code_trial.py): the same reads before approving, content in base64 both ways."""
    import base64

    from mcp import Client

    mcp = server(spec_path, base_url, token)
    async with Client(mcp._mcp_server, cache=None) as client:
        listed = await client.list_tools()
        tools_bytes = len(json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json")
                                      for t in listed.tools], separators=(",", ":")).encode("utf-8"))
        call = _Calls(client)
        review = plan["review"]
        rows = await call("review", "pullslist", head=f"{OWNER}:{review['head']}")
        number = rows[0]["number"]
        pull = await call("review", "pullsget", pull_number=number)
        await call("review", "pullslist_files", pull_number=number)
        await call("review", "pullslist_reviews", pull_number=number)
        await call("review", "checkslist_for_ref", ref=pull["head"]["sha"])
        await call("review", "reposget_combined_status_for_ref", ref=pull["head"]["sha"])
        await call("review", "pullscreate_review", pull_number=number, event="APPROVE", body=review["body"])
        await call("review", "pullsmerge", pull_number=number, merge_method="squash", sha=pull["head"]["sha"])
        edit = plan["edit"]
        doc = await call("edit", "reposget_content", path=edit["path"])
        text = base64.b64decode(doc["content"]).decode()
        main = await call("edit", "reposget_commit", ref="main", per_page=1)
        await call("edit", "gitcreate_ref", ref=f"refs/heads/{edit['branch']}", sha=main["sha"])
        await call("edit", "reposcreate_or_update_file_contents", path=edit["path"], message=edit["message"],
                   content=base64.b64encode(text.replace(edit["old"], edit["new"]).encode()).decode(),
                   sha=doc["sha"], branch=edit["branch"])
        await call("edit", "pullscreate", title=edit["title"], head=edit["branch"], base="main")
    return {"tools_list_bytes": tools_bytes, "calls": call.log}


def main(argv: list[str]) -> int:
    mode, spec_path, base_url, token, *rest = argv
    if mode == "stdio":
        server(spec_path, base_url, token).run("stdio", show_banner=False)
    elif mode == "http":
        server(spec_path, base_url, token).run(
            "http", show_banner=False, host="127.0.0.1", port=int(rest[0]), path="/mcp",
            stateless_http=True, json_response=True)
    elif mode == "trial":
        result = asyncio.run(_trial(spec_path, base_url, token, json.loads(sys.stdin.read())))
        sys.stdout.write(json.dumps(result) + "\n")
    elif mode == "code-trial":
        result = asyncio.run(_code_trial(spec_path, base_url, token, json.loads(sys.stdin.read())))
        sys.stdout.write(json.dumps(result) + "\n")
    elif mode == "inmem":
        issue, warmup, calls = (int(x) for x in rest)
        result = asyncio.run(_inmem(spec_path, base_url, token, issue, warmup, calls))
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        raise SystemExit(f"unknown mode {mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
