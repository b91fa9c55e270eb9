"""Lockdown on Forgejo, through the forge profile (`ForgeProfile.trust`): the same runtime code as
on GitHub (tests/functional/test_lockdown.py), asking Forgejo's own operations (`repoGet`,
`userGetCurrent`, `repoGetRepoPermissions`) of the Forgejo fake, through the official client.

The labels server withholds nothing (labels have no author), so a server with a lockdown rule on
issues is generated from `lockdown/forgejo_lockdown.yaml` into a temporary directory.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fakeforgejo import FakeForgejo
from generator.pipeline.generate import generate, load_inputs
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.forges import FORGEJO
from ghmcp_runtime.serving.app import Settings, build_server, run
from tests.forgejo.forgejo_support import API, FAST_RETRY, MEMBER_TOKEN, ORG, OWNER_TOKEN, REPO
from tests.functional.session import Opened

pytestmark = pytest.mark.anyio
OVERRIDES = Path(__file__).resolve().parent / "lockdown" / "forgejo_lockdown.yaml"
PERMISSION = "repoGetRepoPermissions"
WEB = {"owner": ORG, "repo": REPO}


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The generated server's `ServerSpec`, imported from where it was written."""
    result = generate(load_inputs(OVERRIDES))
    assert result.files is not None, [d.render() for d in result.diagnostics]
    out = tmp_path_factory.mktemp("generated")
    for rel, text in result.files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("forgejo_lockdown_test_mcp").SERVER
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m.startswith("forgejo_lockdown_test_mcp")]:
            del sys.modules[name]


def server(fake: FakeForgejo, spec: Any, token: str, *, lockdown: bool = True) -> Any:
    upstream = ForgeUpstream(forge=FORGEJO, base_url=API, transport=fake.asgi_transport(),
                             timeout=5.0, retry=FAST_RETRY)
    return build_server(spec, Settings(token=token, api_url=API, lockdown=lockdown), upstream=upstream)


def thread(fake: FakeForgejo) -> None:
    """Issues on acme/web by an outsider, a read-only collaborator, bob (write access) and alice
    (owner of the organisation), and one on the private acme/vault by the outsider."""
    fake.add_user("mallory")
    fake.add_user("reader")
    with fake.lock:
        fake.state.repo(ORG, REPO).collaborators["reader"] = "read"  # type: ignore[union-attr]
    for author in ("mallory", "reader", "bob", "alice"):
        fake.add_issue(f"{ORG}/{REPO}", f"by {author}", author=author, body=f"text by {author}")
    fake.add_issue(f"{ORG}/vault", "internal", author="mallory", body="private text")


def bodies(got: dict[str, Any]) -> dict[str, tuple[str | None, str | None]]:
    return {row["author"]: (row["body"], row.get("withheld")) for row in got["issues"]}


async def test_authors_without_push_access_are_withheld_on_forgejo(
        fake: FakeForgejo, ids: dict[str, Any], spec: Any) -> None:
    thread(fake)
    async with Opened(server(fake, spec, OWNER_TOKEN)) as s:
        got = await s.ok("forgejo_list_issues", WEB)
        asked = len(fake.calls(PERMISSION))
        again = await s.ok("forgejo_list_issues", WEB)
    assert bodies(got) == {
        "mallory": (None, "untrusted_author"), "reader": (None, "untrusted_author"),
        "bob": ("text by bob", None),  # write access
        "alice": ("text by alice", None),  # the caller: never asked about
        "acme": ("", None),  # the seeded issue, by the repository's owner
    }
    assert got["issues"][0]["title"] == "by alice"  # titles stay; bodies go
    # Forgejo sends no author association, so every other author is asked about, once
    asked_about = sorted(r.path.rsplit("/", 2)[-2] for r in fake.calls(PERMISSION))
    assert asked_about == ["acme", "bob", "mallory", "reader"]
    assert asked == 4 and len(fake.calls(PERMISSION)) == 4  # the second read used the cache
    # the caller's account: read once with its token's scopes at start, once by lockdown
    assert len(fake.calls("repoGet")) == 1 and len(fake.calls("userGetCurrent")) == 2
    assert again == {**got, "request_id": again["request_id"]}


async def test_a_permission_forgejo_refuses_to_tell_withholds(
        fake: FakeForgejo, ids: dict[str, Any], spec: Any) -> None:
    """bob may not ask about others (Forgejo answers 403 to non-admins) and his token may not read
    his own account (no user scope): others' text stays withheld as trust_unknown, and his own is
    released by asking about himself, which Forgejo allows."""
    thread(fake)
    async with Opened(server(fake, spec, MEMBER_TOKEN)) as s:
        got = await s.ok("forgejo_list_issues", WEB)
    assert bodies(got) == {
        "mallory": (None, "trust_unknown"), "reader": (None, "trust_unknown"),
        "bob": ("text by bob", None), "alice": (None, "trust_unknown"), "acme": (None, "trust_unknown"),
    }
    assert fake.calls("userGetCurrent")  # asked, and refused: the token has no user scope
    assert "bob" in {r.path.rsplit("/", 2)[-2] for r in fake.calls(PERMISSION)}


async def test_private_repositories_are_trusted_and_nothing_is_asked_without_lockdown(
        fake: FakeForgejo, ids: dict[str, Any], spec: Any) -> None:
    thread(fake)
    async with Opened(server(fake, spec, OWNER_TOKEN)) as s:
        private = await s.ok("forgejo_list_issues", {"owner": ORG, "repo": "vault"})
    assert bodies(private)["mallory"] == ("private text", None) and fake.calls(PERMISSION) == []
    async with Opened(server(fake, spec, OWNER_TOKEN, lockdown=False)) as s:
        open_ = await s.ok("forgejo_list_issues", WEB)
    assert bodies(open_)["mallory"] == ("text by mallory", None)
    assert fake.calls(PERMISSION) == [] and len(fake.calls("repoGet")) == 1  # the vault's only


def test_a_forge_that_cannot_tell_who_may_push_refuses_lockdown_at_start(
        spec: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    blind = replace(FORGEJO, trust=None)
    monkeypatch.setenv(FORGEJO.api_url_env, API)
    with pytest.raises(SystemExit) as exited:
        run(replace(spec, forge=blind), ["--lockdown"])
    assert exited.value.code == 2
    assert "lockdown is not available on Forgejo" in capsys.readouterr().err
    with pytest.raises(ValueError, match="offers no way to tell whether an author may push"):
        Settings(api_url=API, lockdown=True).check(blind)
    Settings(api_url=API).check(blind)  # without lockdown the forge serves as before
