"""Security review n7 and t8: the upstream client followed any same-origin redirect, so a 307 from
`/api/v1/repos/acme/web/labels` to `/outside/collect` on a Forgejo instance's origin received the
token (n7), and without --repos a same-origin 307 on a write repeated the change at the new
address (t8: an issue created in octo-org/secret). Now a read follows a redirect only inside the
API's base path (Forgejo `/api/v1`, GHES `/api/v3`; api.github.com is an API origin of its own),
and a write never follows one: it answers the not-found code of what it addresses, saying it
moved, with nothing changed."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from fakegithub import FakeGitHub
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.forges import FORGEJO
from ghmcp_runtime.core.model import Operation
from tests.functional.conftest import OWNER, REPO, in_memory_server
from tests.functional.session import Opened
from tests.runtime.runtime_support import TOKEN, Recorder, Sleeps, gh, make_ctx

pytestmark = pytest.mark.anyio
LIST_LABELS = Operation(operation_id="issueListLabels", method="GET", path="/repos/{owner}/{repo}/labels",
                        not_found="repo_not_found", success_status=(200,))
CREATE_ISSUE = Operation(operation_id="issues/create", method="POST", path="/repos/{owner}/{repo}/issues",
                         not_found="repo_not_found", success_status=(201,))
PATH = {"owner": "acme", "repo": "web"}


def client(rec: Recorder, base: str, forge: Any = None) -> ForgeUpstream:
    extra = {"forge": forge} if forge is not None else {}
    return ForgeUpstream(base_url=base, transport=httpx.MockTransport(rec), clock=lambda: 1e6,
                         sleep=Sleeps(), jitter=lambda: 0.5, **extra)


@pytest.mark.parametrize(("base", "forge", "location"), [
    ("https://forge.example.com/api/v1", FORGEJO, "/outside/collect"),
    ("https://forge.example.com/api/v1", FORGEJO, "/api/v1/../../outside/collect"),
    ("https://forge.example.com/api/v1", FORGEJO, "/api/v10/repos/acme/web/labels"),
    ("https://forge.example.com/api/v1", FORGEJO, "https://forge.example.com:8443/api/v1/repos/acme/web/labels"),
    ("https://ghe.example.com/api/v3", None, "/login/oauth/collect"),
    ("https://ghe.example.com/api/v3", None, "http://ghe.example.com/api/v3/repos/acme/web/labels"),
])
async def test_a_read_is_not_redirected_outside_the_api_base_path(base: str, forge: Any, location: str) -> None:
    rec = Recorder(gh(307, {"message": "moved"}, {"location": location}), gh(200, []))
    up = client(rec, base, forge)
    with pytest.raises(ToolError) as moved:
        await up.call(make_ctx(up), LIST_LABELS, path=PATH, query=None, body=None)
    assert len(rec.requests) == 1, [str(r.url) for r in rec.requests]
    assert moved.value.code == "repo_not_found" and "redirects this request elsewhere" in moved.value.message


@pytest.mark.parametrize(("base", "forge", "location"), [
    ("https://forge.example.com/api/v1", FORGEJO, "/api/v1/repos/acme/website/labels"),
    ("https://ghe.example.com/api/v3", None, "/api/v3/repositories/42/labels"),
    ("https://api.github.com", None, "/repositories/42/labels"),
])
async def test_a_read_inside_the_api_is_still_followed(base: str, forge: Any, location: str) -> None:
    rec = Recorder(gh(301, {"message": "moved"}, {"location": location}), gh(200, [{"id": 1}]))
    up = client(rec, base, forge)
    resp = await up.call(make_ctx(up), LIST_LABELS, path=PATH, query=None, body=None)
    assert resp.data == [{"id": 1}] and rec.requests[1].url.path == location


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_write_never_follows_a_redirect(status: int) -> None:
    rec = Recorder(gh(status, {"message": "moved"}, {"location": "/repos/octo-org/secret/issues"}),
                   gh(201, {"number": 1}))
    up = client(rec, "https://api.github.com")
    with pytest.raises(ToolError) as moved:
        await up.call(make_ctx(up), CREATE_ISSUE, path=PATH, query=None, body={"title": "t"})
    assert len(rec.requests) == 1 and rec.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert moved.value.code == "repo_not_found" and not moved.value.temporary
    assert "nothing was changed" in moved.value.message


async def test_t8_a_same_origin_307_on_a_create_writes_nothing_elsewhere(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    """t8 as the review ran it, without --repos: the create is redirected to octo-org/secret."""
    fake.add_repo(OWNER, "secret", private=True)
    fake.grant("octocat", f"{OWNER}/secret")
    fake.faults.add(f"POST /repos/{OWNER}/{REPO}/issues$", status=307,
                    headers={"location": f"/repos/{OWNER}/secret/issues"}, body={"message": "moved"})
    async with Opened(in_memory_server(fake), secrets=("secret",)) as s:
        err = await s.error("github_create_issue", {"owner": OWNER, "repo": REPO, "title": "x"}, "repo_not_found")
    assert "redirects this request elsewhere" in err["message"]
    assert fake.issues(OWNER, "secret") == []
    assert [c.path for c in fake.calls("issues/create")] == [f"/repos/{OWNER}/{REPO}/issues"]
    assert json.dumps(err).count("secret") == 0
