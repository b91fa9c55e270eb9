"""Label lifecycle end to end: official MCP client → generated server → fake GitHub.

create → update (each field alone, rename, no field) → delete refused while an issue, or a pull
request, carries the label → forced delete → the label is gone from those items. Colors are
table-tested (every accepted spelling, every rejected form), and no error ever echoes a label name.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakegithub import FakeGitHub
from tests.functional.conftest import OWNER, REPO, in_memory_server, sent
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
# Free-form values that must never come back in an error (checked case-insensitively).
SECRET = "Secret triage 9c1e"
COLOR_MESSAGE = ("Invalid argument `color`: must be six hex digits, rrggbb or #rrggbb, in any case "
                 "(e.g. d73a4a or #D73A4A); three-digit shorthand, color names and other lengths are "
                 "refused.")
NOT_COUNTED = ("Nothing was deleted: delete_mode safe could not count the issues and pull requests "
               "carrying the label.")


def opened(fake: FakeGitHub) -> Opened:
    return Opened(in_memory_server(fake), secrets=(SECRET,))


def writes(fake: FakeGitHub, since: int = 0) -> list[Any]:
    return [r for r in fake.requests[since:] if r.method != "GET"]


def label_state(fake: FakeGitHub, name: str) -> tuple[str, str, str | None] | None:
    found = [lb for lb in fake.labels(OWNER, REPO) if lb.name.casefold() == name.casefold()]
    return (found[0].name, found[0].color, found[0].description) if found else None


# -- the lifecycle ---------------------------------------------------------------------------------


async def test_lifecycle_create_update_refuse_force_delete(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    issue, pr = seeded["first"], seeded["pr"]
    async with opened(fake) as s:
        created = await s.ok("github_create_label", {**REPO_ARGS, "name": "needs-repro",
                                                     "color": "#D93F0B", "description": "Waiting for steps"})
        assert created["label"] == {"name": "needs-repro", "color": "d93f0b", "description": "Waiting for steps"}
        assert fake.calls("issues/create-label")[-1].body == {
            "name": "needs-repro", "color": "d93f0b", "description": "Waiting for steps"}

        updated = await s.ok("github_update_label", {**REPO_ARGS, "name": "NEEDS-REPRO", "color": "00FF00"})
        assert updated["changed_fields"] == ["color"]
        renamed = await s.ok("github_update_label", {**REPO_ARGS, "name": "needs-repro", "new_name": "needs repro"})
        assert renamed["changed_fields"] == ["name"]  # the label's field, not the parameter
        assert renamed["label"] == {"name": "needs repro", "color": "00ff00", "description": "Waiting for steps"}
        gone = await s.ok("github_list_labels", {**REPO_ARGS, "name": "needs-repro"})
        assert gone == {"labels": [], "has_more": False, "request_id": gone["request_id"]}

        await s.ok("github_update_issue", {**REPO_ARGS, "issue_number": issue, "add_labels": ["needs repro"]})
        in_use = await s.error("github_delete_label", {**REPO_ARGS, "name": "needs repro"}, "label_in_use")
        assert in_use["details"]["count"] == 1 and in_use["details"]["field"] == "name"
        assert "cannot see" in in_use["message"] and in_use["temporary"] is False
        assert in_use["repair"]["tool"] == "github_search_issues"
        assert in_use["repair"]["arguments"] == {**REPO_ARGS, "state": "all"}
        assert 'delete_mode "force"' in in_use["repair"]["alternative"]
        assert fake.calls("issues/delete-label") == []
        assert label_state(fake, "needs repro") is not None

        # the search counted issues and pull requests alike: no is:issue / is:pr in the query
        q = fake.calls("search/issues-and-pull-requests")[-1].query["q"]
        assert q == f'repo:{OWNER}/{REPO} label:"needs repro"'

        fake.add_label(OWNER, REPO, "on-a-pr")
        with fake.lock:
            repo = fake.state.repo(OWNER, REPO)
            repo.issues[pr].label_ids.append(repo.find_label("on-a-pr").id)  # type: ignore[union-attr]
        pr_only = await s.error("github_delete_label", {**REPO_ARGS, "name": "on-a-pr"}, "label_in_use")
        assert pr_only["details"]["count"] == 1

        forced = await s.ok("github_delete_label", {**REPO_ARGS, "name": "needs repro", "delete_mode": "force"})
        assert forced["deleted_label"] == {"name": "needs repro", "color": "00ff00",
                                           "description": "Waiting for steps"}
        forced_pr = await s.ok("github_delete_label", {**REPO_ARGS, "name": "ON-A-PR", "delete_mode": "force"})
        assert forced_pr["deleted_label"]["name"] == "on-a-pr"
        assert len(fake.calls("issues/delete-label")) == 2

        assert label_state(fake, "needs repro") is None and label_state(fake, "on-a-pr") is None
        assert fake.label_names(OWNER, REPO, issue) == ["bug", "triage"]
        assert fake.label_names(OWNER, REPO, pr) == ["bug"]
        read = await s.ok("github_get_issue", {**REPO_ARGS, "issue_number": issue, "detail": "summary"})
        assert read["issue"]["labels"] == ["bug", "triage"]

        again = await s.error("github_delete_label", {**REPO_ARGS, "name": "needs repro", "delete_mode": "force"},
                              "label_not_found", secrets=("needs repro",))
        assert again["repair"] == {"next_step": "list_labels", "tool": "github_list_labels",
                                   "arguments": REPO_ARGS,
                                   "alternative": "pass name to github_list_labels to read one label"}


async def test_safe_delete_of_an_unused_label_counts_then_deletes(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_label(OWNER, REPO, SECRET, "123456", "unused")
    async with opened(fake) as s:
        data = await s.ok("github_delete_label", {**REPO_ARGS, "name": SECRET.upper()})
    assert data["deleted_label"] == {"name": SECRET, "color": "123456", "description": "unused"}
    assert [r.operation_id for r in sent(fake)] == [
        "issues/get-label", "search/issues-and-pull-requests", "issues/delete-label"]
    assert label_state(fake, SECRET) is None


async def test_labels_on_closed_issues_and_merged_pull_requests_count(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_label(OWNER, REPO, "archived")
    fake.add_issue(OWNER, REPO, "Long closed", labels=["archived"], state="closed", author="hubot")
    fake.add_pull_request(OWNER, REPO, "Merged", labels=["archived"], merged=True, author="hubot")
    async with opened(fake) as s:
        data = await s.error("github_delete_label", {**REPO_ARGS, "name": "archived"}, "label_in_use")
    assert data["details"]["count"] == 2
    assert "At least 2 issue(s) or pull request(s)" in data["message"]
    assert writes(fake) == []


@pytest.mark.parametrize("name", ["area/ui", "100%25 done", "needs more info", "type:bug", "🚀 launch"])
async def test_names_that_need_escaping_survive_the_whole_lifecycle(
    fake: FakeGitHub, seeded: dict[str, Any], name: str
) -> None:
    async with opened(fake) as s:
        await s.ok("github_create_label", {**REPO_ARGS, "name": name, "color": "abcdef"})
        one = await s.ok("github_list_labels", {**REPO_ARGS, "name": name})
        assert [lb["name"] for lb in one["labels"]] == [name]
        await s.ok("github_update_issue", {**REPO_ARGS, "issue_number": seeded["first"], "add_labels": [name]})
        refused = await s.error("github_delete_label", {**REPO_ARGS, "name": name}, "label_in_use",
                                secrets=(name,))
        assert refused["details"]["count"] == 1
        updated = await s.ok("github_update_label", {**REPO_ARGS, "name": name, "description": "d"})
        assert updated["changed_fields"] == ["description"]
        await s.ok("github_delete_label", {**REPO_ARGS, "name": name, "delete_mode": "force"})
    assert label_state(fake, name) is None
    assert name not in fake.label_names(OWNER, REPO, seeded["first"])


# -- update: each field alone, none, no-ops, collisions ---------------------------------------------


@pytest.mark.parametrize(
    ("change", "sent", "after"),
    [
        ({"new_name": "renamed"}, {"new_name": "renamed"}, ("renamed", "aaaaaa", "old text")),
        ({"color": "#BbBbBb"}, {"color": "bbbbbb"}, (SECRET, "bbbbbb", "old text")),
        ({"description": "new text"}, {"description": "new text"}, (SECRET, "aaaaaa", "new text")),
        ({"description": ""}, {"description": ""}, (SECRET, "aaaaaa", "")),
    ],
    ids=["new_name", "color", "description", "clear-description"],
)
async def test_update_changes_only_the_field_passed(
    fake: FakeGitHub, seeded: dict[str, Any], change: dict[str, Any], sent: dict[str, Any],
    after: tuple[str, str, str | None],
) -> None:
    fake.add_label(OWNER, REPO, SECRET, "aaaaaa", "old text")
    async with opened(fake) as s:
        data = await s.ok("github_update_label", {**REPO_ARGS, "name": SECRET, **change})
        assert data["changed_fields"] == [{"new_name": "name"}.get(k, k) for k in change]
        assert [r.body for r in writes(fake)] == [sent]
        assert label_state(fake, after[0]) == after
        before = len(fake.requests)
        repeat = await s.ok("github_update_label", {**REPO_ARGS, "name": after[0], **change})
    assert repeat["changed_fields"] == [] and writes(fake, before) == []


async def test_update_with_no_field_is_refused_before_any_call(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with opened(fake) as s:
        data = await s.error("github_update_label", {**REPO_ARGS, "name": "bug"}, "invalid_field")
    assert data["details"] == {"fields": ["new_name", "color", "description"],
                               "reason": "pass at least one of new_name, color, description"}
    assert sent(fake) == []


async def test_rename_is_a_case_change_too_and_keeps_the_label_on_its_issues(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    async with opened(fake) as s:
        data = await s.ok("github_update_label", {**REPO_ARGS, "name": "bug", "new_name": "Bug"})
    assert data["changed_fields"] == ["name"] and data["label"]["name"] == "Bug"
    assert fake.label_names(OWNER, REPO, seeded["first"]) == ["Bug", "triage"]
    assert fake.label_names(OWNER, REPO, seeded["pr"]) == ["Bug"]


async def test_rename_onto_another_label_is_label_exists_and_changes_nothing(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    fake.add_label(OWNER, REPO, SECRET)
    async with opened(fake) as s:
        data = await s.error("github_update_label",
                             {**REPO_ARGS, "name": "bug", "new_name": SECRET.lower(), "color": "ffffff"},
                             "label_exists")
    assert data["details"] == {"field": "new_name", "reason": "another label already has this name"}
    assert data["repair"]["tool"] == "github_list_labels" and data["repair"]["arguments"] == REPO_ARGS
    assert label_state(fake, "bug") == ("bug", "ededed", None)


@pytest.mark.parametrize("tool", ["github_update_label", "github_delete_label"])
async def test_a_missing_label_is_label_not_found_and_nothing_is_written(
    fake: FakeGitHub, seeded: dict[str, Any], tool: str
) -> None:
    args = {**REPO_ARGS, "name": SECRET}
    if tool == "github_update_label":
        args["color"] = "ffffff"
    async with opened(fake) as s:
        data = await s.error(tool, args, "label_not_found")
    assert data["details"] == {"field": "name", "reason": "no label of the repository has this name"}
    # safe delete counts in the same round trip as the label read (one search at most)
    assert writes(fake) == [] and len(fake.calls("search/issues-and-pull-requests")) <= 1


async def test_a_missing_repository_is_repo_not_found(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with opened(fake) as s:
        await s.error("github_delete_label", {"owner": OWNER, "repo": "nope", "name": "bug"}, "repo_not_found")
        await s.error("github_create_label", {"owner": OWNER, "repo": "nope", "name": "x"}, "repo_not_found")
    assert fake.calls("issues/delete-label") == [] and len(fake.calls("search/issues-and-pull-requests")) <= 1


# -- create ------------------------------------------------------------------------------------------


async def test_create_without_color_or_description(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with opened(fake) as s:
        data = await s.ok("github_create_label", {**REPO_ARGS, "name": "plain"})
    assert fake.calls("issues/create-label")[0].body == {"name": "plain"}
    assert data["label"] == {"name": "plain", "color": "ededed", "description": None}


async def test_create_an_existing_name_in_any_case_is_label_exists(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_label(OWNER, REPO, SECRET, "010101")
    async with opened(fake) as s:
        data = await s.error("github_create_label", {**REPO_ARGS, "name": SECRET.swapcase(), "color": "ffffff"},
                             "label_exists")
    assert data["details"]["field"] == "name" and data["temporary"] is False
    assert data["repair"]["next_step"] == "read_existing_label"
    assert label_state(fake, SECRET) == (SECRET, "010101", None)


# -- reading one label -------------------------------------------------------------------------------


async def test_list_labels_with_name_reads_one_label_or_none(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_label(OWNER, REPO, "Docs", "0075ca", "Documentation")
    async with opened(fake) as s:
        one = await s.ok("github_list_labels", {**REPO_ARGS, "name": "docs"})
        assert one["labels"] == [{"name": "Docs", "color": "0075ca", "description": "Documentation"}]
        assert one["has_more"] is False and "next_cursor" not in one
        none = await s.ok("github_list_labels", {**REPO_ARGS, "name": SECRET})
        assert none["labels"] == []
        await s.error("github_list_labels", {"owner": OWNER, "repo": "nope", "name": "docs"}, "repo_not_found")
        before = len(fake.requests)
        both = await s.error("github_list_labels", {**REPO_ARGS, "name": SECRET, "cursor": "abc"}, "invalid_field")
    assert both["details"] == {"fields": ["name", "cursor"], "reason": "name and cursor cannot be combined"}
    assert len(fake.requests) == before


@pytest.mark.parametrize("name", [".", ".."])
@pytest.mark.parametrize("tool", ["github_list_labels", "github_create_label", "github_update_label",
                                  "github_delete_label"])
async def test_dot_segment_names_are_refused_before_any_call(
    fake: FakeGitHub, seeded: dict[str, Any], tool: str, name: str
) -> None:
    # URL normalization would turn /labels/.. into /repos/{owner}/{repo} (DELETE = the repository)
    args = {**REPO_ARGS, "name": name, "delete_mode": "force"} if tool == "github_delete_label" \
        else {**REPO_ARGS, "name": name, **({"color": "ffffff"} if tool == "github_update_label" else {})}
    async with opened(fake) as s:
        data = await s.error(tool, args, "invalid_field")
    assert data["details"]["field"] == "name" and sent(fake) == []


# -- safe delete when the count cannot be obtained ----------------------------------------------------


async def _refused_without_count(fake: FakeGitHub, name: str = "bug") -> dict[str, Any]:
    async with opened(fake) as s:
        data = await s.call("github_delete_label", {**REPO_ARGS, "name": name})
    assert "code" in data and data["message"].startswith(NOT_COUNTED), data
    assert fake.calls("issues/delete-label") == [] and label_state(fake, name) is not None
    return data


async def test_search_outage_refuses_with_a_temporary_error(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("search/issues-and-pull-requests", "status", status=502, times=None)
    data = await _refused_without_count(fake)
    assert data["code"] == "upstream_unavailable" and data["temporary"] is True
    assert "repair" not in data  # a retry repair would echo the label name


async def test_search_rate_limit_refuses_with_retry_after(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.secondary_rate_limit("search/issues-and-pull-requests", retry_after=40)
    data = await _refused_without_count(fake)
    assert data["code"] == "rate_limited" and data["retry_after_ms"] == 40_000


async def test_incomplete_search_with_zero_hits_is_not_a_zero_count(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_label(OWNER, REPO, "quiet")
    fake.faults.add("search/issues-and-pull-requests", "status", status=200,
                    body={"total_count": 0, "incomplete_results": True, "search_type": "lexical", "items": []})
    data = await _refused_without_count(fake, "quiet")
    assert data["code"] == "upstream_unavailable" and data["temporary"] is True
    assert data["details"]["reason"] == "GitHub search answered with incomplete_results"


async def test_incomplete_search_with_hits_still_refuses_as_in_use(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("search/issues-and-pull-requests", "status", status=200,
                    body={"total_count": 3, "incomplete_results": True, "search_type": "lexical", "items": []})
    async with opened(fake) as s:
        data = await s.error("github_delete_label", {**REPO_ARGS, "name": "bug"}, "label_in_use")
    assert data["details"]["count"] == 3 and writes(fake) == []


async def test_search_refusing_the_query_is_label_usage_unknown(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("search/issues-and-pull-requests", "status", status=422, body={
        "message": "Validation Failed", "documentation_url": "https://docs.github.com/rest/search",
        "errors": [{"resource": "Search", "field": "q", "code": "invalid"}]})
    data = await _refused_without_count(fake)
    assert data["code"] == "label_usage_unknown" and data["temporary"] is False
    assert data["details"] == {"reason": "GitHub search refused the counting query"}
    assert data["repair"]["tool"] == "github_search_issues"
    assert 'delete_mode "force"' in data["repair"]["alternative"]


@pytest.mark.parametrize("name", ['say "hi"', "a,b", "back\\slash"])
async def test_names_search_cannot_match_exactly_are_label_usage_unknown(
    fake: FakeGitHub, seeded: dict[str, Any], name: str
) -> None:
    fake.add_label(OWNER, REPO, name)
    data = await _refused_without_count(fake, name)
    assert data["code"] == "label_usage_unknown" and data["details"]["field"] == "name"
    assert fake.calls("search/issues-and-pull-requests") == []
    async with opened(fake) as s:
        await s.ok("github_delete_label", {**REPO_ARGS, "name": name, "delete_mode": "force"})
    assert label_state(fake, name) is None


async def test_force_does_not_count(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("search/issues-and-pull-requests", "status", status=502, times=None)
    async with opened(fake) as s:
        await s.ok("github_delete_label", {**REPO_ARGS, "name": "bug", "delete_mode": "force"})
    assert fake.calls("search/issues-and-pull-requests") == []
    assert fake.label_names(OWNER, REPO, seeded["first"]) == ["triage"]


# -- colors ---------------------------------------------------------------------------------------------

ACCEPTED = [("d73a4a", "d73a4a"), ("D73A4A", "d73a4a"), ("#d73a4a", "d73a4a"), ("#D73A4A", "d73a4a"),
            ("#D73a4A", "d73a4a"), ("000000", "000000"), ("#FFFFFF", "ffffff")]
REJECTED = {
    "empty": "",
    "hash-only": "#",
    "shorthand": "fff",
    "hash-shorthand": "#fff",
    "upper-shorthand": "ABC",
    "four-digits": "#abcd",
    "five-digits": "abcde",
    "seven-digits": "d73a4a0",
    "hash-seven-digits": "#d73a4a0",
    "eight-digits-alpha": "#d73a4aff",
    "name": "red",
    "hash-name": "#red",
    "long-name": "rebeccapurple",
    "non-hex": "gggggg",
    "hash-non-hex": "#ggg000",
    "double-hash": "##d73a4a",
    "0x-prefix": "0xd73a4a",
    "leading-space": " d73a4a",
    "trailing-space": "d73a4a ",
    "trailing-newline": "d73a4a\n",
    "inner-space": "d73 a4a",
    "rgb-function": "rgb(215,58,74)",
    "fullwidth": "\uff44\uff17\uff13\uff41\uff14\uff41",  # fullwidth "d73a4a"
    "arabic-indic-digits": "\u0660\u0661\u0662\u0663\u0664\u0665",  # \d matches these
    "hash-at-end": "d73a4a#",
}


@pytest.mark.parametrize(("given", "sent"), ACCEPTED, ids=[g for g, _ in ACCEPTED])
async def test_accepted_colors_are_sent_as_six_lowercase_digits(
    fake: FakeGitHub, seeded: dict[str, Any], given: str, sent: str
) -> None:
    async with opened(fake) as s:
        created = await s.ok("github_create_label", {**REPO_ARGS, "name": "c", "color": given})
        assert created["label"]["color"] == sent
        await s.ok("github_update_label", {**REPO_ARGS, "name": "bug", "color": given})
    assert [r.body["color"] for r in writes(fake)] == [sent, sent]
    assert label_state(fake, "bug") == ("bug", sent, None)


@pytest.mark.parametrize("color", REJECTED.values(), ids=REJECTED.keys())
@pytest.mark.parametrize("tool", ["github_create_label", "github_update_label"])
async def test_every_other_color_form_is_refused_before_any_call(
    fake: FakeGitHub, seeded: dict[str, Any], tool: str, color: str
) -> None:
    args = {**REPO_ARGS, "name": "bug", "color": color}
    async with opened(fake) as s:
        data = await s.error(tool, args, "invalid_field")
    assert data["message"] == COLOR_MESSAGE  # the same text for every input: nothing is echoed
    assert data["details"]["field"] == "color" and "rrggbb or #rrggbb" in data["details"]["reason"]
    assert "repair" not in data  # an expansion is never guessed
    assert sent(fake) == []


@pytest.mark.parametrize("color", [None, 123, ["d73a4a"]])
async def test_non_string_colors_are_refused_by_the_schema(
    fake: FakeGitHub, seeded: dict[str, Any], color: Any
) -> None:
    async with opened(fake) as s:
        data = await s.error("github_create_label", {**REPO_ARGS, "name": "x", "color": color}, "invalid_field")
    assert data["details"]["field"] == "color" and sent(fake) == []


# -- the published contract -------------------------------------------------------------------------------


async def test_annotations_differ_where_the_semantics_differ(fake: FakeGitHub) -> None:
    async with opened(fake) as s:
        hints = {name: s.tools[name]["annotations"] for name in
                 ("github_list_labels", "github_create_label", "github_update_label", "github_delete_label")}
        delete_mode = s.tools["github_delete_label"]["inputSchema"]["properties"]["delete_mode"]
    assert hints["github_list_labels"] == {"readOnlyHint": True, "openWorldHint": True}
    assert hints["github_create_label"] == {"readOnlyHint": False, "destructiveHint": False,
                                            "idempotentHint": True, "openWorldHint": True}
    assert hints["github_update_label"] == {"readOnlyHint": False, "destructiveHint": True,
                                            "idempotentHint": True, "openWorldHint": True}
    assert hints["github_delete_label"] == {"readOnlyHint": False, "destructiveHint": True,
                                            "idempotentHint": True, "openWorldHint": True}
    assert delete_mode["enum"] == ["safe", "force"] and delete_mode["default"] == "safe"
