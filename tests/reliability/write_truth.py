"""Write-truth scenarios for docs/FAULTS.md (issue 20): what a write answers when GitHub refuses a
value in a wave, when the answer to a keyed create is lost and the retry meets an unreadable
identity, an edited title, a restart, an identical item of another call or a skewed clock, and
when a lost PATCH meets a concurrent edit. Each runs against a fresh fake through the official
client; the rows say what the tool answered and what GitHub then holds."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from mcp import Client

from fakegithub import FakeGitHub, offset_clock
from fakegithub.faults import Match
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.serving.app import Settings, build_server
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from github_issues_mcp import SERVER
from tests.reliability.reliability_support import OWNER, REPO, TOKEN, small_seed

SECRET = b"write-truth-scenarios"  # every server here serves one caller per token
APP_TOKEN = "ghs_installationtokenwritetruth0000000001"
OTHER = "ghp_othertokenwritetruth00000000000000004"
TITLE = "Nightly build failed"
KEYED = {"owner": OWNER, "repo": REPO, "title": TITLE, "body": "see logs", "idempotency_key": "nightly-0001"}


@dataclass(frozen=True)
class Scenario:
    key: str
    what: str
    run: Callable[[], Awaitable[ScenarioCell]]


@dataclass(frozen=True)
class ScenarioCell:
    key: str
    answers: tuple[str, ...]  # code per call, `ok` for success
    holds: str  # what GitHub then holds
    writes: int  # write requests GitHub received (another user's included; a stalled one too)


def server(fake: FakeGitHub, *, token: str = TOKEN, timeout: float = 5.0,
           runner: IdempotencyRunner | None = None,
           transport: httpx.AsyncBaseTransport | None = None) -> Any:
    upstream = ForgeUpstream(base_url="http://fake.test", api_version=SERVER.api_version,
                             transport=transport or fake.asgi_transport(), timeout=timeout)
    return build_server(SERVER, Settings(token=token, server_secret=SECRET), upstream=upstream,
                        idempotency=runner or IdempotencyRunner(MemoryStore()))


async def call(srv: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(srv, cache=None) as client:
        result = await client.call_tool(tool, args)
    return dict(result.structured_content or {})


def code(data: dict[str, Any]) -> str:
    return str(data.get("code", "ok"))


def titled(fake: FakeGitHub) -> int:
    return sum(1 for i in fake.issues(OWNER, REPO) if i.title.startswith(TITLE))


def writes(fake: FakeGitHub) -> int:
    return sum(1 for r in fake.requests if r.method != "GET")


async def lost_then_retry(fake: FakeGitHub, token: str = TOKEN, *, between: Callable[[], Awaitable[None]]
                          | None = None, fresh_store: bool = False, retries: int = 1) -> list[str]:
    runner = IdempotencyRunner(MemoryStore())
    fake.faults.add(Match(operation="issues/create"), "timeout", after_commit=True, delay=3)
    answers = [code(await call(server(fake, token=token, timeout=1.0, runner=runner),
                               "github_create_issue", KEYED))]
    fake.faults.clear()
    if between is not None:
        await between()
    for _ in range(retries):
        retry_runner = IdempotencyRunner(MemoryStore()) if fresh_store else runner
        answers.append(code(await call(server(fake, token=token, runner=retry_runner),
                                       "github_create_issue", KEYED)))
    return answers


async def refused_in_a_wave() -> ScenarioCell:
    fake = FakeGitHub()
    seeded = small_seed(fake)
    data = await call(server(fake), "github_update_issue", {
        "owner": OWNER, "repo": REPO, "issue_number": seeded["first"], "milestone": 999,
        "add_labels": ["wontfix"], "locked": True})
    item = fake.get_issue(OWNER, REPO, seeded["first"])
    holds = "unchanged" if not item.locked and "wontfix" not in fake.label_names(OWNER, REPO, item.number) \
        else "changed"
    return ScenarioCell("refused", (code(data),), f"issue {holds}", writes(fake))


async def identity_unreadable() -> ScenarioCell:
    fake = FakeGitHub()
    small_seed(fake)
    fake.add_installation_token(APP_TOKEN, "triage-bot", collaborator_on=f"{OWNER}/{REPO}")
    answers = await lost_then_retry(fake, APP_TOKEN, retries=2)
    return ScenarioCell("identity", tuple(answers), f"{titled(fake)} issue(s)", writes(fake))


async def title_edited() -> ScenarioCell:
    fake = FakeGitHub()
    small_seed(fake)

    async def retitle() -> None:
        number = max(i.number for i in fake.issues(OWNER, REPO))
        async with fake.client(TOKEN) as gh:
            await gh.patch(f"/repos/{OWNER}/{REPO}/issues/{number}", json={"title": f"{TITLE} [triaged]"})

    answers = await lost_then_retry(fake, between=retitle)
    return ScenarioCell("edited", tuple(answers), f"{titled(fake)} issue(s)", writes(fake))


async def restarted() -> ScenarioCell:
    fake = FakeGitHub()
    small_seed(fake)
    answers = await lost_then_retry(fake, fresh_store=True)
    return ScenarioCell("restart", tuple(answers), f"{titled(fake)} issue(s)", writes(fake))


async def identical_by_another_key() -> ScenarioCell:
    fake = FakeGitHub()
    seeded = small_seed(fake)
    runner = IdempotencyRunner(MemoryStore())
    srv = server(fake, timeout=1.0, runner=runner)
    base = {"owner": OWNER, "repo": REPO, "issue_number": seeded["first"], "body": "/retest"}
    answers = [code(await call(srv, "github_add_comment", {**base, "idempotency_key": "retest-0001"}))]
    fake.faults.add(Match(operation="issues/create-comment"), "timeout", delay=3)  # not performed
    answers.append(code(await call(srv, "github_add_comment", {**base, "idempotency_key": "retest-0002"})))
    fake.faults.clear()
    answers.append(code(await call(srv, "github_add_comment", {**base, "idempotency_key": "retest-0002"})))
    posted = sum(1 for c in fake.comments(OWNER, REPO, seeded["first"]) if c.body == "/retest")
    return ScenarioCell("another-key", tuple(answers), f"{posted} comment(s)", writes(fake))


class _LoseThenEdit(httpx.AsyncBaseTransport):
    """The PATCH is not applied and its answer lost; another user retitles the issue meanwhile."""

    def __init__(self, fake: FakeGitHub, number: int) -> None:
        self.inner, self.fake, self.number, self.done = fake.asgi_transport(), fake, number, False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH" and not self.done:
            self.done = True
            async with self.fake.client(OTHER) as other:
                await other.patch(f"/repos/{OWNER}/{REPO}/issues/{self.number}", json={"title": "Theirs"})
            raise httpx.RemoteProtocolError("connection reset", request=request)
        return await self.inner.handle_async_request(request)


async def lost_patch_concurrent_edit() -> ScenarioCell:
    fake = FakeGitHub()
    seeded = small_seed(fake)
    fake.add_token(OTHER, "someone", collaborator_on=f"{OWNER}/{REPO}")
    srv = server(fake, transport=_LoseThenEdit(fake, seeded["first"]))
    data = await call(srv, "github_update_issue", {"owner": OWNER, "repo": REPO,
                                                   "issue_number": seeded["first"], "title": "Mine"})
    unknown = "unknown" in str(data.get("message", ""))
    title = fake.get_issue(OWNER, REPO, seeded["first"]).title
    return ScenarioCell("lost-patch", (code(data) + (" (title named unknown)" if unknown else ""),),
                        f"title {title!r} (theirs)", writes(fake))


async def clock_skew() -> ScenarioCell:
    fake = FakeGitHub(clock=offset_clock(-45))
    small_seed(fake)
    answers = await lost_then_retry(fake)
    return ScenarioCell("skew", tuple(answers), f"{titled(fake)} issue(s)", writes(fake))


SCENARIOS = [
    Scenario("refused", "update_issue: unknown milestone number beside a label add and a lock "
             "(GitHub would refuse the PATCH after the others were applied)", refused_in_a_wave),
    Scenario("identity", "keyed create, answer lost; GET /user refused (GitHub App installation "
             "token); two retries with the key", identity_unreadable),
    Scenario("edited", "keyed create, answer lost; the title is edited before the retry", title_edited),
    Scenario("restart", "keyed create, answer lost; the server restarts (memory store) before the "
             "retry", restarted),
    Scenario("another-key", "comment with key A; the same text with key B, not performed; B's retry",
             identical_by_another_key),
    Scenario("lost-patch", "update_issue title, PATCH not applied and its answer lost; another user "
             "retitles the issue before the re-read", lost_patch_concurrent_edit),
    Scenario("skew", "keyed create, answer lost; GitHub's clock 45 s behind the server's", clock_skew),
]
EXPECTED = {  # what each scenario must answer and leave on GitHub (asserted)
    "refused": (("milestone_not_found",), "issue unchanged"),
    "identity": (("upstream_unavailable", "outcome_unknown", "outcome_unknown"), "1 issue(s)"),
    "edited": (("upstream_unavailable", "ok"), "1 issue(s)"),
    "restart": (("upstream_unavailable", "ok"), "2 issue(s)"),  # memory keys die with the process
    "another-key": (("ok", "upstream_unavailable", "ok"), "2 comment(s)"),  # both intended
    "lost-patch": (("upstream_unavailable (title named unknown)",), "title 'Theirs' (theirs)"),
    "skew": (("upstream_unavailable", "ok"), "1 issue(s)"),
}


def render_scenarios(cells: list[ScenarioCell]) -> str:
    lines = [
        "## Write truth: refusals, lost answers and other writers",
        "",
        "Each row is one scenario against a fresh fake through the official client (issue 20).",
        "**answers** = the code of each call in order (`ok` = success), **GitHub holds** = the end",
        "state, **writes** = write requests GitHub received (another user's and stalled ones included). Keyed",
        "retries find only their own write: the item must have been created while one of the key's",
        "attempts could have written it (GitHub's clock measured from its `Date` header), must not",
        "be an item another call answered with, and must be the caller's (when GitHub will not say",
        "who the token is, the answer is `outcome_unknown` with the candidates, and the key stays",
        "pending). The restart row is the one duplicate left: keys kept in memory are gone after a",
        "restart (the parameter text says so; a Redis store keeps them).",
        "",
        "| scenario | answers | GitHub holds | writes |",
        "|---|---|---|---:|",
    ]
    whats = {s.key: s.what for s in SCENARIOS}
    for cell in cells:
        answers = ", ".join(f"`{a}`" for a in cell.answers)
        lines.append(f"| {whats[cell.key]} | {answers} | {cell.holds} | {cell.writes} |")
    return "\n".join(lines) + "\n"
