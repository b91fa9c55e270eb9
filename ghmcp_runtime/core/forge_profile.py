"""What differs between the forges a generated server can talk to, declared once per forge.

An override file names its forge (`server.forge`); the generated `ServerSpec` carries the profile
and the runtime reads everything forge-specific from it: where the API is and which environment
variables say so, how a token is sent, which media type and version header go with every
request, how a listing pages (parameter names, largest page, `Link` or a total-count header),
which headers carry rate limits, how the forge's error bodies read (`ErrorDialect`), which
parent resource a 404 may mean is missing, which read names the token's own account, and how
lockdown asks who may push (`TrustChecks`). The profiles themselves are in
`ghmcp_runtime.core.forges`; no other runtime module names a forge operation or API path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from ghmcp_runtime.core.operation import Operation

if TYPE_CHECKING:
    import httpx

    from ghmcp_runtime.core.operation import UpstreamResponse


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitHeaders:
    """The response headers that carry a token's request budget."""

    remaining: str
    limit: str
    reset: str  # epoch seconds when the budget refills


@dataclass(frozen=True, slots=True, kw_only=True)
class ParentProbe:
    """A 404 on an operation under `path` (all of `params` in its path) may mean that parent is
    missing: the runtime then reads `path` and answers `code` when that read is a 404 too."""

    params: tuple[str, ...]
    path: str
    code: str
    operation_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustChecks:
    """How lockdown (`ghmcp_runtime.guards.lockdown`) asks the forge whether an author may push to
    a repository: three reads, and how their answers read.

    The profile's `repository` read answers whether the repository is private (`private_field`
    true); `permission` (path `{owner}`, `{repo}` and `account_param`) answers an account's
    access in `permission_field`, one of `push_permissions` when it may push; the profile's
    `viewer` names the caller. A row's author association, when
    the forge sends one, saves questions: `owner_associations` are trusted, `asked_associations`
    are asked about, any other is untrusted; a forge without associations leaves both empty and
    every author is asked about.
    """

    private_field: str
    permission: Operation
    account_param: str
    permission_field: str
    push_permissions: frozenset[str]
    owner_associations: frozenset[str] = frozenset()
    asked_associations: frozenset[str] = frozenset()

    @property
    def associations(self) -> bool:
        """Whether the forge tells a row's author association at all."""
        return bool(self.owner_associations or self.asked_associations)


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchScope:
    """A request that searches beyond one repository, and the query parameter saying where: a
    repository allowlist confines it through that parameter (`RepoAllowlist.check_request`).

    `qualifiers`: the parameter is a query in GitHub's search syntax, confined by its
    `repo:`/`user:`/`org:`/`owner:` qualifiers; else it names an account, whose repositories
    must all be allowed (`owner/*`). `path` None: any request carrying the parameter; with a
    path, a request to it without the parameter (a search everywhere) is refused."""

    param: str
    qualifiers: bool = False
    path: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """How a 403 reads: the code (`insufficient_scope` or `issue_locked`), message, details."""

    code: str
    message: str
    details: Mapping[str, Any]


class ErrorDialect(Protocol):
    """Reading one forge's error answers."""

    def message(self, resp: httpx.Response) -> str:
        """The human message of an error body ("" when there is none)."""

    def secondary_limit(self, message: str) -> bool:
        """A 403 whose message says the client sent too much too fast."""

    def refusal(self, resp: httpx.Response, message: str) -> Refusal:
        """A 403 that is not a rate limit: what is missing (scopes) or what forbids it."""

    def unprocessable(self, resp: httpx.Response) -> tuple[str | None, str | None, str]:
        """A 422: (the request-body field it names, the forge's own error code, a reason)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ForgeProfile:
    name: str  # the override file's `server.forge`
    display_name: str  # what messages call the forge ("GitHub")
    token_env: str  # the operator's token (stdio)
    api_url_env: str
    default_api_url: str | None  # None: the operator must say which instance
    auth_scheme: str  # Authorization: <scheme> <token>
    accept: str
    version_header: str | None  # the API version header, sent with `api_version`
    default_api_version: str | None
    request_id_header: str | None  # the forge's id of a request, logged beside ours
    rate_limit: RateLimitHeaders | None
    secondary_limit_wait_s: int = 60  # suggested wait on a 429 or secondary limit without a hint
    page_param: str = "page"
    size_param: str
    max_page_size: int  # the largest page the forge serves; lookups read pages this size
    total_count_header: str | None = None  # a listing's total, when the forge sends one
    # the forge ends a request that runs longer than this, so a write lands within it of being
    # sent even when the client gave up sooner (recovery's window after a lost answer)
    request_limit_s: float = 60.0
    parents: tuple[ParentProbe, ...] = ()
    # reads one repository (path `{owner}`, `{repo}`); its path is also how the API URLs in
    # answers name a repository (`repository_of`)
    repository: Operation
    viewer: Operation  # reads the token's own account; its answer names it in `login_field`
    login_field: str = "login"
    # None: the forge cannot tell who may push, so lockdown is refused (at generation and at start)
    trust: TrustChecks | None = None
    # where a search answer holds its rows, and each row's field naming its repository (an API
    # URL): rows outside a repository allowlist are dropped. None: the forge's searches are
    # confined by their request alone (the answer is not screened)
    search_rows: str | None = None
    row_repository: tuple[str, ...] = ()  # dotted paths tried in order (issue and code hits differ)
    # the fields of an answer's objects that name, as an API URL, the repository the object
    # belongs to: under a repository allowlist, one naming another repository is left out
    repository_links: tuple[str, ...] = ()
    searches: tuple[SearchScope, ...] = ()
    errors: ErrorDialect
    token_rule: str  # what a well-formed token looks like, for the malformed-token refusal
    # how the forge's tokens begin, when they carry a recognisable prefix: logs redact any word
    # starting so (a Forgejo token is 40 hex digits, which a commit id is too: it has none)
    token_prefixes: tuple[str, ...] = ()
    oauth_server: Callable[[str], str]  # the authorization server for an API URL (RFC 9728)
    oauth_scopes: tuple[str, ...]  # scopes the protected-resource metadata advertises

    def repository_of(self, url: str) -> tuple[str, str] | None:
        """(owner, repo) of the repository an API URL names (GitHub, Forgejo: `…/repos/o/r…`)."""
        found = _repository_pattern(self.repository.path).search(url)
        return (found["owner"], found["repo"]) if found else None

    def page_query(self, page: int, size: int) -> dict[str, int]:
        return {self.size_param: size, self.page_param: page}

    def has_more(self, resp: UpstreamResponse, page: int, size: int) -> bool:
        """Whether a listing has a page after `page` (of `size` rows): the `Link` header's
        `rel="next"`, or else the total-count header."""
        if 'rel="next"' in resp.headers.get("link", ""):
            return True
        total = self.total_count(resp)
        return total is not None and page * size < total

    def total_count(self, resp: UpstreamResponse) -> int | None:
        """A listing's total as the forge reports it (None: it does not, or not parseably)."""
        raw = resp.headers.get(self.total_count_header) if self.total_count_header else None
        return int(raw) if raw is not None and raw.strip().isdigit() else None

    def headers(self, api_version: str | None) -> dict[str, str]:
        out = {"Accept": self.accept}
        version = api_version or self.default_api_version
        if self.version_header and version:
            out[self.version_header] = version
        return out

    def authorization(self, token: str) -> str:
        return f"{self.auth_scheme} {token}"


@cache
def _repository_pattern(path: str) -> re.Pattern[str]:
    """A repository read's path as a pattern: `{owner}` and `{repo}` as the groups of those names."""
    pattern = re.escape(path)
    for name, part in (("owner", "[^/]+"), ("repo", "[^/?#]+")):
        pattern = pattern.replace(re.escape("{" + name + "}"), f"(?P<{name}>{part})", 1)
    return re.compile(pattern)
