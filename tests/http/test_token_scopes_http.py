"""Token scopes over real HTTP on 127.0.0.1 (issue 37): each caller's token is read once (cached
by its identity) and the caller sees only what its token can use; an OAuth-app token (gho_) keeps
the tools its scopes fall short of, and a call to one answers the MCP scope challenge — HTTP 403,
`WWW-Authenticate: Bearer error="insufficient_scope", scope=…` — which the official client's
OAuth provider follows: it asks the authorization server for the scope and repeats the call."""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, http_app
from github_mcp import SERVER
from tests.functional.conftest import OWNER, REPO
from tests.http.conftest import TOKEN_X
from tests.http.http_support import SERVER_SECRET, asgi_in_thread, free_port

pytestmark = pytest.mark.anyio

ALL = ExposureFlags(toolsets=("all",))
EVERY = sorted(t.name for t in SERVER.tools)
READS = sorted(t.name for t in SERVER.tools if t.annotations.read_only)
NO_SCOPES = "ghp_httpnoscopes00000000000000000000000000"
OAUTH = "gho_httpnarrowoauth000000000000000000000000"
LABEL = {"owner": OWNER, "repo": REPO, "name": "stepped-up", "color": "00aa00"}


@pytest.fixture
def endpoint(request: pytest.FixtureRequest, fake: FakeGitHub, fake_url: str) -> Iterator[str]:
    """github-mcp (every toolset) under uvicorn; its protected-resource metadata names the test's
    authorization server when the test has one."""
    issuer = (request.getfixturevalue("authorization").url
              if "authorization" in request.fixturenames else None)
    port = free_port()
    settings = Settings(api_url=fake_url, server_secret=SERVER_SECRET.encode(), exposure=ALL,
                        authorization_server=issuer)
    app = http_app(SERVER, settings, host="127.0.0.1", port=port)
    with asgi_in_thread(app, port=port) as url:
        yield url


def bearer(url: str, token: str, seen: list[httpx2.Response] | None = None,
           auth: httpx2.Auth | None = None) -> Client:
    hooks: dict[str, list[Any]] = {}
    if seen is not None:
        async def keep(response: httpx2.Response) -> None:
            seen.append(response)

        hooks["response"] = [keep]
    headers = {"Authorization": f"Bearer {token}"} if auth is None else {}
    http = httpx2.AsyncClient(headers=headers, event_hooks=hooks, auth=auth, timeout=30)
    return Client(streamable_http_client(url, http_client=http), cache=None)


async def names(client: Client) -> list[str]:
    return sorted(t.name for t in (await client.list_tools()).tools)


async def test_each_caller_sees_what_its_token_can_use_read_once_per_token(fake: FakeGitHub,
                                                                         endpoint: str) -> None:
    fake.add_token(NO_SCOPES, "octocat", scopes=())
    async with bearer(endpoint, NO_SCOPES) as narrow, bearer(endpoint, TOKEN_X) as full:
        assert await names(narrow) == READS
        assert await names(full) == EVERY
        assert await names(narrow) == READS
        with pytest.raises(MCPError, match="Unknown tool"):
            await narrow.call_tool("github_create_label", LABEL)
        listed = await narrow.call_tool("github_list_labels", {"owner": OWNER, "repo": REPO})
        assert not listed.is_error
    # one read per token, whatever the number of requests and sessions
    assert len(fake.calls("rate-limit/get")) == 2
    assert fake.calls("issues/create-label") == []


async def test_a_token_whose_scopes_github_refuses_is_read_again(fake: FakeGitHub, endpoint: str) -> None:
    fake.add_token(NO_SCOPES, "octocat", scopes=("public_repo",))
    async with bearer(endpoint, NO_SCOPES) as client:
        assert await names(client) == EVERY
        fake.set_token_scopes(NO_SCOPES, ())  # its owner narrows it meanwhile
        refused = await client.call_tool("github_create_label", LABEL)
        assert refused.is_error and refused.structured_content["code"] == "insufficient_scope"
        assert await names(client) == READS  # the refusal made the server read it again
    assert len(fake.calls("rate-limit/get")) == 2


# -- the scope challenge ------------------------------------------------------------------------

class AuthorizationServer:
    """A minimal OAuth authorization server standing in for GitHub's: it grants what the client
    asks for, minting a gho_ token the fake GitHub then knows with exactly those scopes."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake
        self.codes: dict[str, str] = {}  # code -> the scopes asked for
        self.asked: list[str] = []
        self.url = ""
        self.last = ""  # the authorization URL the client last sent the user to

    def app(self) -> Starlette:
        async def metadata(_: Request) -> JSONResponse:
            return JSONResponse({
                # the root URL as the resource metadata spells it (RFC 8414: identical)
                "issuer": f"{self.url}/", "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.url}/token", "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            })

        async def token(request: Request) -> JSONResponse:
            form = await request.form()
            scopes = self.codes.pop(str(form.get("code")), None)
            if scopes is None or not form.get("code_verifier"):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            minted = "gho_" + secrets.token_hex(18)
            self.fake.add_token(minted, "octocat", scopes=scopes.split(),
                                collaborator_on=f"{OWNER}/{REPO}")
            return JSONResponse({"access_token": minted, "token_type": "bearer", "scope": scopes})

        return Starlette(routes=[Route("/.well-known/oauth-authorization-server", metadata),
                                 Route("/token", token, methods=["POST"])])

    async def redirect(self, url: str) -> None:
        self.last = url

    async def authorize(self, url: str) -> AuthorizationCodeResult:
        """What a user's browser would do: consent to the scopes asked for."""
        query = parse_qs(urlsplit(url).query)
        code = secrets.token_hex(8)
        self.codes[code] = query.get("scope", [""])[0]
        self.asked.append(self.codes[code])
        return AuthorizationCodeResult(code=code, state=query["state"][0])


class Storage:
    def __init__(self, tokens: OAuthToken, client: OAuthClientInformationFull) -> None:
        self.tokens, self.client = tokens, client

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture
def authorization(fake: FakeGitHub) -> Iterator[AuthorizationServer]:
    server = AuthorizationServer(fake)
    port = free_port()
    server.url = f"http://127.0.0.1:{port}"
    with asgi_in_thread(server.app(), port=port):
        yield server


def challenges(seen: list[httpx2.Response]) -> list[Mapping[str, str]]:
    return [{"status": str(r.status_code), "www-authenticate": r.headers.get("www-authenticate", "")}
            for r in seen if r.status_code == 403]


async def test_an_oauth_token_short_of_a_scope_gets_the_challenge(fake: FakeGitHub, authorization: AuthorizationServer,
                                                                  endpoint: str) -> None:
    """A client that cannot step up sees the challenge and the call fail; nothing reached GitHub."""
    fake.add_token(OAUTH, "octocat", scopes=())
    seen: list[httpx2.Response] = []
    async with bearer(endpoint, OAUTH, seen) as client:
        assert await names(client) == EVERY  # it can ask for more: nothing hidden
        with pytest.raises(MCPError):  # a 403 answer: the official client raises
            await client.call_tool("github_create_label", LABEL)
        listed = await client.call_tool("github_list_labels", {"owner": OWNER, "repo": REPO})
        assert not listed.is_error  # a read it can make stays a plain 200
    [challenge] = challenges(seen)
    value = challenge["www-authenticate"]
    assert value.startswith('Bearer error="insufficient_scope", scope="public_repo", resource_metadata="http://')
    assert "/.well-known/oauth-protected-resource/mcp" in value
    assert fake.calls("issues/create-label") == []


async def test_the_official_client_steps_its_token_up_and_the_call_succeeds(
        fake: FakeGitHub, authorization: AuthorizationServer, endpoint: str) -> None:
    fake.add_token(OAUTH, "octocat", scopes=("read:org",), collaborator_on=f"{OWNER}/{REPO}")
    seen: list[httpx2.Response] = []
    provider = OAuthClientProvider(
        server_url=endpoint,
        client_metadata=OAuthClientMetadata(redirect_uris=["http://127.0.0.1:1/callback"],
                                            token_endpoint_auth_method="none"),
        storage=Storage(OAuthToken(access_token=OAUTH, scope="read:org"),
                        OAuthClientInformationFull(client_id="test-client", issuer=f"{authorization.url}/",
                                                   redirect_uris=["http://127.0.0.1:1/callback"],
                                                   token_endpoint_auth_method="none")),
        redirect_handler=authorization.redirect,
        callback_handler=lambda: authorization.authorize(authorization.last),
    )
    async with bearer(endpoint, "", seen, auth=provider) as client:
        made = await client.call_tool("github_create_label", LABEL)
    assert not made.is_error, made.structured_content
    assert made.structured_content["label"]["name"] == "stepped-up"
    [challenge] = challenges(seen)
    assert 'scope="public_repo read:org"' in challenge["www-authenticate"]  # it keeps what it had
    assert [sorted(a.split()) for a in authorization.asked] == [["public_repo", "read:org"]]
    assert len(fake.calls("issues/create-label")) == 1

