"""Milestones: list (state, sort, direction, paging), get, create, update, delete, due dates,
permissions, seeding and faults. The `fake` fixture fails any test that leaves a contract violation."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest
from fake_support import NO_SCOPE, OUTSIDER, OWNER, REPO, take_violations

from fakegithub import FakeClock, FakeGitHub
from fakegithub.clock import due_on, iso, pacific_offset

pytestmark = pytest.mark.anyio
R = f"/repos/{OWNER}/{REPO}"
MS = f"{R}/milestones"


async def titles(gh: httpx.AsyncClient, **params: Any) -> list[str]:
    response = await gh.get(MS, params=params)
    assert response.status_code == 200, response.text
    return [m["title"] for m in response.json()]


# get and counts ------------------------------------------------------------------------------


async def test_get_counts_issues_and_pull_requests_of_the_milestone(
    fake: FakeGitHub, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    n = fake.add_milestone(OWNER, REPO, "v3.0", description="big one", due_on="2024-07-15")
    fake.add_issue(OWNER, REPO, "open issue", milestone=n)
    fake.add_issue(OWNER, REPO, "closed issue", milestone=n, state="closed")
    fake.add_pull_request(OWNER, REPO, "open PR", milestone=n)
    fake.add_pull_request(OWNER, REPO, "merged PR", milestone=n, merged=True)
    gone = fake.add_issue(OWNER, REPO, "deleted issue", milestone=n)
    fake.delete_issue(OWNER, REPO, gone)
    fake.add_issue(OWNER, REPO, "elsewhere", milestone=seeded["milestone"])

    got = await gh.get(f"{MS}/{n}")
    assert got.status_code == 200
    body = got.json()
    assert (body["open_issues"], body["closed_issues"]) == (2, 2)
    assert body["number"] == n and body["title"] == "v3.0" and body["description"] == "big one"
    assert body["state"] == "open" and body["closed_at"] is None
    assert body["due_on"] == "2024-07-15T07:00:00Z"
    assert body["url"] == f"http://fake-github.test{MS}/{n}"
    assert body["labels_url"] == f"http://fake-github.test{MS}/{n}/labels"
    assert body["creator"]["login"] == OWNER


async def test_unknown_milestone_is_404_and_a_bad_number_is_a_spec_error(
    fake: FakeGitHub, gh: httpx.AsyncClient
) -> None:
    missing = await gh.get(f"{MS}/999")
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
    for method in ("PATCH", "DELETE"):
        response = await gh.request(method, f"{MS}/999", json={} if method == "PATCH" else None)
        assert response.status_code == 404, method
    assert (await gh.get(f"/repos/{OWNER}/nothing/milestones/1")).status_code == 404
    assert fake.violations == []
    bad = await gh.get(f"{MS}/abc")
    assert bad.status_code == 422
    assert any("milestone_number" in v for v in take_violations(fake))


# list: state, sort, direction, paging ------------------------------------------------------------


@pytest.fixture
def planned(fake: FakeGitHub, seeded: dict[str, int]) -> dict[str, int]:
    """Besides the seeded open `v1.0` (due 2024-06-01 00:00Z = May 31 Pacific, 1 open issue):"""
    made = {
        "v0.9": fake.add_milestone(OWNER, REPO, "v0.9", state="closed", due_on="2024-01-10"),
        "v2.0": fake.add_milestone(OWNER, REPO, "v2.0", due_on="2024-12-01"),
        "v1.5": fake.add_milestone(OWNER, REPO, "v1.5", due_on="2024-08-01"),
        "someday": fake.add_milestone(OWNER, REPO, "someday"),
    }
    for state in ("closed", "closed", "open"):  # v1.5: 2/3 complete
        fake.add_issue(OWNER, REPO, f"v1.5 {state}", milestone=made["v1.5"], state=state)
    fake.add_issue(OWNER, REPO, "v2.0 done", milestone=made["v2.0"], state="closed")  # 100 %
    return made


async def test_list_state_filter_defaults_to_open(gh: httpx.AsyncClient,
                                                  planned: dict[str, int]) -> None:
    assert await titles(gh) == ["v1.0", "v1.5", "v2.0", "someday"]
    assert await titles(gh, state="open") == await titles(gh)
    assert await titles(gh, state="closed") == ["v0.9"]
    assert await titles(gh, state="all") == ["v0.9", "v1.0", "v1.5", "v2.0", "someday"]


async def test_list_sorts_by_due_on_or_completeness_ascending_by_default(
    gh: httpx.AsyncClient, planned: dict[str, int]
) -> None:
    assert await titles(gh, sort="due_on", direction="asc") == await titles(gh)
    assert await titles(gh, direction="desc") == ["someday", "v2.0", "v1.5", "v1.0"]
    # completeness = closed / (open + closed); none of v1.0's one issue is closed, someday has none
    assert await titles(gh, sort="completeness") == ["v1.0", "someday", "v1.5", "v2.0"]
    assert await titles(gh, sort="completeness", direction="desc") == [
        "v2.0", "v1.5", "someday", "v1.0"]


async def test_list_rejects_values_outside_the_spec_enums(fake: FakeGitHub,
                                                          gh: httpx.AsyncClient) -> None:
    for params in ({"state": "bogus"}, {"sort": "title"}, {"direction": "up"}):
        assert (await gh.get(MS, params=params)).status_code == 422, params
        assert take_violations(fake), params


async def test_list_pages_with_link_headers(fake: FakeGitHub, gh: httpx.AsyncClient,
                                            seeded: dict[str, int]) -> None:
    for i in range(6):
        fake.add_milestone(OWNER, REPO, f"sprint {i}", due_on=date(2025, 1, 1) + timedelta(weeks=i))
    first = await gh.get(MS, params={"per_page": 3, "state": "all"})
    base = f"http://fake-github.test{MS}"
    assert first.headers["link"] == (f'<{base}?per_page=3&state=all&page=2>; rel="next", '
                                     f'<{base}?per_page=3&state=all&page=3>; rel="last"')
    seen: list[str] = [m["title"] for m in first.json()]
    url: str | None = first.links["next"]["url"]
    while url:
        page = await gh.get(url)
        seen += [m["title"] for m in page.json()]
        url = page.links.get("next", {}).get("url")
    assert seen == ["v1.0", *(f"sprint {i}" for i in range(6))]
    beyond = await gh.get(MS, params={"per_page": 3, "page": 9})
    assert beyond.json() == [] and "prev" in beyond.links
    assert "link" not in (await gh.get(MS)).headers


# create ------------------------------------------------------------------------------------------


async def test_create_returns_201_with_location_and_github_fields(
    fake: FakeGitHub, clock: FakeClock, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    clock.advance(minutes=1)  # past the seeding stamps
    created = await gh.post(MS, json={"title": "v2.0", "description": "Tracking 2.0",
                                      "due_on": "2024-10-09T23:39:01Z"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert created.headers["location"] == body["url"] == f"http://fake-github.test{MS}/2"
    assert body["number"] == 2 and body["state"] == "open" and body["closed_at"] is None
    assert body["title"] == "v2.0" and body["description"] == "Tracking 2.0"
    assert body["due_on"] == "2024-10-09T07:00:00Z"  # 16:39 PDT on Oct 9 -> that day
    assert body["creator"]["login"] == "octocat"  # the token's user
    assert body["created_at"] == body["updated_at"] == iso(clock())
    assert (body["open_issues"], body["closed_issues"]) == (0, 0)

    bare = await gh.post(MS, json={"title": "no extras"})
    assert bare.status_code == 201
    assert (bare.json()["description"], bare.json()["due_on"]) == (None, None)

    closed = await gh.post(MS, json={"title": "done already", "state": "closed"})
    assert closed.json()["state"] == "closed" and closed.json()["closed_at"] is not None
    assert [m.title for m in fake.milestones(OWNER, REPO)] == [
        "v1.0", "v2.0", "no extras", "done already"]


async def test_duplicate_title_is_422_already_exists(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                     seeded: dict[str, int]) -> None:
    for title in ("v1.0", "V1.0"):
        dup = await gh.post(MS, json={"title": title})
        assert dup.status_code == 422, title
        assert dup.json()["message"] == "Validation Failed"
        # GitHub's own answer carries no `value`
        assert dup.json()["errors"] == [{"resource": "Milestone", "field": "title",
                                         "code": "already_exists"}]
    assert len(fake.milestones(OWNER, REPO)) == 1


async def test_missing_or_blank_title_is_rejected(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                  seeded: dict[str, int]) -> None:
    blank = await gh.post(MS, json={"title": "  "})
    assert blank.status_code == 422
    assert blank.json()["errors"] == [{"resource": "Milestone", "field": "title",
                                       "code": "missing_field"}]
    assert fake.violations == []
    absent = await gh.post(MS, json={"description": "no title"})
    assert absent.status_code == 422 and "'title' is a required property" in absent.json()["message"]
    assert take_violations(fake)
    assert len(fake.milestones(OWNER, REPO)) == 1


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("2024-06-01T00:00:00Z", "2024-05-31T07:00:00Z"),  # 17:00 PDT the day before
        ("2024-06-01T07:00:00Z", "2024-06-01T07:00:00Z"),  # midnight PDT
        ("2024-06-01T23:59:59Z", "2024-06-01T07:00:00Z"),
        ("2024-12-01T12:00:00Z", "2024-12-01T08:00:00Z"),  # PST: 08:00Z
        ("2024-12-01T12:00:00+09:00", "2024-11-30T08:00:00Z"),  # an offset is honoured
        ("2020-09-24T06:59:00Z", "2020-09-23T07:00:00Z"),  # cases reported by API users
        ("2022-11-14T07:00:00Z", "2022-11-13T08:00:00Z"),
        ("2024-03-10T12:00:00Z", "2024-03-10T08:00:00Z"),  # DST starts that day: midnight is PST
        ("2024-11-03T12:00:00Z", "2024-11-03T07:00:00Z"),  # DST ends that day: midnight is PDT
    ],
)
async def test_due_on_keeps_the_pacific_day_at_midnight_pacific(
    gh: httpx.AsyncClient, seeded: dict[str, int], sent: str, stored: str
) -> None:
    created = await gh.post(MS, json={"title": f"due {sent}", "due_on": sent})
    assert created.status_code == 201 and created.json()["due_on"] == stored


async def test_due_on_must_be_a_date_time(fake: FakeGitHub, gh: httpx.AsyncClient,
                                          seeded: dict[str, int]) -> None:
    for value in ("next week", "2024-13-01T00:00:00Z"):
        response = await gh.post(MS, json={"title": f"bad {value}", "due_on": value})
        assert response.status_code == 422, value
        assert take_violations(fake), value


def test_pacific_offset_follows_us_dst_rules() -> None:
    def offset(text: str) -> float:
        when = datetime.fromisoformat(text).replace(tzinfo=UTC)
        return pacific_offset(when).total_seconds() / 3600

    assert [offset(t) for t in ("2024-03-10T09:59:59", "2024-03-10T10:00:00",
                                "2024-11-03T08:59:59", "2024-11-03T09:00:00")] == [-8, -7, -7, -8]
    assert [offset(t) for t in ("2006-04-02T09:59:59", "2006-04-02T10:00:00",  # pre-2007 rules
                                "2006-10-29T08:59:59", "2006-10-29T09:00:00")] == [-8, -7, -7, -8]
    assert iso(due_on(date(2024, 2, 29))) == "2024-02-29T08:00:00Z"
    assert iso(due_on("2024-07-04")) == "2024-07-04T07:00:00Z"


# update ----------------------------------------------------------------------------------------


async def test_update_is_partial_and_bumps_updated_at_only_on_change(
    fake: FakeGitHub, clock: FakeClock, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    url = f"{MS}/{seeded['milestone']}"
    before = (await gh.get(url)).json()
    clock.advance(minutes=5)
    same = await gh.patch(url, json={"title": "v1.0"})
    assert same.status_code == 200 and same.json() == before

    renamed = (await gh.patch(url, json={"title": "v1.0 final"})).json()
    assert renamed["title"] == "v1.0 final" and renamed["updated_at"] == iso(clock())
    for key in ("description", "due_on", "state", "created_at", "number", "creator"):
        assert renamed[key] == before[key], key

    clock.advance(minutes=5)
    edited = (await gh.patch(url, json={"description": "Ship it", "due_on": "2024-09-01T18:00:00Z"})).json()
    assert (edited["description"], edited["due_on"]) == ("Ship it", "2024-09-01T07:00:00Z")
    assert edited["title"] == "v1.0 final" and edited["updated_at"] == iso(clock())
    assert (await gh.patch(url)).json() == edited  # no body: nothing changes


async def test_closing_sets_closed_at_and_reopening_clears_it(
    fake: FakeGitHub, clock: FakeClock, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    url = f"{MS}/{seeded['milestone']}"
    clock.advance(days=1)
    closed = (await gh.patch(url, json={"state": "closed"})).json()
    assert closed["state"] == "closed" and closed["closed_at"] == iso(clock()) == closed["updated_at"]
    clock.advance(days=1)
    again = (await gh.patch(url, json={"state": "closed", "description": "x"})).json()
    assert again["closed_at"] == closed["closed_at"]  # closing a closed milestone keeps the time
    assert await titles(gh, state="closed") == ["v1.0"] and await titles(gh) == []
    reopened = (await gh.patch(url, json={"state": "open"})).json()
    assert reopened["state"] == "open" and reopened["closed_at"] is None


async def test_update_rename_onto_another_title_is_422(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                       seeded: dict[str, int]) -> None:
    other = fake.add_milestone(OWNER, REPO, "v2.0")
    clash = await gh.patch(f"{MS}/{other}", json={"title": "V1.0"})
    assert clash.status_code == 422
    assert clash.json()["errors"] == [{"resource": "Milestone", "field": "title",
                                       "code": "already_exists"}]
    assert fake.milestones(OWNER, REPO)[1].title == "v2.0"
    case_only = await gh.patch(f"{MS}/{seeded['milestone']}", json={"title": "V1.0"})
    assert case_only.status_code == 200 and case_only.json()["title"] == "V1.0"


async def test_clearing_due_on_with_null_is_a_spec_quirk(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                         seeded: dict[str, int]) -> None:
    # The schema types due_on (and description) as non-nullable strings, so the fake refuses
    # null until an override file patches the spec; the handler itself would clear the date.
    response = await gh.patch(f"{MS}/{seeded['milestone']}", json={"due_on": None})
    assert response.status_code == 422
    assert any("due_on" in v for v in take_violations(fake))


# delete ----------------------------------------------------------------------------------------


async def test_delete_removes_the_milestone_from_its_issues(
    fake: FakeGitHub, clock: FakeClock, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    n = seeded["milestone"]
    pr = fake.add_pull_request(OWNER, REPO, "PR in v1.0", milestone=n)
    stamps = {i: fake.get_issue(OWNER, REPO, i).updated_at for i in (seeded["first"], pr)}
    clock.advance(hours=1)
    assert (await gh.delete(f"{MS}/{n}")).status_code == 204
    assert (await gh.get(f"{MS}/{n}")).status_code == 404
    assert (await gh.delete(f"{MS}/{n}")).status_code == 404
    for number, stamp in stamps.items():
        issue = (await gh.get(f"{R}/issues/{number}")).json()
        assert issue["milestone"] is None
        assert fake.get_issue(OWNER, REPO, number).updated_at == stamp
    assert (await gh.get(f"{R}/issues", params={"milestone": "*", "state": "all"})).json() == []
    refused = await gh.post(f"{R}/issues", json={"title": "x", "milestone": n})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "milestone"
    recreated = await gh.post(MS, json={"title": "v1.0"})
    assert recreated.status_code == 201 and recreated.json()["number"] == n + 1  # never reused


# permissions -------------------------------------------------------------------------------------


async def test_writes_need_push_access_reads_do_not(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                    seeded: dict[str, int]) -> None:
    url = f"{MS}/{seeded['milestone']}"
    async with fake.client(OUTSIDER) as outsider:
        assert (await outsider.get(MS)).status_code == 200
        assert (await outsider.get(url)).status_code == 200
        for method, target, payload in (("POST", MS, {"title": "mine"}),
                                        ("PATCH", url, {"title": "mine"}),
                                        ("DELETE", url, None)):
            response = await outsider.request(method, target, json=payload)
            assert response.status_code == 403, method
            assert response.json()["message"] == "Must have push access to this repository."
    async with fake.client(NO_SCOPE) as unscoped:
        response = await unscoped.post(MS, json={"title": "mine"})
        assert response.status_code == 403
        assert response.json()["message"] == "Resource not accessible by personal access token"
    assert [m.title for m in fake.milestones(OWNER, REPO)] == ["v1.0"]

    fake.add_repo(OWNER, "secret", private=True)
    fake.add_milestone(OWNER, "secret", "hidden")
    async with fake.client(OUTSIDER) as outsider:
        assert (await outsider.get(f"/repos/{OWNER}/secret/milestones/1")).status_code == 404
        assert (await outsider.post(f"/repos/{OWNER}/secret/milestones",
                                    json={"title": "x"})).status_code == 404


# seeding and faults ----------------------------------------------------------------------------


async def test_seed_helper_takes_description_due_on_state_and_creator(
    fake: FakeGitHub, gh: httpx.AsyncClient, seeded: dict[str, int]
) -> None:
    n = fake.add_milestone(OWNER, REPO, "seeded", description="from a test", state="closed",
                           due_on=date(2024, 12, 24), creator="hubot")
    body = (await gh.get(f"{MS}/{n}")).json()
    assert (body["description"], body["state"], body["due_on"], body["creator"]["login"]) == (
        "from a test", "closed", "2024-12-24T08:00:00Z", "hubot")
    assert body["closed_at"] == body["created_at"]
    remote = await gh.post("/_fake/call/add_milestone",
                           json={"owner": OWNER, "repo": REPO, "title": "remote",
                                 "description": "over HTTP", "due_on": "2025-02-03"})
    assert remote.status_code == 200
    got = (await gh.get(f"{MS}/{remote.json()['result']}")).json()
    assert (got["title"], got["due_on"]) == ("remote", "2025-02-03T08:00:00Z")
    bad = await gh.post("/_fake/call/add_milestone",
                        json={"owner": OWNER, "repo": REPO, "title": "x", "due_on": "soon"})
    assert bad.status_code == 400


async def test_faults_apply_to_milestone_routes(fake: FakeGitHub, gh: httpx.AsyncClient,
                                                seeded: dict[str, int]) -> None:
    fake.faults.add("issues/create-milestone", "status", status=502)
    failed = await gh.post(MS, json={"title": "v2.0"})
    assert failed.status_code == 502 and len(fake.milestones(OWNER, REPO)) == 1
    fake.faults.add("issues/create-milestone", "status", status=502, after_commit=True)
    lost = await gh.post(MS, json={"title": "v2.0"})
    assert lost.status_code == 502 and len(fake.milestones(OWNER, REPO)) == 2  # written, then failed
    fake.faults.add("DELETE /milestones/\\d+$", "status", status=503)
    assert (await gh.delete(f"{MS}/1")).status_code == 503
    assert len(fake.milestones(OWNER, REPO)) == 2
    fake.faults.add("issues/get-milestone", "malformed_json")
    with pytest.raises(ValueError):
        (await gh.get(f"{MS}/1")).json()
    assert [r.operation_id for r in fake.calls()][-4:] == [
        "issues/create-milestone", "issues/create-milestone", "issues/delete-milestone",
        "issues/get-milestone"]
