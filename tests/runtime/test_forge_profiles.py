"""The forge profile decides the wire conventions: one upstream, two forges' answers.

GitHub's side is covered by test_upstream.py (unchanged by the profile work); here the Forgejo
profile: token scheme, no version header, `{message, url}` errors, scope refusals that name the
scopes in the message, binding 422s, the organisation as a parent, paging by X-Total-Count."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from runtime_support import Recorder, gh, make_ctx, tool_spec

from ghmcp_runtime.calls.context import UpstreamResponse
from ghmcp_runtime.calls.upstream import ForgeUpstream, RetryPolicy
from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.forges import FORGEJO, GITHUB, forgejo_oauth_server, github_oauth_server
from ghmcp_runtime.core.model import Operation

pytestmark = pytest.mark.anyio
BASE = "https://forge.example.com/api/v1"
GET_ORG_LABEL = Operation(operation_id="orgGetLabel", method="GET", path="/orgs/{org}/labels/{id}",
                          not_found="label_not_found", success_status=(200,))
EDIT_LABEL = Operation(operation_id="issueEditLabel", method="PATCH",
                       path="/repos/{owner}/{repo}/labels/{id}", not_found="label_not_found",
                       success_status=(200,))
TOKEN = "0123456789abcdef0123456789abcdef01234567"


def forgejo(rec: Recorder) -> ForgeUpstream:
    return ForgeUpstream(forge=FORGEJO, base_url=BASE, transport=httpx.MockTransport(rec),
                         clock=lambda: 1_000_000.0, jitter=lambda: 0.5,
                         retry=RetryPolicy(max_retries=0))


def api_error(status: int, message: str, **extra: Any) -> httpx.Response:
    return gh(status, {"message": message, "url": f"{BASE}/swagger", **extra})


# a tool with a `color` parameter: a 422 names a field only when it is one of the tool's
LABEL_TOOL = tool_spec("labels_edit", input_schema={
    "type": "object", "additionalProperties": False, "properties": {"color": {"type": "string"}}})


async def fail(rec: Recorder, op: Operation, path: dict[str, Any], body: Any = None) -> ToolError:
    up = forgejo(rec)
    with pytest.raises(ToolError) as info:
        await up.call(make_ctx(up, credential=TOKEN, tool=LABEL_TOOL), op, path=path, query=None,
                      body=body)
    return info.value


async def test_requests_use_the_token_scheme_plain_json_and_no_version_header() -> None:
    rec = Recorder(gh(200, {"id": 3}))
    up = forgejo(rec)
    await up.call(make_ctx(up, credential=TOKEN), GET_ORG_LABEL, path={"org": "acme", "id": 3},
                  query={"limit": 50, "page": 1}, body=None)
    req = rec.requests[0]
    assert str(req.url) == f"{BASE}/orgs/acme/labels/3?limit=50&page=1"
    assert req.headers["authorization"] == f"token {TOKEN}"
    assert req.headers["accept"] == "application/json"
    assert not any(name.lower().startswith("x-github") for name in req.headers)


async def test_a_scope_refusal_names_the_scopes_forgejo_asked_for() -> None:
    err = await fail(Recorder(api_error(403, "token does not have at least one of required scope(s): "
                                             "[read:organization]")),
                     GET_ORG_LABEL, {"org": "acme", "id": 3})
    assert err.code == "insufficient_scope"
    assert err.details == {"required_scopes": ["read:organization"],
                           "reason": "the token lacks a scope this call needs"}


async def test_a_permission_refusal_is_not_a_scope_problem() -> None:
    err = await fail(Recorder(api_error(403, "Must be an organization owner")), EDIT_LABEL,
                     {"owner": "acme", "repo": "web", "id": 3}, body={"name": "x"})
    assert err.code == "insufficient_scope" and "required_scopes" not in (err.details or {})
    assert "Forgejo refused" in err.message


async def test_a_binding_422_names_the_field_by_its_json_name() -> None:
    err = await fail(Recorder(api_error(422, "[Color]: Required")), EDIT_LABEL,
                     {"owner": "acme", "repo": "web", "id": 3}, body={"color": ""})
    assert err.code == "invalid_field" and err.details == {"field": "color", "reason": "Forgejo rejected this value"}
    plain = await fail(Recorder(api_error(422, "bad color code: #12")), EDIT_LABEL,
                       {"owner": "acme", "repo": "web", "id": 3}, body={"color": "#12"})
    assert plain.details == {"reason": "Forgejo rejected the request as unprocessable"}


async def test_a_404_under_a_missing_organisation_is_org_not_found() -> None:
    rec = Recorder(api_error(404, "The target couldn't be found.", errors=[]),
                   api_error(404, "The target couldn't be found.", errors=[]))
    err = await fail(rec, GET_ORG_LABEL, {"org": "nope", "id": 3})
    assert err.code == "org_not_found"
    assert [r.url.path for r in rec.requests] == ["/api/v1/orgs/nope/labels/3", "/api/v1/orgs/nope"]
    found = Recorder(api_error(404, "The target couldn't be found.", errors=[]), gh(200, {"id": 1}))
    assert (await fail(found, GET_ORG_LABEL, {"org": "acme", "id": 3})).code == "label_not_found"


async def test_messages_name_the_forge_and_its_variable() -> None:
    up = forgejo(Recorder(gh(200, {})))
    with pytest.raises(ToolError) as info:
        await up.call(make_ctx(up, credential=None), GET_ORG_LABEL, path={"org": "a", "id": 1},
                      query=None, body=None)
    assert info.value.code == "missing_credential" and "FORGEJO_TOKEN" in info.value.message
    unavailable = await fail(Recorder(gh(502, {})), GET_ORG_LABEL, {"org": "a", "id": 1})
    assert unavailable.message.startswith("Forgejo is unavailable")
    assert "GitHub" not in unavailable.message + str(unavailable.details)


async def test_a_429_is_rate_limited_without_budget_headers() -> None:
    err = await fail(Recorder(api_error(429, "too many", ), ), GET_ORG_LABEL, {"org": "a", "id": 1})
    assert err.code == "rate_limited" and err.retry_after_ms == 60_000
    assert "rate_limit_remaining" not in err.envelope(request_id="r", fingerprint="f")


def test_forgejo_needs_an_api_url() -> None:
    with pytest.raises(ValueError, match="FORGEJO_API_URL is not set"):
        ForgeUpstream(forge=FORGEJO)


def test_listings_page_by_limit_and_the_total_count_header() -> None:
    assert FORGEJO.page_query(2, 50) == {"limit": 50, "page": 2}
    assert GITHUB.page_query(2, 100) == {"per_page": 100, "page": 2}

    def resp(**headers: str) -> UpstreamResponse:
        return UpstreamResponse(status=200, data=[], headers=headers)

    assert FORGEJO.has_more(resp(**{"x-total-count": "51"}), 1, 50)
    assert not FORGEJO.has_more(resp(**{"x-total-count": "50"}), 1, 50)
    assert FORGEJO.has_more(resp(link='<https://f/x?page=2>; rel="next"'), 1, 50)
    # GitHub sends no total: only the Link header counts
    assert not GITHUB.has_more(resp(**{"x-total-count": "500"}), 1, 100)


def test_the_authorization_server_follows_the_instance() -> None:
    assert forgejo_oauth_server("https://codeberg.org/api/v1") == "https://codeberg.org"
    assert forgejo_oauth_server("https://example.com/forge/api/v1/") == "https://example.com/forge"
    assert github_oauth_server("https://api.github.com") == "https://github.com/login/oauth"
