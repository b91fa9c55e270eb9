"""A scripted agent trial: the six kinds of tasks of the LLM trial (find an issue, read it, create
one with labels/assignee/milestone given by title, comment, close as not planned with a label
change, label an issue with a label that does not exist yet) through the official MCP client (in
memory) against the demo fake; counts tool calls and result bytes, then checks the end state.

The agent is a fixed policy, not a model. It adapts to what the surface offers, the way a careful
agent does, so the same script runs against any version of the server:

* after a create or update it re-reads the issue (github_get_issue) unless the write's answer
  shows labels, assignees and milestone;
* a milestone title is passed as such when the create tool's milestone parameter takes a string;
  otherwise it looks for the number on issues read with detail full (github_search_issues);
* on label_not_found it calls the repair's tool, unless the repair's alternative names
  github_create_label: then it creates the label at once;
* a wrong guess is a failed end-state check, never an exception.

Result bytes are the UTF-8 bytes of each result's text content (what the model reads).

    .venv/bin/python bench/agent_trial.py            # this tree
    PYTHONPATH=/tmp/before:/tmp/before/generated .venv/bin/python bench/agent_trial.py  # another
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

from fakegithub.demo import DEMO_TOKEN, OWNER, REPO, demo_fake
from ghmcp_runtime.app import Settings, build_server
from ghmcp_runtime.upstream import ForgeUpstream
from github_issues_mcp import SERVER

REPO_ARGS = {"owner": OWNER, "repo": REPO}
NEW_TITLE = "Dark mode setting is lost after a reload"
COMMENT = "Reproduced on Safari 17.3 as well."
NEW_LABEL = "needs-repro"


@dataclass
class Agent:
    client: Client
    schemas: dict[str, Any]
    calls: list[tuple[str, int, bool]] = field(default_factory=list)  # tool, bytes, isError

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, {**REPO_ARGS, **args})
        text = "".join(c.text for c in result.content if c.type == "text")
        self.calls.append((tool, len(text.encode("utf-8")), bool(result.is_error)))
        data: dict[str, Any] = result.structured_content or json.loads(text)
        return data

    def takes_title(self, tool: str, param: str) -> bool:
        prop = self.schemas[tool]["inputSchema"]["properties"].get(param, {})
        kinds = prop.get("type")
        return "string" in (kinds if isinstance(kinds, list) else [kinds])

    async def shown(self, answer: dict[str, Any], number: int) -> dict[str, Any]:
        """The issue as the write left it: from the answer when it shows it, else re-read."""
        row = answer.get("issue")
        if isinstance(row, dict) and {"labels", "assignees", "milestone"} <= row.keys():
            return row
        read = await self.call("github_get_issue", issue_number=number, detail="full")
        issue: dict[str, Any] = read["issue"]
        return issue

    async def find(self, query: str) -> int:
        rows = (await self.call("github_search_issues", query=query, state="all"))["issues"]
        return int(rows[0]["issue_number"])

    async def milestone_arg(self, title: str) -> dict[str, Any]:
        if self.takes_title("github_create_issue", "milestone"):
            return {"milestone": title}
        rows = (await self.call("github_search_issues", state="all", detail="full"))["issues"]
        number = next(r["milestone"]["number"] for r in rows
                      if (r.get("milestone") or {}).get("title") == title)
        return {"milestone_number": number}

    async def add_label(self, number: int, label: str, color: str) -> None:
        answer = await self.call("github_update_issue", issue_number=number, add_labels=[label])
        if answer.get("code") == "label_not_found":
            repair = answer.get("repair", {})
            if "github_create_label" not in repair.get("alternative", ""):
                await self.call(repair["tool"], **{k: v for k, v in repair["arguments"].items()
                                                   if k not in REPO_ARGS}, name=label)
            await self.call("github_create_label", name=label, color=color)
            answer = await self.call("github_update_issue", issue_number=number, add_labels=[label])
        await self.shown(answer, number)


async def tasks(agent: Agent) -> dict[str, int]:
    # 1. find an issue; 2. read it
    safari = await agent.find("Safari login redirect")
    await agent.call("github_get_issue", issue_number=safari)
    # 3. create with labels, an assignee and a milestone named by its title
    created = await agent.call("github_create_issue", title=NEW_TITLE, labels=["bug"],
                               assignee_logins=["monalisa"], **await agent.milestone_arg("v1.1"))
    number = int(created.get("issue", created).get("issue_number"))
    await agent.shown(created, number)
    # 4. comment on the issue found in 1
    await agent.call("github_add_comment", issue_number=safari, body=COMMENT)
    # 5. close as not planned with a label change
    boards = await agent.find("Support multiple boards")
    closed = await agent.call("github_update_issue", issue_number=boards, state="closed",
                              state_reason="not_planned", add_labels=["wontfix"],
                              remove_labels=["triage"])
    await agent.shown(closed, boards)
    # 6. label an issue with a label the repository does not have yet
    await agent.add_label(safari, NEW_LABEL, "e4e669")
    return {"safari": safari, "created": number, "boards": boards}


def checks(fake: Any, numbers: dict[str, int]) -> dict[str, bool]:
    """The 11 end-state checks, read from the fake directly."""
    new = fake.get_issue(OWNER, REPO, numbers["created"])
    boards = fake.get_issue(OWNER, REPO, numbers["boards"])
    titles = {m.number: m.title for m in fake.milestones(OWNER, REPO)}
    boards_labels = fake.label_names(OWNER, REPO, numbers["boards"])
    return {
        "created: title": new.title == NEW_TITLE,
        "created: labels": fake.label_names(OWNER, REPO, new.number) == ["bug"],
        "created: assignee": new.assignees == ["monalisa"],
        "created: milestone v1.1": titles.get(new.milestone or 0) == "v1.1",
        "comment posted": any(c.body == COMMENT for c in fake.comments(OWNER, REPO, numbers["safari"])),
        "closed": boards.state == "closed",
        "not planned": boards.state_reason == "not_planned",
        "wontfix added": "wontfix" in boards_labels,
        "triage removed": "triage" not in boards_labels,
        "label created": any(lb.name == NEW_LABEL for lb in fake.labels(OWNER, REPO)),
        "label applied": NEW_LABEL in fake.label_names(OWNER, REPO, numbers["safari"]),
    }


async def trial() -> dict[str, Any]:
    fake = demo_fake()
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                              transport=fake.asgi_transport())
    server = build_server(SERVER, Settings(token=DEMO_TOKEN), upstream=upstream)
    async with Client(server, cache=None) as client:
        listed = await client.list_tools()
        schemas = {t.name: t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools}
        agent = Agent(client, schemas)
        try:
            numbers = await tasks(agent)
            results = checks(fake, numbers)
        except (KeyError, StopIteration, ValueError, TypeError) as exc:
            results = {f"script stopped: {type(exc).__name__}": False}
    return {
        "server": SERVER.fingerprint,
        "tool_calls": len(agent.calls),
        "result_bytes": sum(b for _, b, _ in agent.calls),
        "errors": sum(1 for *_, e in agent.calls if e),
        "checks_passed": sum(results.values()),
        "checks": results,
        "calls": [{"tool": t, "bytes": b, "error": e} for t, b, e in agent.calls],
    }


def main() -> int:
    report = asyncio.run(trial())
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0 if report["checks_passed"] == len(report["checks"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
