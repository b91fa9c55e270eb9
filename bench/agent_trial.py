"""A scripted agent trial: the tasks of the LLM trials, done by a careful agent through this server
and by the best sequence of calls on FastMCP's one-tool-per-operation server over the same
operations, each against the same seeded fake; counts tool calls and result bytes, reads the
`tools/list` each agent read, then checks the end state in the fake.

Task kinds (issue 21 added triage and batch; issue 33 the pull-request and file tasks of
bench/code_trial.py, run beside these on github-mcp's `pull_requests` and `repos` toolsets and
reported under `code`):

* single: find an issue, read it, create one with labels/assignee/milestone given by title,
  comment, close as not planned with a label change, label an issue with a label that does not
  exist yet (the six of the first LLM trial);
* triage: one issue gets a comment and a label swapped;
* batch: reopen and tag every closed issue that mentions a word, then file a summary issue; add
  a label to every open issue by a user that lacks it; assign every open issue with a label that
  nobody is assigned to; close every open issue with a comment;
* issue 34 added: close every open issue with a label and say why in a comment on each (batch);
  move every open issue of one milestone to another (batch); read an "issue" whose number is a
  pull request's (single: the agent must learn that it is one, and where it is).

Our agent is a fixed policy, not a model. It adapts to what the surface offers, the way a careful
agent does, so the same script runs against any version of the server:

* after a create or update it re-reads the issue (github_get_issue) unless the write's answer
  shows labels, assignees and milestone;
* a milestone title is passed as such when the create tool's milestone parameter takes a string;
  otherwise it looks for the number on issues read with detail full (github_search_issues);
* on label_not_found it calls the repair's tool, unless the repair's alternative names
  github_create_label: then it creates the label at once;
* a batch goes through github_update_issues when the server has it, else one update per issue
  found by a search; a batch that also comments passes `comment` when the batch takes it, else
  comments on each changed issue; a milestone filter goes in `match` when the search takes
  `milestone`, else the agent finds the rows by milestone title on a search of open issues;
* given a number that may be a pull request's, it reads it; an is_pull_request answer says so
  (details.url), while an issue_not_found one sends it to its repair (a search), where it looks;
* a wrong guess is a failed end-state check, never an exception.

The peer's sequence (bench/peer_fastmcp.py `trial`, in bench/.peer-venv) is the fewest calls an
agent that knows FastMCP's tools needs: it lists with the listing's own filters, reads labels off
the rows it found and writes each issue once. Result bytes are the UTF-8 bytes of each result's
text content (what the model reads).

    .venv/bin/python bench/agent_trial.py            # ours and the peer, side by side (JSON)
    .venv/bin/python bench/agent_trial.py --ours     # this tree only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from mcp import Client  # noqa: E402

from fakegithub.demo import DEMO_TOKEN, OWNER, REPO, demo_fake  # noqa: E402
from fakegithub.fake import FakeGitHub  # noqa: E402
from ghmcp_runtime.calls.upstream import ForgeUpstream  # noqa: E402
from ghmcp_runtime.serving.app import Settings, build_server  # noqa: E402
from github_issues_mcp import SERVER  # noqa: E402

REPO_ARGS = {"owner": OWNER, "repo": REPO}
NEW_TITLE = "Dark mode setting is lost after a reload"
COMMENT = "Reproduced on Safari 17.3 as well."
NEW_LABEL = "needs-repro"
EXPORT_ISSUES = [("CSV export drops the header row", "The export writes rows but no header.", ["bug"]),
                 ("Export button missing on mobile", "On phones the export menu entry is gone.", ["enhancement"]),
                 ("Exported dates are in UTC", "Users expect local time in the export.", [])]
STALE = ("Widget drag is sluggish", "Old tooltip text", "Sidebar flickers")  # labelled stale, open
MOVING = ("Beta feedback form", "Beta onboarding tour")  # open, in milestone v0.9; one closed stays
PLAN: dict[str, Any] = {  # what each task asks, shared with the peer's sequence
    "find": "Safari login redirect", "milestone": "v1.1", "new_title": NEW_TITLE, "comment": COMMENT,
    "close": "Support multiple boards", "new_label": NEW_LABEL,
    "triage": {"number": 8, "comment": "Archiving is planned for v1.1; see the docs meanwhile.",
               "remove": "question", "add": "documentation"},
    "reopen": {"word": "export", "label": "regression", "summary_title": "Export regressions to re-check",
               "summary": "Reopened after the CSV rewrite:"},
    "tag": {"author": "jane-doe", "label": "community"},
    "assign": {"label": "enhancement", "login": "monalisa"},
    "stale": {"label": "stale", "comment": "Closing as stale: reopen it with fresh steps if it still happens."},
    "move": {"from": "v0.9", "to": "v1.1"},
    "pr": 0,  # set by trial_fake: a pull request's number, asked for as an issue
}
KINDS = {"find": "single", "read": "single", "create": "single", "comment": "single", "close": "single",
         "new label": "single", "triage": "triage", "reopen": "batch", "tag": "batch",
         "assign": "batch", "close commented": "batch", "close stale": "batch", "move milestone": "batch",
         "pr number": "single"}


def trial_fake() -> FakeGitHub:
    """The demo repository plus what the triage and batch tasks work on; checkpointed."""
    fake = demo_fake()
    for name, color in (("regression", "b60205"), ("community", "0e8a16")):
        fake.add_label(OWNER, REPO, name, color)
    for title, body, labels in EXPORT_ISSUES:
        fake.add_issue(OWNER, REPO, title, body, labels=labels, author="hubot", state="closed")
    jane = [i for i in fake.issues(OWNER, REPO, pull_requests=False) if i.author == "jane-doe" and i.state == "open"]
    fake.get_issue(OWNER, REPO, jane[0].number).label_ids.append(
        next(lb.id for lb in fake.labels(OWNER, REPO) if lb.name == "community"))
    fake.add_label(OWNER, REPO, PLAN["stale"]["label"], "cccccc")
    for title in STALE:
        fake.add_issue(OWNER, REPO, title, "Seen once, months ago.", labels=[PLAN["stale"]["label"]], author="hubot")
    v09 = fake.add_milestone(OWNER, REPO, PLAN["move"]["from"])
    for title in MOVING:
        fake.add_issue(OWNER, REPO, title, "For the beta.", author="hubot", milestone=v09)
    fake.add_issue(OWNER, REPO, "Beta signup page", "Done.", author="hubot", milestone=v09, state="closed")
    PLAN["pr"] = next(i.number for i in fake.issues(OWNER, REPO) if i.is_pull_request)
    fake.checkpoint()
    return fake


@dataclass
class Agent:
    client: Client
    schemas: dict[str, Any]
    task: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    learned: dict[str, Any] = field(default_factory=dict)  # what a read task concluded

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, {**REPO_ARGS, **args})
        text = "".join(c.text for c in result.content if c.type == "text")
        self.calls.append({"task": self.task, "tool": tool, "bytes": len(text.encode("utf-8")),
                           "error": bool(result.is_error)})
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

    async def each(self, match: dict[str, Any], change: dict[str, Any]) -> list[int]:
        """Apply `change` to every issue `match` finds: one batch call, or a search and one update
        per issue on a server without github_update_issues. The issues changed."""
        if "github_update_issues" in self.schemas:
            done = await self.call("github_update_issues", match=match, **change)
            return [r["issue_number"] for r in done["items"] if r["outcome"] == "changed"]
        rows = (await self.call("github_search_issues", **match))["issues"]
        for row in rows:
            await self.call("github_update_issue", issue_number=row["issue_number"], **change)
        return [r["issue_number"] for r in rows]

    def takes(self, tool: str, param: str) -> bool:
        return param in self.schemas.get(tool, {}).get("inputSchema", {}).get("properties", {})

    async def each_with_comment(self, match: dict[str, Any], change: dict[str, Any], comment: str) -> None:
        """`change` on every issue `match` finds, and `comment` on each one changed."""
        if self.takes("github_update_issues", "comment"):
            await self.each(match, {**change, "comment": comment})
            return
        for number in await self.each(match, change):
            await self.call("github_add_comment", issue_number=number, body=comment)

    async def milestone_match(self, title: str) -> dict[str, Any]:
        """Filters finding the open issues of the milestone `title`."""
        if self.takes("github_search_issues", "milestone"):
            return {"milestone": title}
        rows = (await self.call("github_search_issues", state="open"))["issues"]
        numbers = [r["issue_number"] for r in rows if (r.get("milestone") or {}).get("title") == title]
        return {"issue_numbers": numbers}

    async def read_number(self, number: int) -> None:
        """Read `number`, which may be a pull request's; note what it is."""
        answer = await self.call("github_get_issue", issue_number=number)
        if answer.get("code") == "is_pull_request":
            self.learned["pr"] = answer["details"]["url"]
            return
        if answer.get("code") == "issue_not_found" and "repair" in answer:  # look where it points
            rows = (await self.call(answer["repair"]["tool"], **{
                k: v for k, v in answer["repair"]["arguments"].items() if k not in REPO_ARGS}))["issues"]
            if all(r["issue_number"] != number for r in rows) and "pull request" in answer["message"]:
                self.learned["pr"] = "a pull request"  # the message said so; the search could not
            return
        self.learned["pr"] = answer.get("issue", {}).get("url")


async def tasks(agent: Agent) -> None:
    agent.task = "find"
    safari = await agent.find(PLAN["find"])
    agent.task = "read"
    await agent.call("github_get_issue", issue_number=safari)
    agent.task = "create"
    created = await agent.call("github_create_issue", title=NEW_TITLE, labels=["bug"],
                               assignee_logins=["monalisa"], **await agent.milestone_arg(PLAN["milestone"]))
    await agent.shown(created, int(created.get("issue", created).get("issue_number")))
    agent.task = "comment"
    await agent.call("github_add_comment", issue_number=safari, body=COMMENT)
    agent.task = "close"
    boards = await agent.find(PLAN["close"])
    closed = await agent.call("github_update_issue", issue_number=boards, state="closed",
                              state_reason="not_planned", add_labels=["wontfix"], remove_labels=["triage"])
    await agent.shown(closed, boards)
    agent.task = "new label"
    await agent.add_label(safari, NEW_LABEL, "e4e669")
    agent.task = "triage"
    triage = PLAN["triage"]
    await agent.call("github_add_comment", issue_number=triage["number"], body=triage["comment"])
    await agent.call("github_update_issue", issue_number=triage["number"], add_labels=[triage["add"]],
                     remove_labels=[triage["remove"]])
    agent.task = "reopen"
    word = PLAN["reopen"]
    reopened = await agent.each({"query": word["word"], "state": "closed"},
                                {"state": "open", "add_labels": [word["label"]]})
    numbers = ", ".join(f"#{n}" for n in reopened)
    await agent.call("github_create_issue", title=word["summary_title"], body=f"{word['summary']} {numbers}")
    agent.task = "tag"
    tag = PLAN["tag"]
    await agent.each({"creator_login": tag["author"], "lacks_labels": [tag["label"]]}, {"add_labels": [tag["label"]]})
    agent.task = "assign"
    assign = PLAN["assign"]
    await agent.each({"labels": [assign["label"]], "missing": ["assignee"]}, {"add_assignees": [assign["login"]]})
    agent.task = "close commented"
    await agent.each({"min_comments": 1}, {"state": "closed"})
    agent.task = "close stale"
    stale = PLAN["stale"]
    await agent.each_with_comment({"labels": [stale["label"]]}, {"state": "closed", "state_reason": "not_planned"},
                                  stale["comment"])
    agent.task = "move milestone"
    move = PLAN["move"]
    target = await agent.milestone_match(move["from"])
    if "issue_numbers" in target:
        await agent.call("github_update_issues", issue_numbers=target["issue_numbers"], milestone=move["to"])
    else:
        await agent.each(target, {"milestone": move["to"]})
    agent.task = "pr number"
    await agent.read_number(PLAN["pr"])


@dataclass(frozen=True)
class Before:
    """What the checks compare against: the trial fake before any task ran."""

    jane_open: frozenset[int]
    commented_open: frozenset[int]  # open issues with a comment once the earlier tasks commented
    uncommented_open: frozenset[int]
    export: frozenset[int]
    unassigned: frozenset[int]  # issues open with the assign task's label and nobody assigned when it runs
    assignees: dict[int, list[str]]


def before(fake: FakeGitHub) -> Before:
    issues = fake.issues(OWNER, REPO, pull_requests=False)
    open_ = [i for i in issues if i.state == "open"]
    commented = {i.number for i in open_ if i.comments} | {5, PLAN["triage"]["number"]}
    boards = next(i.number for i in issues if i.title == "Support multiple boards")
    reopened = {t for t, _, _ in EXPORT_ISSUES}
    return Before(
        jane_open=frozenset(i.number for i in open_ if i.author == "jane-doe"),
        commented_open=frozenset(commented - {boards}),
        uncommented_open=frozenset(i.number for i in open_ if not i.comments and i.number not in commented
                                   and i.number != boards and i.title not in STALE),  # closed later
        export=frozenset(i.number for i in issues if i.title in reopened),
        unassigned=frozenset(i.number for i in issues if not i.assignees and i.number != boards
                             and (i.state == "open" or i.title in reopened)  # by the reopen task
                             and PLAN["assign"]["label"] in fake.label_names(OWNER, REPO, i.number)),
        assignees={i.number: list(i.assignees) for i in issues})


def checks(fake: FakeGitHub, was: Before, learned: dict[str, Any]) -> dict[str, bool]:
    """The end-state checks, read from the fake directly."""
    issues = {i.number: i for i in fake.issues(OWNER, REPO, pull_requests=False)}
    by_title = {i.title: i for i in issues.values()}
    new = by_title.get(NEW_TITLE)
    safari = by_title["Login redirects loop on Safari"]
    boards = by_title["Support multiple boards"]
    titles = {m.number: m.title for m in fake.milestones(OWNER, REPO)}
    boards_labels = fake.label_names(OWNER, REPO, boards.number)
    triaged = fake.label_names(OWNER, REPO, PLAN["triage"]["number"])
    summary = by_title.get(PLAN["reopen"]["summary_title"])
    labelled = {n for n in issues if PLAN["tag"]["label"] in fake.label_names(OWNER, REPO, n)}
    return {
        "created: title": new is not None,
        "created: labels": new is not None and fake.label_names(OWNER, REPO, new.number) == ["bug"],
        "created: assignee": new is not None and new.assignees == ["monalisa"],
        "created: milestone v1.1": new is not None and titles.get(new.milestone or 0) == "v1.1",
        "comment posted": any(c.body == COMMENT for c in fake.comments(OWNER, REPO, safari.number)),
        "closed": boards.state == "closed",
        "not planned": boards.state_reason == "not_planned",
        "wontfix added": "wontfix" in boards_labels,
        "triage removed": "triage" not in boards_labels,
        "label created": any(lb.name == NEW_LABEL for lb in fake.labels(OWNER, REPO)),
        "label applied": NEW_LABEL in fake.label_names(OWNER, REPO, safari.number),
        "triage: commented": any(c.body == PLAN["triage"]["comment"]
                                 for c in fake.comments(OWNER, REPO, PLAN["triage"]["number"])),
        "triage: label swapped": PLAN["triage"]["add"] in triaged and PLAN["triage"]["remove"] not in triaged,
        "reopen: every match reopened": all(issues[n].state == "open" for n in was.export),
        "reopen: every match tagged": all("regression" in fake.label_names(OWNER, REPO, n) for n in was.export),
        "reopen: summary lists them": summary is not None and all(f"#{n}" in (summary.body or "")
                                                                   for n in was.export),
        "tag: every open issue of the user": was.jane_open <= labelled,
        "tag: nobody else's": labelled <= was.jane_open,
        "assign: every unassigned one": all(issues[n].assignees == [PLAN["assign"]["login"]] for n in was.unassigned),
        "assign: nobody else's": all(i.assignees == was.assignees[n] for n, i in issues.items()
                                     if n in was.assignees and n not in was.unassigned),
        "close commented: all closed": all(issues[n].state == "closed" for n in was.commented_open),
        "close commented: no other": all(issues[n].state == "open" for n in was.uncommented_open),
        "close stale: closed as not planned": all((by_title[t].state, by_title[t].state_reason) == ("closed", "not_planned")
                                                  for t in STALE),
        "close stale: one comment each, as written": all(
            [c.body for c in fake.comments(OWNER, REPO, by_title[t].number)] == [PLAN["stale"]["comment"]] for t in STALE),
        "move milestone: open ones moved": all(titles.get(by_title[t].milestone or 0) == PLAN["move"]["to"] for t in MOVING),
        "move milestone: closed one stays": titles.get(by_title["Beta signup page"].milestone or 0) == PLAN["move"]["from"],
        "pr number: known to be a pull request": learned.get("pr") in (
            f"https://github.com/{OWNER}/{REPO}/pull/{PLAN['pr']}", "a pull request"),
    }


def summarize(calls: list[dict[str, Any]], tools_list_bytes: int, results: dict[str, bool]) -> dict[str, Any]:
    per_task: dict[str, int] = {}
    for c in calls:
        per_task[c["task"]] = per_task.get(c["task"], 0) + 1
    per_kind: dict[str, int] = {}
    for task, n in per_task.items():
        per_kind[KINDS[task]] = per_kind.get(KINDS[task], 0) + n
    return {
        "tool_calls": len(calls), "result_bytes": sum(c["bytes"] for c in calls),
        "errors": sum(1 for c in calls if c["error"]), "tools_list_bytes": tools_list_bytes,
        "checks_passed": sum(results.values()), "checks_total": len(results), "checks": results,
        "calls_per_task": per_task, "calls_per_kind": per_kind, "calls": calls,
    }


async def ours(fake: FakeGitHub) -> dict[str, Any]:
    was = before(fake)
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                             transport=fake.asgi_transport())
    server = build_server(SERVER, Settings(token=DEMO_TOKEN, write_interval_s=0.0), upstream=upstream)
    async with Client(server, cache=None) as client:
        listed = await client.list_tools()
        schemas = {t.name: t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools}
        tools_bytes = len(json.dumps(list(schemas.values()), separators=(",", ":")).encode("utf-8"))
        agent = Agent(client, schemas)
        try:
            await tasks(agent)
            results = checks(fake, was, agent.learned)
        except (KeyError, StopIteration, ValueError, TypeError) as exc:
            results = {f"script stopped: {type(exc).__name__}": False}
    return {"server": SERVER.fingerprint, **summarize(agent.calls, tools_bytes, results)}


def peer(fake: FakeGitHub) -> dict[str, Any]:
    """The peer's sequence on the same seeded fake, served on loopback."""
    from bench.peer import ensure_peer_venv, trimmed_spec

    was = before(fake)
    python, spec = ensure_peer_venv(log=False), trimmed_spec()
    with fake.serve() as url:
        out = subprocess.run([str(python), str(Path(__file__).with_name("peer_fastmcp.py")), "trial",
                              str(spec), url, DEMO_TOKEN], input=json.dumps(PLAN), capture_output=True,
                             text=True, check=True)
    run = json.loads(out.stdout.strip().splitlines()[-1])
    return {"server": "FastMCP 4.1.6 OpenAPI provider", **summarize(run["calls"], run["tools_list_bytes"],
                                                                       checks(fake, was, run["learned"]))}


def compare() -> dict[str, Any]:
    """Ours, then the fake reset to the same seed, then the peer; ratios are ours ÷ peer. The
    pull-request and file tasks (bench/code_trial.py) under `code`, compared the same way."""
    from bench import code_trial

    fake = trial_fake()
    mine = asyncio.run(ours(fake))
    fake.reset()
    theirs = peer(fake)
    return {
        "ours": mine, "peer": theirs,
        "ratio": {key: round(mine[key] / theirs[key], 3) for key in ("tool_calls", "result_bytes",
                                                                    "tools_list_bytes")},
        "code": code_trial.compare(),
    }


async def trial() -> dict[str, Any]:
    """This tree only (the test runs it)."""
    return await ours(trial_fake())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ours", action="store_true", help="this tree only (no peer venv needed)")
    args = parser.parse_args(argv)
    report = asyncio.run(trial()) if args.ours else compare()
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    runs = [report] if args.ours else [report["ours"], report["peer"], report["code"]["ours"],
                                       report["code"]["peer"]]
    return 0 if all(r["checks_passed"] == r["checks_total"] for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
