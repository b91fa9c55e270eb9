"""Every error code of the contract, produced for real: fake GitHub faults → envelope via the client."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.cursors import HmacCursorCodec
from ghmcp_runtime.core.errors import ENVELOPE_SCHEMA
from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore
from tests.functional.conftest import OWNER, REPO, TOKEN, in_memory_server, payload, sent

pytestmark = pytest.mark.anyio
REPO_ARGS = {"owner": OWNER, "repo": REPO}
SECRET_TITLE = "Top secret title 7f3a"


async def call(server: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(server, cache=None) as client:
        result = await client.call_tool(name, args)
    data = payload(result)
    assert result.is_error == ("code" in data)
    if result.is_error:
        problems = list(Draft202012Validator(ENVELOPE_SCHEMA).iter_errors(data))
        assert not problems, problems[0].message  # the closed schema of the error catalog
        assert set(data) >= {"code", "message", "temporary", "retry_after_ms", "request_id",
                             "fingerprint"}
        assert data["temporary"] or data["retry_after_ms"] is None
        assert None not in [v for k, v in data.items() if k != "retry_after_ms"]
        assert SECRET_TITLE not in json.dumps(data) and TOKEN not in json.dumps(data)
    return data


def writes(fake: FakeGitHub) -> list[Any]:
    return [r for r in fake.requests if r.method != "GET"]


async def test_missing_credential(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    data = await call(in_memory_server(fake, token=None), "github_list_labels", REPO_ARGS)
    assert data["code"] == "missing_credential" and fake.requests == []


async def test_invalid_credential(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    data = await call(in_memory_server(fake, token="ghp_revoked0000000000000000000000000000"),
                      "github_list_labels", REPO_ARGS)
    assert data["code"] == "invalid_credential" and data["temporary"] is False


async def test_insufficient_scope_names_the_required_scopes(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.add_token("ghp_readonly00000000000000000000000000000", "octocat", scopes=("read:org",))
    # scopes unread: GitHub's refusal (read, the tool would not be listed: test_token_scopes.py)
    server = in_memory_server(fake, token="ghp_readonly00000000000000000000000000000", token_scopes=False)
    data = await call(server, "github_create_issue", {**REPO_ARGS, "title": SECRET_TITLE})
    assert data["code"] == "insufficient_scope"
    assert "repo" in data["details"]["required_scopes"]


async def test_primary_rate_limit_says_when_to_retry(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.set_rate_limit(TOKEN, limit=5000, remaining=0)
    data = await call(in_memory_server(fake), "github_list_labels", REPO_ARGS)
    assert data["code"] == "rate_limited" and data["temporary"] is True
    assert data["retry_after_ms"] > 0 and data["rate_limit_remaining"] == 0
    assert data["repair"] == {"next_step": "retry_after_wait", "tool": "github_list_labels",
                              "arguments": REPO_ARGS}


async def test_secondary_rate_limit_uses_retry_after(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.secondary_rate_limit("issues/create", retry_after=30)
    data = await call(in_memory_server(fake), "github_create_issue", {**REPO_ARGS, "title": SECRET_TITLE})
    assert data["code"] == "rate_limited" and data["retry_after_ms"] == 30_000
    assert "repair" not in data  # the title is free-form: a retry repair would echo it
    assert len(fake.issues(OWNER, REPO, pull_requests=False)) == 3


async def test_success_payload_reports_a_low_rate_limit(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.set_rate_limit(TOKEN, limit=5000, remaining=100)
    data = await call(in_memory_server(fake), "github_list_labels", REPO_ARGS)
    assert data["rate_limit_remaining"] == 99


@pytest.mark.parametrize(("tool", "args", "code"), [
    ("github_get_issue", {"owner": OWNER, "repo": "nope", "issue_number": 1}, "repo_not_found"),
    ("github_get_issue", {**REPO_ARGS, "issue_number": 404}, "issue_not_found"),
    ("github_list_labels", {"owner": "ghost", "repo": "nothing"}, "repo_not_found"),
    ("github_add_comment", {**REPO_ARGS, "issue_number": 404, "body": "x"}, "issue_not_found"),
])
async def test_not_found_is_told_apart(fake: FakeGitHub, seeded: dict[str, Any], tool: str,
                                       args: dict[str, Any], code: str) -> None:
    data = await call(in_memory_server(fake), tool, args)
    assert data["code"] == code


async def test_a_deleted_issue_is_gone(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.delete_issue(OWNER, REPO, seeded["first"])
    data = await call(in_memory_server(fake), "github_get_issue", {**REPO_ARGS, "issue_number": seeded["first"]})
    assert data["code"] == "issue_not_found" and "deleted" in data["details"]["reason"]


async def test_unknown_milestone(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    data = await call(in_memory_server(fake), "github_create_issue",
                      {**REPO_ARGS, "title": SECRET_TITLE, "milestone": 999})
    assert data["code"] == "milestone_not_found" and data["details"]["field"] == "milestone"


async def test_unknown_labels_on_update_change_nothing(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    data = await call(in_memory_server(fake), "github_update_issue", {
        **REPO_ARGS, "issue_number": seeded["first"], "title": SECRET_TITLE,
        "add_labels": ["bug", "secret-label-name"]})
    assert data["code"] == "label_not_found" and data["details"]["field"] == "add_labels"
    assert "add_labels[1]" in data["details"]["reason"] and "secret-label-name" not in json.dumps(data)
    assert writes(fake) == []


async def test_locked_issue_refuses_outsider_comments(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    number = fake.add_issue(OWNER, REPO, "Heated", locked=True, lock_reason="too heated")
    fake.add_token("ghp_outsider000000000000000000000000000000", "jane-doe", collaborator_on=())
    server = in_memory_server(fake, token="ghp_outsider000000000000000000000000000000")
    data = await call(server, "github_add_comment", {**REPO_ARGS, "issue_number": number, "body": "hi"})
    assert data["code"] == "issue_locked"


async def test_upstream_conflict_status(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("issues/update", "status", status=409)
    data = await call(in_memory_server(fake), "github_update_issue",
                      {**REPO_ARGS, "issue_number": seeded["first"], "state": "closed"})
    assert data["code"] == "conflict"


async def test_validation_errors_from_github_name_our_parameter(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    data = await call(in_memory_server(fake), "github_create_issue",
                      {**REPO_ARGS, "title": SECRET_TITLE, "assignee_logins": ["jane-doe"]})
    assert data["code"] == "invalid_field" and data["details"]["field"] == "assignee_logins"
    assert "jane-doe" not in json.dumps(data)


@pytest.mark.parametrize(("args", "field"), [
    ({**REPO_ARGS, "issue_number": 1, "surprise": True}, "surprise"),
    ({**REPO_ARGS, "issue_number": "1"}, "issue_number"),
    ({**REPO_ARGS, "issue_number": 0}, "issue_number"),
    ({"owner": "bad owner!", "repo": REPO, "issue_number": 1}, "owner"),
    ({"owner": OWNER, "repo": "..", "issue_number": 1}, "repo"),
    ({**REPO_ARGS, "issue_number": 1, "detail": "everything"}, "detail"),
])
async def test_arguments_are_validated_before_any_upstream_call(
    fake: FakeGitHub, seeded: dict[str, Any], args: dict[str, Any], field: str
) -> None:
    data = await call(in_memory_server(fake), "github_get_issue", args)
    assert data["code"] == "invalid_field" and data["details"]["field"] == field
    assert sent(fake) == []


async def test_a_pattern_kept_from_the_model_is_still_checked(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    """owner, repo and logins publish no pattern (advertise_pattern: false); the server refuses
    any other form before a request, naming the parameter and the pattern it must match."""
    server = in_memory_server(fake)
    async with Client(server, cache=None) as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    update = schemas["github_update_issue"]["properties"]
    assert "pattern" not in update["owner"] and "pattern" not in update["add_assignees"]["items"]
    data = await call(server, "github_update_issue", {**REPO_ARGS, "issue_number": 1,
                                                      "add_assignees": ["octocat", "bad login!"]})
    assert data["code"] == "invalid_field"
    assert data["details"] == {"field": "add_assignees",
                               "reason": "item 1 must match the pattern ^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$"}
    assert sent(fake) == []


def tampered_cursors(cursor: str) -> list[str]:
    """The cursor with its MAC's first character changed (all six bits count, unlike the last
    character's, whose low bits are padding), and with its payload's state changed under the
    original MAC: each differs from the cursor whatever it holds."""
    payload, mac = cursor.split(".")
    flipped = ("B" if mac[0] == "A" else "A") + mac[1:]
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["s"] = {**body["s"], "forged": True}
    edited = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    forged = [f"{payload}.{flipped}", f"{edited}.{mac}"]
    assert cursor not in forged
    return forged


async def test_tampered_and_expired_cursors(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    now = [1_000_000.0]
    codec = HmacCursorCodec(b"k" * 32, clock=lambda: now[0])
    server = in_memory_server(fake, cursors=codec)
    args = {**REPO_ARGS, "issue_number": seeded["first"]}
    first = await call(server, "github_get_issue", args)
    cursor = first["comments_next_cursor"]
    for forged in tampered_cursors(cursor):
        tampered = await call(server, "github_get_issue", {**args, "comments_cursor": forged})
        assert tampered["code"] == "invalid_field" and tampered["details"]["field"] == "comments_cursor"
    other_query = await call(server, "github_get_issue",
                             {**args, "issue_number": 2, "comments_cursor": cursor})
    assert other_query["code"] == "invalid_field"
    now[0] += 16 * 60
    expired = await call(server, "github_get_issue", {**args, "comments_cursor": cursor})
    assert expired["code"] == "cursor_expired"
    assert expired["repair"] == {"next_step": expired["repair"]["next_step"], "tool": "github_get_issue",
                                 "arguments": args}


async def test_a_cursor_is_bound_to_the_caller(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    codec = HmacCursorCodec(b"k" * 32)
    args = {**REPO_ARGS, "issue_number": seeded["first"]}
    mine = await call(in_memory_server(fake, cursors=codec), "github_get_issue", args)
    fake.add_token("ghp_someoneelse0000000000000000000000000000", "hubot")
    theirs = await call(in_memory_server(fake, token="ghp_someoneelse0000000000000000000000000000",
                                         cursors=codec), "github_get_issue",
                        {**args, "comments_cursor": mine["comments_next_cursor"]})
    assert theirs["code"] == "invalid_field"


@pytest.mark.parametrize("kind", ["status", "malformed_json", "html", "reset", "timeout"])
async def test_transient_read_failures_are_retried(fake: FakeGitHub, seeded: dict[str, Any], kind: str) -> None:
    fake.faults.add("issues/list-labels-for-repo", kind, status=502 if kind == "status" else None,
                    delay=2.0 if kind == "timeout" else None)
    data = await call(in_memory_server(fake, timeout=0.5), "github_list_labels", REPO_ARGS)
    assert "code" not in data and len(data["labels"]) == 5
    assert len(fake.calls("issues/list-labels-for-repo")) == 2


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_persistent_upstream_failure_is_temporary(fake: FakeGitHub, seeded: dict[str, Any],
                                                        status: int) -> None:
    fake.faults.add("issues/list-labels-for-repo", "status", status=status, times=None)
    data = await call(in_memory_server(fake), "github_list_labels", REPO_ARGS)
    assert data["code"] == "upstream_unavailable" and data["temporary"] is True
    assert data["retry_after_ms"] is not None


async def test_writes_are_never_retried_blindly(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    fake.faults.add("issues/create", "status", status=502)
    data = await call(in_memory_server(fake), "github_create_issue", {**REPO_ARGS, "title": SECRET_TITLE})
    assert data["code"] == "upstream_unavailable"
    assert len(fake.calls("issues/create")) == 1


@pytest.mark.parametrize(("tool", "op", "extra"), [
    ("github_create_issue", "issues/create", {"title": SECRET_TITLE, "body": "b"}),
    ("github_add_comment", "issues/create-comment", {"issue_number": 1, "body": SECRET_TITLE}),
])
async def test_idempotency_key_survives_a_lost_response(
    fake: FakeGitHub, seeded: dict[str, Any], tool: str, op: str, extra: dict[str, Any]
) -> None:
    store = IdempotencyRunner(MemoryStore())
    server = in_memory_server(fake, timeout=0.5, idempotency=store)
    args = {**REPO_ARGS, **extra, "idempotency_key": "retry-safe-0001"}
    fake.faults.add(op, "timeout", after_commit=True, delay=2.0)
    lost = await call(server, tool, args)
    assert lost["code"] == "upstream_unavailable" and lost["temporary"] is True
    first = await call(server, tool, args)
    again = await call(server, tool, args)
    assert "code" not in first
    assert {k: v for k, v in first.items() if k != "request_id"} == \
        {k: v for k, v in again.items() if k != "request_id"}
    assert len(fake.calls(op)) == 1
    if tool == "github_create_issue":  # stored exactly as sent: nothing appended to the user's text
        stored = next(i for i in fake.issues(OWNER, REPO) if i.number == first["issue"]["issue_number"])
        assert (stored.title, stored.body) == (extra["title"], extra["body"])
    else:
        assert fake.comments(OWNER, REPO, 1)[-1].body == extra["body"]
    changed = await call(server, tool, {**args, "body": "different"})
    assert changed["code"] == "invalid_field" and changed["details"]["field"] == "idempotency_key"


async def test_the_token_never_reaches_the_logs(fake: FakeGitHub, seeded: dict[str, Any],
                                                capfd: pytest.CaptureFixture[str]) -> None:
    fake.faults.add("issues/list-labels-for-repo", "status", status=500, times=None)
    await call(in_memory_server(fake), "github_list_labels", REPO_ARGS)
    await call(in_memory_server(fake, token="ghp_revoked0000000000000000000000000000"),
               "github_list_labels", REPO_ARGS)
    out, err = capfd.readouterr()
    assert TOKEN not in out + err and "ghp_revoked" not in out + err
    assert err.strip() and all(json.loads(line) for line in err.strip().splitlines())


async def test_a_lock_reason_while_unlocking_is_refused_before_any_request(
        fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake), cache=None) as client:
        before = len(fake.timeline)  # the token's scopes, read at start
        result = await client.call_tool("github_update_issue", {
            "owner": OWNER, "repo": REPO, "issue_number": seeded["first"], "locked": False,
            "lock_reason": "spam"})
    data = payload(result)
    assert result.is_error and data["code"] == "invalid_field"
    assert data["details"] == {"field": "locked", "reason": "lock_reason needs locked true"}
    assert len(fake.timeline) == before  # refused before GitHub was asked anything
