"""The forge profiles (see `ghmcp_runtime.core.forge_profile`): GitHub and Forgejo (Gitea's API).

Everything the runtime knows about one forge's wire conventions is here and nowhere else.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ghmcp_runtime.core.forge_profile import (
    ForgeProfile,
    ParentProbe,
    RateLimitHeaders,
    Refusal,
    SearchScope,
    TrustChecks,
)
from ghmcp_runtime.core.operation import Operation

if TYPE_CHECKING:
    import httpx


def _body(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def _message(resp: httpx.Response) -> str:
    data = _body(resp)
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else ""


# -- GitHub --------------------------------------------------------------------------------------

GITHUB_AUTHORIZATION_SERVER = "https://github.com/login/oauth"
# GitHub's refusal on a locked conversation ("Unable to create comment because issue is locked.");
# "Repository access blocked" or a locked repository are something else
_ISSUE_LOCKED = re.compile(r"\b(issue|conversation)\b[^.]{0,40}?\blocked\b", re.IGNORECASE)
_BLOCKED = re.compile(r"\bblocked\b", re.IGNORECASE)
_GITHUB_422_REASONS = {
    "missing": "refers to something that does not exist",
    "missing_field": "is required",
    "invalid": "has an invalid value or format",
    "already_exists": "another resource already has this value",
    "unprocessable": "GitHub could not process this value",
    "custom": "GitHub rejected this value",
}


def _scopes(value: str | None) -> list[str]:
    return [s.strip() for s in (value or "").split(",") if s.strip()]


class GitHubErrors:
    """`{message, documentation_url, errors?: [{resource, field, code}]}`, OAuth scope headers."""

    def message(self, resp: httpx.Response) -> str:
        """`message`, then what each entry of `errors` says: a 422's reason is there ("Validation
        Failed" + "A pull request already exists for …"), as a sentence or an entry's `message`."""
        data = _body(resp)
        entries = data.get("errors") if isinstance(data, dict) else None
        said = [e.get("message") if isinstance(e, dict) else e for e in entries or []] \
            if isinstance(entries, list) else []
        return " ".join([_message(resp), *(s for s in said if isinstance(s, str))]).strip()

    def secondary_limit(self, message: str) -> bool:
        text = message.lower()
        return "secondary rate limit" in text or "abuse" in text

    def refusal(self, resp: httpx.Response, message: str) -> Refusal:
        if _ISSUE_LOCKED.search(message):
            return Refusal(code="issue_locked",
                           message="The issue is locked; only collaborators with write access can comment.",
                           details={"reason": "the conversation on this issue is locked"})
        accepted = _scopes(resp.headers.get("x-accepted-oauth-scopes"))
        granted = set(_scopes(resp.headers.get("x-oauth-scopes")))
        missing = [s for s in accepted if s not in granted] or ["repo"]
        if _BLOCKED.search(message) and not any(s not in granted for s in accepted):
            return Refusal(code="insufficient_scope",
                           message="GitHub refused: access is blocked (for the repository or the account), not for a "
                           "missing scope; another token scope will not help.",
                           details={"reason": "GitHub blocked access to this resource"})
        if "x-oauth-scopes" in resp.headers:
            reason = "the token lacks a scope this call needs"
        else:
            reason = "the token is not permitted to do this (fine-grained tokens: grant Issues access)"
        return Refusal(code="insufficient_scope",
                       message="The token is not allowed to do this; use a token with the required scopes.",
                       details={"required_scopes": missing, "reason": reason})

    def unprocessable(self, resp: httpx.Response) -> tuple[str | None, str | None, str]:
        data = _body(resp)
        errors = data.get("errors") if isinstance(data, dict) else None
        first = errors[0] if isinstance(errors, list) and errors else None
        if not isinstance(first, dict):
            return None, None, "GitHub rejected the request as unprocessable"
        code = first.get("code") if isinstance(first.get("code"), str) else None
        raw_field = first.get("field")
        field = raw_field if isinstance(raw_field, str) and raw_field else None
        return field, code, _GITHUB_422_REASONS.get(code or "", "GitHub rejected this value")


def github_oauth_server(api_url: str) -> str:
    """GitHub's OAuth server for the API at `api_url`: github.com, or the Enterprise host."""
    parts = urlsplit(api_url)
    host = (parts.hostname or "").lower()
    if host == "api.github.com":
        return GITHUB_AUTHORIZATION_SERVER
    if parts.path.rstrip("/").endswith("/api/v3"):  # GitHub Enterprise Server
        return f"https://{parts.netloc}/login/oauth"
    if host.startswith("api.") and host.endswith(".ghe.com"):  # GHE.com (data residency)
        return f"https://{host.removeprefix('api.')}/login/oauth"
    return GITHUB_AUTHORIZATION_SERVER


def _read(operation_id: str, path: str, not_found: str = "not_found") -> Operation:
    return Operation(operation_id=operation_id, method="GET", path=path, not_found=not_found,
                     success_status=(200,))


GITHUB_REPOSITORY = _read("repos/get", "/repos/{owner}/{repo}", "repo_not_found")
GITHUB_TRUST = TrustChecks(
    private_field="private",
    permission=_read("repos/get-collaborator-permission-level",
                     "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    account_param="username",
    # the legacy base role: admin, write, read or none (maintain reads as write, triage as read)
    permission_field="permission",
    push_permissions=frozenset({"admin", "write"}),
    # author_association: the repository's owner is trusted; members and collaborators may have
    # read or triage access only, so they are asked about; NONE, CONTRIBUTOR, FIRST_TIMER,
    # FIRST_TIME_CONTRIBUTOR and MANNEQUIN cannot push
    owner_associations=frozenset({"OWNER"}),
    asked_associations=frozenset({"MEMBER", "COLLABORATOR"}),
)

GITHUB = ForgeProfile(
    name="github",
    display_name="GitHub",
    token_env="GITHUB_TOKEN",
    api_url_env="GITHUB_API_URL",
    default_api_url="https://api.github.com",
    auth_scheme="Bearer",
    # GitHub's media type first; plain JSON as well, which GitHub serves identically and which
    # mocks built from the OpenAPI description (whose responses say application/json) can
    # negotiate instead of answering 406
    accept="application/vnd.github+json, application/json;q=0.9",
    version_header="X-GitHub-Api-Version",
    default_api_version="2022-11-28",
    request_id_header="x-github-request-id",
    rate_limit=RateLimitHeaders(remaining="x-ratelimit-remaining", limit="x-ratelimit-limit",
                                reset="x-ratelimit-reset"),
    size_param="per_page",
    max_page_size=100,
    request_limit_s=10.0,  # "GitHub will terminate the request" after 10 s (REST API timeouts)
    parents=(ParentProbe(params=("owner", "repo"), path=GITHUB_REPOSITORY.path,
                         code="repo_not_found", operation_id=GITHUB_REPOSITORY.operation_id),),
    repository=GITHUB_REPOSITORY,
    viewer=_read("users/get-authenticated", "/user"),
    trust=GITHUB_TRUST,
    search_rows="items",  # {total_count, incomplete_results, items}
    row_repository=("repository_url", "repository.url"),  # issue hits; code hits
    repository_links=("repository_url", "url"),  # an issue's repository; any object's own URL
    # every search endpoint takes its query in `q`, where qualifiers say which repositories
    searches=(SearchScope(param="q", qualifiers=True),),
    errors=GitHubErrors(),
    token_rule="GitHub tokens are ASCII letters, digits and -._~+/= only",
    # classic, OAuth, user-to-server, server-to-server, refresh and fine-grained tokens
    token_prefixes=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    oauth_server=github_oauth_server,
    # GitHub OAuth scopes the issue tools use: `repo` (private repositories) or `public_repo`
    oauth_scopes=("repo", "public_repo"),
)


# -- Forgejo (and Gitea, which shares the API) ----------------------------------------------------

# `ctx.Error(403, "tokenRequiresScope", "token does not have at least one of required scope(s): [write:issue]")`
_FORGEJO_SCOPES = re.compile(r"required scope\(s\):\s*\[([^\]]*)\]")
# the binding layer's 422: "[Name]: Required" (Go field names of the request struct)
_FORGEJO_FIELD = re.compile(r"^\[([A-Za-z0-9_, ]+)\]:\s*(.*)$", re.DOTALL)


def _snake(go_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", go_name.strip()).lower()


class ForgejoErrors:
    """`{message, url}` (404s add `errors: []`); scope refusals name the scopes in the message."""

    def message(self, resp: httpx.Response) -> str:
        return _message(resp)

    def secondary_limit(self, message: str) -> bool:
        return False  # Forgejo has no secondary limit; a 429 is handled as a rate limit

    def refusal(self, resp: httpx.Response, message: str) -> Refusal:
        match = _FORGEJO_SCOPES.search(message)
        if match:
            scopes = [s for s in re.split(r"[\s,]+", match.group(1)) if s]
            return Refusal(code="insufficient_scope",
                           message="The token lacks a scope this call needs; use a token with the required scopes.",
                           details={"required_scopes": scopes,
                                    "reason": "the token lacks a scope this call needs"})
        return Refusal(code="insufficient_scope",
                       message="Forgejo refused: the token's user may not do this here (write access, "
                       "or organisation ownership for organisation labels, is needed).",
                       details={"reason": "the token's user lacks the permission this call needs"})

    def unprocessable(self, resp: httpx.Response) -> tuple[str | None, str | None, str]:
        message = _message(resp)
        match = _FORGEJO_FIELD.match(message)
        if match:
            first = match.group(1).split(",")[0]
            return _snake(first), None, "Forgejo rejected this value"
        return None, None, "Forgejo rejected the request as unprocessable"


def forgejo_oauth_server(api_url: str) -> str:
    """Forgejo is its own OAuth2 provider: the instance's root, i.e. the API URL without /api/v1."""
    parts = urlsplit(api_url)
    root = parts.path.rstrip("/").removesuffix("/api/v1")
    return f"{parts.scheme}://{parts.netloc}{root}"


FORGEJO_REPOSITORY = _read("repoGet", "/repos/{owner}/{repo}", "repo_not_found")
FORGEJO_TRUST = TrustChecks(
    private_field="private",
    # answered to site admins, the repository's admins and the account itself; anyone else gets
    # a 403, and the author's text stays withheld (trust_unknown)
    permission=_read("repoGetRepoPermissions",
                     "/repos/{owner}/{repo}/collaborators/{collaborator}/permission"),
    account_param="collaborator",
    # `perm.AccessMode` as text: none, read, write, admin or owner
    permission_field="permission",
    push_permissions=frozenset({"write", "admin", "owner"}),
    # issues and comments carry no author association: every author but the caller is asked about
)

FORGEJO = ForgeProfile(
    name="forgejo",
    display_name="Forgejo",
    token_env="FORGEJO_TOKEN",
    api_url_env="FORGEJO_API_URL",
    default_api_url=None,  # a token must never go to an instance the operator did not name
    auth_scheme="token",  # the documented scheme (AuthorizationHeaderToken); Bearer works too
    accept="application/json",
    version_header=None,
    default_api_version=None,
    request_id_header=None,
    rate_limit=None,
    size_param="limit",
    max_page_size=50,  # [api] MAX_RESPONSE_ITEMS default; larger limits are cut to it
    total_count_header="x-total-count",
    parents=(
        ParentProbe(params=("owner", "repo"), path=FORGEJO_REPOSITORY.path, code="repo_not_found",
                    operation_id=FORGEJO_REPOSITORY.operation_id),
        ParentProbe(params=("org",), path="/orgs/{org}", code="org_not_found", operation_id="orgGet"),
    ),
    repository=FORGEJO_REPOSITORY,
    # the issue search answers a plain list (nothing to screen) and, without `owner`, searches
    # every repository the token can read: under an allowlist it must name an allowed owner
    searches=(SearchScope(param="owner", path="/repos/issues/search"),),
    repository_links=("url",),  # an object's own API URL (issues, repository labels, comments)
    viewer=_read("userGetCurrent", "/user"),
    trust=FORGEJO_TRUST,
    errors=ForgejoErrors(),
    token_rule="Forgejo tokens are ASCII letters, digits and -._~+/= only",
    oauth_server=forgejo_oauth_server,
    oauth_scopes=("write:issue", "write:organization", "read:repository"),
)

FORGES: dict[str, ForgeProfile] = {p.name: p for p in (GITHUB, FORGEJO)}

