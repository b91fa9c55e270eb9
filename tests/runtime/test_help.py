"""A generated server explains itself: `--help` names every flag's meaning and the environment it
reads; each transport logs one line when it starts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from app_spec import SPEC

from ghmcp_runtime.core.forges import FORGEJO, GITHUB
from ghmcp_runtime.serving import app
from ghmcp_runtime.serving.environment import VARIABLES

RUNTIME = Path(app.__file__).parents[1]  # the whole runtime package
# read by `python -m ghmcp_runtime.serving.healthcheck` (its own --help says so), not by the server
NOT_THE_SERVERS = {"GHMCP_PORT"}
OLD_NAMES = {"GHMCP_CURSOR_SECRET"}  # still read; --help names it beside GHMCP_SERVER_SECRET


def _help(spec: Any, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        app.run(spec, ["--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def test_help_lists_every_variable_the_runtime_reads(capsys: pytest.CaptureFixture[str]) -> None:
    read = {name for path in RUNTIME.rglob("*.py")
            for name in re.findall(r'"(GHMCP_[A-Z0-9_]+)"', path.read_text(encoding="utf-8"))}
    assert read - NOT_THE_SERVERS - OLD_NAMES == {v.name for v in VARIABLES}
    text = _help(SPEC, capsys)
    environment = text[text.index("environment:"):]
    for name in [GITHUB.token_env, GITHUB.api_url_env, *sorted(read - NOT_THE_SERVERS - OLD_NAMES)]:
        assert re.search(rf"^  {name} +\S", environment, re.MULTILINE), name
    assert all(name in environment for name in OLD_NAMES)
    assert "https://api.github.com" in environment


def test_help_explains_the_transport_and_the_forges_variables(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(SPEC, capsys)
    transport = text[text.index("  --transport {stdio,http}"):text.index("  --host HOST")]
    assert "stdin/stdout" in transport and "http://HOST:PORT/mcp" in transport
    forgejo = _help(app.replace(SPEC, forge=FORGEJO), capsys)
    assert "FORGEJO_TOKEN" in forgejo and "FORGEJO_API_URL" in forgejo and "required" in forgejo


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_each_transport_logs_that_it_started(transport: str, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[str] = []
    monkeypatch.setattr(anyio, "run", lambda *a, **k: served.append("stdio"))
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: served.append("http"))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "a" * 36)
    app.run(SPEC, ["--transport", transport, "--port", "8123"])
    assert served == [transport]
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    started = [line for line in lines if line["event"] == "server_started"]
    assert len(started) == 1
    assert started[0]["server"] == SPEC.name and started[0]["transport"] == transport
    if transport == "http":
        assert started[0]["url"] == "http://127.0.0.1:8123/mcp"
