"""Security review t9: a caller's string reached a log line with its bidi characters raw (an
unknown tool name), and the token redaction turned "no usable bearer token" into "no usable
[redacted]". Every logged string now has control, bidi, invisible and tag characters written as
JSON escapes, and only a credential-looking word after "Bearer" is redacted."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from ghmcp_runtime.core.logs import REDACTED, JsonFormatter, redact
from tests.http.conftest import TOKEN_X
from tests.http.http_support import http_server_process, server_env

HOSTILE_NAME = "ab\u202etxt.exe\u0007\x1b[2J\x9b\u2066\U000e0041"


def line(**fields: object) -> str:
    record = logging.LogRecord("ghmcp", logging.INFO, __file__, 1, "event", None, None)
    record.fields = fields
    return JsonFormatter().format(record)


def test_unsafe_characters_are_escaped_and_the_line_reads_back_the_same() -> None:
    text = line(tool=HOSTILE_NAME)
    assert all((ord(c) < 0x7F and c.isprintable()) or c in "…" for c in text), ascii(text)
    assert json.loads(text)["tool"] == HOSTILE_NAME


@pytest.mark.parametrize(("value", "kept"), [
    ("no usable bearer token", True),
    ("Bearer tokens are sent in the Authorization header", True),
    (f"Authorization: Bearer {TOKEN_X}", False),
    ("bearer abc123def456ghi789jkl", False),
    ("ghp_" + "A" * 30, False),
])
def test_only_credentials_are_redacted(value: str, kept: bool) -> None:
    assert (redact(value) == value) == kept
    if not kept:
        assert REDACTED in redact(value)


def test_an_unknown_tool_name_is_logged_escaped(fake_url: str) -> None:
    output: list[str] = []
    with http_server_process(server_env(fake_url), output=output) as url:
        httpx.post(url, timeout=10, headers={
            "accept": "application/json, text/event-stream", "content-type": "application/json",
            "authorization": f"Bearer {TOKEN_X}"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": HOSTILE_NAME, "arguments": {}}})
    raw = "\n".join(output)
    for char in ("\u202e", "\u2066", "\x07", "\x1b", "\x9b", "\U000e0041"):
        assert char not in raw
    assert any(json.loads(x).get("event") == "tool_call" for x in output if x.startswith("{"))
