"""A keyed create whose answer was lost: the retry finds only this key's write, keeps the key
while it cannot decide, and never writes twice. Regression tests for the second correctness
review (/work/shared/repro/correctness-2/), each named after its script.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub, offset_clock
from fakegithub.faults import Match
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server, seed
from tests.functional.test_idempotent_writes import call

pytestmark = pytest.mark.anyio
ARGS = {"owner": OWNER, "repo": REPO, "title": "Nightly build failed", "body": "see logs",
        "idempotency_key": "nightly-0001"}
TOKEN_B = "ghp_secondtokenofoctocat000000000000000009"
APP_TOKEN = "ghs_installationtokenoftriagebot00000001"
SECRET = b"replicas-share-this-secret"  # every server here: one caller per token


def nightly(fake: FakeGitHub) -> list[int]:
    return [i.number for i in fake.issues(OWNER, REPO) if i.title.startswith("Nightly build failed")]


async def lose(fake: FakeGitHub, runner: IdempotencyRunner, *, committed: bool = True,
               token: str = TOKEN, args: dict[str, Any] = ARGS) -> None:
    """The keyed create is sent; GitHub applies it (or not) and the answer never comes."""
    fake.faults.add(Match(operation="issues/create"), "timeout", after_commit=committed, delay=5)
    lost = await call(in_memory_server(fake, token, timeout=1.0, idempotency=runner,
                                       server_secret=SECRET), "github_create_issue", args)
    assert lost["code"] == "upstream_unavailable"
    fake.faults.clear()


async def retry(fake: FakeGitHub, runner: IdempotencyRunner, token: str = TOKEN,
                args: dict[str, Any] = ARGS) -> dict[str, Any]:
    return await call(in_memory_server(fake, token, idempotency=runner, server_secret=SECRET),
                      "github_create_issue", args)


async def test_n06_a_the_write_retitled_before_the_retry_is_still_found(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    runner = IdempotencyRunner(MemoryStore())
    await lose(fake, runner)
    [number] = nightly(fake)
    async with fake.client(TOKEN) as gh:  # an issue-form bot retitles it
        await gh.patch(f"/repos/{OWNER}/{REPO}/issues/{number}", json={"title": "Nightly build failed [triaged]"})
    again = await retry(fake, runner)
    assert again["issue"]["issue_number"] == number, again
    assert nightly(fake) == [number] and len(fake.calls("issues/create")) == 1


async def test_n06_b_the_key_text_says_a_restart_forgets_memory_keys() -> None:
    from github_issues_mcp import SERVER as ISSUES
    from github_milestones_mcp import SERVER as MILESTONES

    for spec, tool in ((ISSUES, "github_create_issue"), (ISSUES, "github_add_comment"),
                       (MILESTONES, "github_create_milestone")):
        schema = next(t for t in spec.tools if t.name == tool).input_schema
        text = schema["properties"]["idempotency_key"]["description"]
        assert "restart" in text and "Redis" in text, (tool, text)


async def test_n06_c_githubs_clock_behind_the_servers_is_measured_not_assumed() -> None:
    fake = FakeGitHub(clock=offset_clock(-45))
    seed(fake)
    runner = IdempotencyRunner(MemoryStore())
    await lose(fake, runner)
    again = await retry(fake, runner)
    assert again["issue"]["issue_number"] == nightly(fake)[0] and len(nightly(fake)) == 1
    assert fake.violations == []


async def test_n06_d_an_app_token_github_will_not_name_keeps_the_key_unresolved(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_installation_token(APP_TOKEN, "triage-bot", collaborator_on=f"{OWNER}/{REPO}")
    runner = IdempotencyRunner(MemoryStore())
    await lose(fake, runner, token=APP_TOKEN)
    [number] = nightly(fake)
    for _ in range(2):  # the key stays pending: never a second post
        unknown = await retry(fake, runner, APP_TOKEN)
        assert unknown["code"] == "outcome_unknown" and not unknown["temporary"], unknown
        assert [c["number"] for c in unknown["details"]["candidates"]] == [number]
    assert len(fake.calls("issues/create")) == 1
    # a create that succeeds tells the server who the token is (its author): the next lost
    # answer of this server is found
    srv = in_memory_server(fake, APP_TOKEN, timeout=1.0, idempotency=runner, server_secret=SECRET)
    other = {**ARGS, "title": "Nightly build failed again", "idempotency_key": "nightly-0002"}
    assert "code" not in await call(srv, "github_create_issue", {**other, "title": "warm-up",
                                                                 "idempotency_key": "warm-0001"})
    fake.faults.add(Match(operation="issues/create"), "timeout", after_commit=True, delay=5)
    assert (await call(srv, "github_create_issue", other))["code"] == "upstream_unavailable"
    fake.faults.clear()
    found = await call(srv, "github_create_issue", other)
    assert "code" not in found, found
    assert [n for n in nightly(fake) if n != number] == [found["issue"]["issue_number"]]


async def test_n06_e_an_identical_issue_another_call_made_is_not_adopted(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token(TOKEN_B, "octocat", collaborator_on=f"{OWNER}/{REPO}")
    runner = IdempotencyRunner(MemoryStore())  # shared, like replicas sharing Redis
    await lose(fake, runner, committed=False)
    assert nightly(fake) == []
    unkeyed = {k: v for k, v in ARGS.items() if k != "idempotency_key"}
    theirs = await retry(fake, runner, TOKEN_B, unkeyed)  # another token of the same login
    again = await retry(fake, runner)
    assert again["issue"]["issue_number"] != theirs["issue"]["issue_number"], again
    assert len(nightly(fake)) == 2  # the intended second issue exists


async def test_n09_an_earlier_calls_identical_comment_is_not_adopted(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    runner = IdempotencyRunner(MemoryStore())
    base = {"owner": OWNER, "repo": REPO, "issue_number": seeded["first"], "body": "/retest"}
    srv = in_memory_server(fake, timeout=1.0, idempotency=runner)
    first = await call(srv, "github_add_comment", {**base, "idempotency_key": "retest-0001"})
    fake.faults.add(Match(operation="issues/create-comment"), "timeout", delay=5)  # not performed
    assert (await call(srv, "github_add_comment", {**base, "idempotency_key": "retest-0002"}))[
        "code"] == "upstream_unavailable"
    fake.faults.clear()
    second = await call(srv, "github_add_comment", {**base, "idempotency_key": "retest-0002"})
    assert second["comment"]["comment_id"] != first["comment"]["comment_id"], second
    assert [c.body for c in fake.comments(OWNER, REPO, seeded["first"])].count("/retest") == 2


@pytest.mark.parametrize(("extra", "outsider", "ignored"), [
    ({"milestone": "v1.0"}, False, None),  # a title, resolved before the comparison
    ({"labels": ["BUG"]}, False, None),  # the catalog's name, as the write sent it
    ({"labels": ["bug"]}, True, ["labels"]),  # GitHub dropped them (no push access)
])
async def test_n12_a_recovered_create_reports_what_a_direct_answer_would(
        fake: FakeGitHub, seeded: dict[str, Any], extra: dict[str, Any], outsider: bool,
        ignored: list[str] | None) -> None:
    token = TOKEN
    if outsider:
        token = "ghp_outsidertoken0000000000000000000000002"
        fake.add_token(token, "outsider", scopes=("repo",), collaborator_on=())
    runner = IdempotencyRunner(MemoryStore())
    args = {**ARGS, **extra}
    await lose(fake, runner, token=token, args=args)
    for _ in ("recovered", "replayed"):
        again = await retry(fake, runner, token, args)
        assert "code" not in again, again
        assert again.get("ignored_fields") == ignored
    assert len(nightly(fake)) == 1


async def test_n15_a_key_reused_with_other_arguments_while_unresolved_says_where_to_look(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    runner = IdempotencyRunner(MemoryStore())
    await lose(fake, runner)
    reused = await retry(fake, runner, args={**ARGS, "body": "see logs (fixed typo)"})
    assert reused["code"] == "invalid_field" and "may have written" in reused["message"]
    assert reused["repair"]["tool"] == "github_search_issues"
    assert len(fake.calls("issues/create")) == 1
