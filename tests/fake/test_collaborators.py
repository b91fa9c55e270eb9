"""repos/get-collaborator-permission-level: base roles, who may ask, unknown users, private
repositories; issues/add-assignees and issues/remove-assignees (201/200 with the issue, what
cannot be applied silently ignored, as GitHub documents). The `fake` fixture fails any test that leaves a contract violation (every response
here is validated against the pinned spec)."""

from __future__ import annotations

import httpx
import pytest
from fake_support import OUTSIDER, OWNER, REPO, TOKEN

from fakegithub import FakeGitHub

pytestmark = pytest.mark.anyio


def permission_url(login: str, owner: str = OWNER, repo: str = REPO) -> str:
    return f"/repos/{owner}/{repo}/collaborators/{login}/permission"


@pytest.mark.parametrize(("login", "permission"), [
    ("octo-org", "admin"),  # the owner
    ("hubot", "write"),  # a collaborator
    ("reader", "read"),  # a read-only collaborator
    ("jane", "read"),  # anyone can read a public repository
])
async def test_base_roles(fake: FakeGitHub, gh: httpx.AsyncClient, login: str, permission: str) -> None:
    fake.add_collaborator(OWNER, REPO, "reader", permission="read")
    response = await gh.get(permission_url(login))
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["permission"], body["role_name"], body["user"]["login"]) == (permission, permission, login)
    assert body["user"]["permissions"]["push"] is (permission in ("admin", "write"))


async def test_outsiders_have_no_role_on_a_private_repository(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    fake.add_repo(OWNER, "secret", private=True)
    fake.grant("octocat", f"{OWNER}/secret")
    async with fake.client(TOKEN) as gh:
        response = await gh.get(permission_url("jane", repo="secret"))
    assert response.json()["permission"] == "none"


async def test_only_callers_with_push_access_may_ask(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    async with fake.client(OUTSIDER) as gh:
        response = await gh.get(permission_url("hubot"))
    assert response.status_code == 403
    assert response.json()["message"] == "Must have push access to view collaborator permission."


async def test_a_read_only_collaborator_cannot_push_or_ask(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    fake.add_token("ghp_reader", "reader", ("repo",), collaborator_on=())
    fake.add_collaborator(OWNER, REPO, "reader", permission="read")
    async with fake.client("ghp_reader") as gh:
        asked = await gh.get(permission_url("hubot"))
        labelled = await gh.post(f"/repos/{OWNER}/{REPO}/labels", json={"name": "x"})
        issue = await gh.get(f"/repos/{OWNER}/{REPO}/issues/{seeded['first']}")
    assert (asked.status_code, labelled.status_code) == (403, 403)
    assert issue.status_code == 200


async def test_unknown_users_are_not_found(gh: httpx.AsyncClient) -> None:
    response = await gh.get(permission_url("nobody-here"))
    assert response.status_code == 404


async def test_assignable_users_are_the_collaborators(fake: FakeGitHub, gh: httpx.AsyncClient) -> None:
    listed = await gh.get(f"/repos/{OWNER}/{REPO}/assignees", params={"per_page": 100})
    logins = [u["login"] for u in listed.json()]
    assert listed.status_code == 200 and "hubot" in logins and "jane" not in logins
    assert logins == sorted(logins, key=str.casefold)
    checks = {login: (await gh.get(f"/repos/{OWNER}/{REPO}/assignees/{login}")).status_code
              for login in ("hubot", "HUBOT", "jane", "nobody-here")}
    assert checks == {"hubot": 204, "HUBOT": 204, "jane": 404, "nobody-here": 404}


async def test_an_installation_token_acts_as_its_bot_and_cannot_read_the_user(
        fake: FakeGitHub, seeded: dict[str, int]) -> None:
    fake.add_installation_token("ghs_installationtoken000000000000000001", "triage-bot")
    async with fake.client("ghs_installationtoken000000000000000001") as bot:
        user = await bot.get("/user")
        created = await bot.post(f"/repos/{OWNER}/{REPO}/issues", json={"title": "from an app"})
    assert user.status_code == 403 and user.json()["message"] == "Resource not accessible by integration"
    assert "x-oauth-scopes" not in user.headers
    assert created.status_code == 201
    assert (created.json()["user"]["login"], created.json()["user"]["type"]) == ("triage-bot[bot]", "Bot")


async def test_every_answer_carries_the_fakes_clock_in_date(gh: httpx.AsyncClient, fake: FakeGitHub) -> None:
    from email.utils import parsedate_to_datetime

    from fakegithub import offset_clock

    fake.clock = offset_clock(-45)
    answer = await gh.get(f"/repos/{OWNER}/{REPO}")
    missing = await gh.get(f"/repos/{OWNER}/{REPO}/assignees/nobody-here")
    shown = parsedate_to_datetime(answer.headers["date"])
    assert abs((fake.state.now() - shown).total_seconds()) <= 1
    assert "date" in missing.headers


def assignees_url(number: int) -> str:
    return f"/repos/{OWNER}/{REPO}/issues/{number}/assignees"


def logins(response: httpx.Response) -> list[str]:
    return [a["login"] for a in response.json()["assignees"]]


async def test_adding_assignees_keeps_the_others_and_ignores_who_cannot_be_assigned(
        fake: FakeGitHub, gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    before = fake.get_issue(OWNER, REPO, seeded["second"]).updated_at
    added = await gh.post(assignees_url(seeded["second"]), json={"assignees": ["HUBOT", "jane", "nobody"]})
    again = await gh.post(assignees_url(seeded["second"]), json={"assignees": ["octocat", "hubot"]})
    assert (added.status_code, logins(added)) == (201, ["hubot"])  # jane is no collaborator
    assert (again.status_code, logins(again)) == (201, ["hubot", "octocat"])
    assert fake.get_issue(OWNER, REPO, seeded["second"]).updated_at != before


async def test_an_issue_takes_at_most_ten_assignees(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                    seeded: dict[str, int]) -> None:
    people = [f"dev{i:02d}" for i in range(11)]
    for login in people:
        fake.add_user(login, collaborator_on=[f"{OWNER}/{REPO}"])
    response = await gh.post(assignees_url(seeded["second"]), json={"assignees": people})
    assert logins(response) == people[:10]


async def test_removing_assignees_ignores_case_and_logins_not_assigned(
        fake: FakeGitHub, gh: httpx.AsyncClient, seeded: dict[str, int]) -> None:
    stamp = fake.get_issue(OWNER, REPO, seeded["first"]).updated_at
    missing = await gh.request("DELETE", assignees_url(seeded["first"]), json={"assignees": ["octocat"]})
    assert fake.get_issue(OWNER, REPO, seeded["first"]).updated_at == stamp  # nothing changed
    removed = await gh.request("DELETE", assignees_url(seeded["first"]), json={"assignees": ["HUBOT"]})
    assert (missing.status_code, logins(missing)) == (200, ["hubot"])
    assert (removed.status_code, logins(removed)) == (200, [])


async def test_without_push_access_assignees_are_silently_ignored(fake: FakeGitHub, seeded: dict[str, int]) -> None:
    async with fake.client(OUTSIDER) as gh:
        added = await gh.post(assignees_url(seeded["second"]), json={"assignees": ["hubot"]})
        removed = await gh.request("DELETE", assignees_url(seeded["first"]), json={"assignees": ["hubot"]})
    assert (added.status_code, logins(added)) == (201, [])
    assert (removed.status_code, logins(removed)) == (200, ["hubot"])
