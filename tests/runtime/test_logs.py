from __future__ import annotations

import json
import logging

import pytest

from ghmcp_runtime.core.logs import log_event, redact


def test_redact_tokens_everywhere() -> None:
    secrets = ["ghp_" + "A1" * 18, "gho_abcdefghijklmnop", "ghs_abcdefghijklmnop",
               "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "Bearer abc.def-ghi"]
    for s in secrets:
        out = redact({"k": [f"token={s} end"], "n": 1})
        assert s not in json.dumps(out) and "[redacted]" in json.dumps(out)
    assert redact("ghp_short") == "ghp_short"  # a mention of the prefix is not a token


def test_every_forges_authorization_scheme_is_redacted() -> None:
    """Forgejo's `token <40 hex>` too, though its tokens carry no prefix; sentences stay."""
    forgejo = "a1" * 20
    assert forgejo not in json.dumps(redact(f"authorization: token {forgejo}"))
    for sentence in ("token is required", "no usable bearer token", "token does not have scope"):
        assert redact(sentence) == sentence


def test_json_lines_on_stderr_only(capsys: pytest.CaptureFixture[str]) -> None:
    log_event("thing", request_id="req_1", token_leak="Authorization: Bearer ghp_" + "x" * 36,
              skipped=None)
    try:
        raise ValueError("boom ghp_" + "y" * 36)
    except ValueError:
        log_event("crash", level=logging.ERROR, exc_info=True)
    out = capsys.readouterr()
    assert out.out == ""
    first, second = (json.loads(line) for line in out.err.splitlines())
    assert first["event"] == "thing" and first["request_id"] == "req_1" and "skipped" not in first
    assert "x" * 36 not in out.err and "boom ghp_" + "y" * 36 not in out.err
    assert second["level"] == "error" and "ValueError" in second["exc"]
