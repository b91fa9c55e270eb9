from __future__ import annotations

import json
import re
import socket
from dataclasses import replace
from typing import Any

import anyio
import httpx
import pytest
from app_spec import CALLS, ISSUE_JSON, SPEC, FakeGitHub, issue_version
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.errors import ENVELOPE_SCHEMA, ToolError
from ghmcp_runtime.core.forges import FORGEJO, GITHUB
from ghmcp_runtime.guards.caller import caller_id, identity_key
from ghmcp_runtime.serving.app import (
    Settings,
    build_server,
    http_app,
    run,
)
from ghmcp_runtime.serving.tool_calls import error_text

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]
TOKEN = "ghp_" + "E2e" * 12
ARGS = {"owner": "octo", "repo": "hello", "issue_number": 7}
SECRET = b"app-tests-server-secret"


def server(fake: FakeGitHub, token: str | None = TOKEN) -> Any:
    upstream = ForgeUpstream(transport=httpx.MockTransport(fake))
    return build_server(SPEC, Settings(token=token, server_secret=SECRET), upstream=upstream)


def envelope_ok(env: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator(ENVELOPE_SCHEMA).validate(env)
    assert re.fullmatch(r"req_[0-9a-f]{12}", env["request_id"]) and env["fingerprint"] == "fp-demo-1"


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_and_server_info(mode: str) -> None:
    async with Client(server(FakeGitHub()), mode=mode, cache=None) as c:
        assert c.instructions == "Demo instructions."
        assert c.server_info.name == "demo-mcp" and c.server_info.version == "0.0.1"
        page = await c.list_tools()
        assert page.next_cursor is None
        wire = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools]
    assert [t["name"] for t in wire] == ["issues_get", "demo_fail"]
    get, fail = wire
    assert get["title"] == "Get an issue" and get["description"] == "Get one issue."
    assert get["inputSchema"] == SPEC.tools[0].input_schema
    assert get["outputSchema"] == SPEC.tools[0].output_schema
    assert get["annotations"] == {"readOnlyHint": True, "openWorldHint": True}
    assert get["_meta"] == {"example.com/operations": ["issues/get"]}
    assert fail["annotations"] == {"readOnlyHint": False, "openWorldHint": False,
                                   "destructiveHint": False, "idempotentHint": True}
    assert "_meta" not in fail


@pytest.mark.parametrize("mode", MODES)
async def test_success_structured_equals_text(mode: str) -> None:
    fake = FakeGitHub()
    async with Client(server(fake), mode=mode, cache=None) as c:
        res = await c.call_tool("issues_get", {**ARGS, "detail": "full"})
    assert not res.is_error
    payload = res.structured_content
    assert payload == json.loads(res.content[0].text)
    assert payload["issue"] == {"number": 7, "title": "Bug", "labels": ["bug"], "body": "text",
                                "version": issue_version(ISSUE_JSON)}
    assert re.fullmatch(r"req_[0-9a-f]{12}", payload["request_id"])
    assert "rate_limit_remaining" not in payload
    assert fake.auth == [f"Bearer {TOKEN}"]


async def test_low_rate_limit_is_reported() -> None:
    async with Client(server(FakeGitHub(remaining=499)), cache=None) as c:
        res = await c.call_tool("issues_get", ARGS)
    assert res.structured_content["rate_limit_remaining"] == 499


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("args", "field"), [
    ({**ARGS, "owner": "bad owner"}, "owner"),
    ({"owner": "octo", "repo": "hello"}, "issue_number"),
    ({**ARGS, "extra": 1}, "extra"),
    (None, "owner"),
])
async def test_validation_failure_never_calls_handler(mode: str, args: Any, field: str) -> None:
    fake = FakeGitHub()
    CALLS.clear()
    async with Client(server(fake), mode=mode, cache=None) as c:
        res = await c.call_tool("issues_get", args)
    assert res.is_error and CALLS == [] and fake.auth == []
    env = res.structured_content
    envelope_ok(env)
    assert env["code"] == "invalid_field" and env["details"]["field"] == field
    assert "bad owner" not in json.dumps(env) + res.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_tool_error_envelope(mode: str) -> None:
    async with Client(server(FakeGitHub()), mode=mode, cache=None) as c:
        res = await c.call_tool("demo_fail", {"mode": "tool_error"})
    assert res.is_error
    env = res.structured_content
    envelope_ok(env)
    assert env["code"] == "cursor_expired" and env["temporary"] is False
    assert env["retry_after_ms"] is None
    assert env["repair"] == {"next_step": "restart_without_cursor", "tool": "demo_fail",
                             "arguments": {"mode": "ok"}}
    assert res.content[0].text == ("The cursor has expired; restart the listing without it. "
                                   "Next step (restart without cursor): call demo_fail with "
                                   "repair.arguments.")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("failure", ["crash", "bad_return"])
async def test_unexpected_exception_is_internal_error(
    mode: str, failure: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async with Client(server(FakeGitHub()), mode=mode, cache=None) as c:
        res = await c.call_tool("demo_fail", {"mode": failure})
    assert res.is_error
    env = res.structured_content
    envelope_ok(env)
    assert env["code"] == "internal_error" and env["temporary"] is False
    text = res.content[0].text + json.dumps(env)
    assert "Traceback" not in text and "internal detail" not in text
    err = capsys.readouterr().err
    assert "Traceback" in err and env["request_id"] in err and "z" * 36 not in err


@pytest.mark.parametrize("mode", MODES)
async def test_upstream_error_and_unknown_tool(mode: str) -> None:
    async with Client(server(FakeGitHub()), mode=mode, cache=None) as c:
        res = await c.call_tool("issues_get", {**ARGS, "issue_number": 8})
        assert res.is_error and res.structured_content["code"] == "issue_not_found"
        with pytest.raises(MCPError) as info:
            await c.call_tool("no_such_tool", {})
    # the MCP spec's answer for an unknown tool: JSON-RPC invalid params, not a tool result
    assert info.value.error.code == INVALID_PARAMS
    assert info.value.error.message.startswith("Unknown tool: no_such_tool")


@pytest.mark.parametrize("mode", MODES)
async def test_missing_token_still_lists_and_reports_missing_credential(mode: str) -> None:
    fake = FakeGitHub()
    async with Client(server(fake, token=None), mode=mode, cache=None) as c:
        assert len((await c.list_tools()).tools) == 2
        res = await c.call_tool("issues_get", ARGS)
        ok = await c.call_tool("demo_fail", {"mode": "ok"})
    assert res.is_error and res.structured_content["code"] == "missing_credential"
    assert fake.auth == []
    assert ok.structured_content["identity"] == "anonymous"


def test_error_text() -> None:
    err = ToolError("upstream_unavailable", "GitHub is down.", temporary=True, retry_after_ms=1500)
    assert error_text(err) == "GitHub is down. Retry in about 2 s."


def test_settings_from_env() -> None:
    s = Settings.from_env({"GITHUB_TOKEN": " tok42 ", "GITHUB_API_URL": "https://ghe/api/v3",
                           "GHMCP_CURSOR_SECRET": "sec42", "GHMCP_TIMEOUT_S": "3"})
    assert (s.token, s.api_url, s.server_secret, s.timeout_s) == (
        "tok42", "https://ghe/api/v3", b"sec42", 3.0)
    assert "tok42" not in repr(s) and "sec42" not in repr(s)
    both = Settings.from_env({"GHMCP_SERVER_SECRET": "new", "GHMCP_CURSOR_SECRET": "old"})
    assert both.server_secret == b"new"
    d = Settings.from_env({})
    assert d.token is None and d.api_url is None and d.server_secret is None
    assert d.api_url_for(GITHUB) == "https://api.github.com"
    with pytest.raises(ValueError, match="GHMCP_TIMEOUT_S"):
        Settings.from_env({"GHMCP_TIMEOUT_S": "soon"})


def test_settings_accept_the_old_github_token_name() -> None:
    # scripts written before the forge profiles (the correctness-2 review harness) pass github_token=
    old = Settings(github_token="tok-old", server_secret=b"s")
    assert old.token == "tok-old" and "tok-old" not in repr(old)
    assert replace(old, timeout_s=1.0).token == "tok-old" and old.with_secret().token == "tok-old"
    with pytest.raises(TypeError, match="not both"):
        Settings(token="a", github_token="b")


def test_forgejo_settings_read_its_own_variables_and_have_no_default_instance() -> None:
    env = {"GITHUB_TOKEN": "gh", "GITHUB_API_URL": "https://api.github.com", "FORGEJO_TOKEN": "fj"}
    s = Settings.from_env(env, forge=FORGEJO)
    assert s.token == "fj" and s.api_url is None
    # no instance named: refused rather than sending the token to some default host
    with pytest.raises(ValueError, match="FORGEJO_API_URL is not set"):
        s.check(FORGEJO)
    ok = Settings.from_env({**env, "FORGEJO_API_URL": "https://codeberg.org/api/v1"}, forge=FORGEJO)
    ok.check(FORGEJO)
    assert ok.api_url_for(FORGEJO) == "https://codeberg.org/api/v1"
    with pytest.raises(ValueError, match="FORGEJO_API_URL is plain http://"):
        Settings(api_url="http://forge.example.com/api/v1").check(FORGEJO)


def test_max_concurrent_from_env() -> None:
    assert Settings.from_env({}).max_concurrent == 4
    assert Settings.from_env({"GHMCP_MAX_CONCURRENT": " 1 "}).max_concurrent == 1
    for bad in ("0", "5", "two", "-1", "1.5"):
        with pytest.raises(ValueError, match="GHMCP_MAX_CONCURRENT must be a whole number from 1 to 4"):
            Settings.from_env({"GHMCP_MAX_CONCURRENT": bad})


def test_run_rejects_unsupported_store(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(SPEC, ["--idempotency-store", "memcached://localhost:11211"])
    assert info.value.code == 2 and "expected 'memory' or a Redis URL" in capsys.readouterr().err


# --- streamable HTTP ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_http_uses_the_callers_bearer_token_never_the_operators() -> None:
    import httpx2
    import uvicorn
    from mcp.client.streamable_http import streamable_http_client

    fake = FakeGitHub()
    srv = server(fake, token="ghp_operator" + "x" * 20)
    app = http_app(SPEC, Settings(server_secret=SECRET), host="127.0.0.1",
                   allowed_hosts=["mcp.example.com"], server=srv)
    port = free_port()
    web = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                       lifespan="on"))
    url = f"http://127.0.0.1:{port}/mcp"
    client_token = "ghp_client" + "c" * 20
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve)
        while not web.started:
            await anyio.sleep(0.01)
        try:
            for mode in MODES:
                hc = httpx2.AsyncClient(headers={"Authorization": f"Bearer {client_token}"})
                async with Client(streamable_http_client(url, http_client=hc), mode=mode,
                                  cache=None) as c:
                    res = await c.call_tool("issues_get", ARGS)
                    assert not res.is_error, res
                    who = await c.call_tool("demo_fail", {"mode": "ok"})
                    assert who.structured_content["identity"] == caller_id(
                        identity_key(SECRET), client_token)
            async with httpx.AsyncClient() as raw:
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
                headers = {"accept": "application/json, text/event-stream",
                           "content-type": "application/json",
                           "authorization": f"Bearer {client_token}"}
                anonymous = await raw.post(url, json=body, headers={
                    k: v for k, v in headers.items() if k != "authorization"})
                assert anonymous.status_code == 401
                bad = await raw.post(url, json=body, headers={**headers, "host": "evil.example"})
                assert bad.status_code == 421
                good = await raw.post(url, json=body, headers={**headers, "host": "mcp.example.com"})
                assert good.status_code == 200
        finally:
            web.should_exit = True
    assert fake.auth == [f"Bearer {client_token}"] * 2


class Tracked(list[Any]):
    """A list a weak reference can follow, to see when the arguments are freed."""


async def test_a_refused_call_frees_its_arguments_without_waiting_for_the_garbage_collector(
) -> None:
    # Measured over HTTP (bench/oversized.py): refused 1 MB arguments stayed alive in a reference
    # cycle (ToolError -> traceback -> frame -> arguments) and RSS climbed by ~65 MiB.
    import gc
    import weakref

    from ghmcp_runtime.calls.cursors import HmacCursorCodec
    from ghmcp_runtime.guards.caller import Caller
    from ghmcp_runtime.serving.served import Served
    from ghmcp_runtime.serving.tool_calls import ToolRuntime
    from ghmcp_runtime.stores.idempotency import IdempotencyRunner, MemoryStore

    runtime = ToolRuntime(Served(SPEC, Settings()), ForgeUpstream(transport=httpx.MockTransport(
        FakeGitHub())), HmacCursorCodec(None), IdempotencyRunner(MemoryStore()))
    payload = Tracked([0] * 1000)
    alive = weakref.ref(payload)
    gc.disable()
    try:
        result = await runtime._call_logged(
            runtime.tools["issues_get"], Caller(identity="anonymous", source="none"),
            {**ARGS, "extra": payload}, "req_000000000000")
        del payload
        assert result.is_error and result.structured_content["code"] == "invalid_field"
        assert alive() is None
    finally:
        gc.enable()


def test_a_server_names_itself_to_the_forge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The User-Agent is the server's own name and version, whichever forge it talks to (the
    upstream client is built with the first request that needs the forge)."""
    from ghmcp_runtime.serving import upstream_client
    from ghmcp_runtime.serving.served import Served

    built: list[dict[str, Any]] = []

    def recording(**kwargs: Any) -> ForgeUpstream:
        built.append(kwargs)
        return ForgeUpstream(**kwargs)

    monkeypatch.setattr(upstream_client, "ForgeUpstream", recording)
    for forge in (GITHUB, FORGEJO):
        settings = Settings(token=TOKEN, api_url="https://forge.example/api")
        upstream_client.default_upstream(Served(replace(SPEC, forge=forge), settings))
    assert [b["user_agent"] for b in built] == [f"{SPEC.name}/{SPEC.version}"] * 2
