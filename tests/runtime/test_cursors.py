from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from ghmcp_runtime.calls.cursors import HmacCursorCodec
from ghmcp_runtime.core.errors import ToolError

QUERY = {"owner": "octo", "repo": "hello", "state": "open"}
RESTART = {"owner": "octo", "repo": "hello", "state": "open"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def codec(clock: Clock | None = None, secret: bytes | None = b"s" * 32) -> HmacCursorCodec:
    return HmacCursorCodec(secret, ttl_s=900, clock=clock or Clock())


def open_(c: HmacCursorCodec, token: str, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"tool": "issues_list", "identity": "u_1", "bound_to": QUERY,
                            "field": "cursor", "restart_arguments": RESTART}
    args.update(kw)
    return c.open(token, **args)


def mint(c: HmacCursorCodec, state: dict[str, Any] | None = None) -> str:
    return c.mint(tool="issues_list", identity="u_1", bound_to=QUERY, state=state or {"page": 3})


def test_round_trip() -> None:
    c = codec()
    token = mint(c, {"page": 3, "since": "x"})
    assert open_(c, token) == {"page": 3, "since": "x"}
    # bound_to is compared canonically: key order does not matter
    assert open_(c, token, bound_to=dict(reversed(QUERY.items()))) == {"page": 3, "since": "x"}


def test_shared_secret_lets_replicas_agree_and_random_secret_does_not() -> None:
    assert open_(codec(), mint(codec())) == {"page": 3}
    with pytest.raises(ToolError):
        open_(codec(secret=None), mint(codec(secret=None)))


def assert_invalid(err: ToolError, reason_part: str) -> None:
    assert err.code == "invalid_field" and not err.temporary
    assert err.details is not None and err.details["field"] == "cursor"
    assert reason_part in err.details["reason"]
    assert err.repair == {"next_step": "restart_without_cursor", "tool": "issues_list",
                          "arguments": RESTART}


def tampered(token: str) -> str:
    payload, sig = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=="))
    body["s"]["page"] = 99
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode() + "." + sig


@pytest.mark.parametrize("garble", [
    tampered, lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"), lambda t: "garbage",
    lambda t: "", lambda t: "a.b.c", lambda t: "%%%.$$$", lambda t: t.replace(".", ""),
    lambda t: "x" * 5000, lambda t: "é.ü",
])
def test_tampered_or_garbled(garble: Any) -> None:
    c = codec()
    with pytest.raises(ToolError) as info:
        open_(c, garble(mint(c)))
    assert_invalid(info.value, "not a cursor issued by this server")


@pytest.mark.parametrize(("kw", "reason"), [
    ({"tool": "issues_search"}, "different tool"),
    ({"identity": "u_2"}, "different caller"),
    ({"bound_to": {**QUERY, "state": "closed"}}, "different query"),
])
def test_bound_to_tool_identity_query(kw: dict[str, Any], reason: str) -> None:
    c = codec()
    with pytest.raises(ToolError) as info:
        open_(c, mint(c), **kw)
    err = info.value
    if "tool" in kw:  # the repair restarts the tool actually being called
        assert err.repair is not None and err.repair["tool"] == "issues_search"
    else:
        assert_invalid(err, reason)
    assert "page" not in json.dumps(err.envelope(request_id="r", fingerprint="f"))


def test_expiry() -> None:
    clock = Clock()
    c = codec(clock)
    token = mint(c)
    clock.now += 899
    assert open_(c, token) == {"page": 3}
    clock.now += 1
    with pytest.raises(ToolError) as info:
        open_(c, token)
    err = info.value
    assert err.code == "cursor_expired" and not err.temporary
    assert err.details == {"field": "cursor", "reason": "cursors expire 15 minutes after they are issued"}
    assert err.repair is not None and err.repair["arguments"] == RESTART


def test_payload_never_carries_the_credential() -> None:
    c = codec()
    token = mint(c)
    payload = base64.urlsafe_b64decode(token.split(".")[0] + "==")
    assert set(json.loads(payload)) == {"v", "t", "i", "q", "s", "e"}
    assert b"octo" not in payload  # the query is bound by digest only
