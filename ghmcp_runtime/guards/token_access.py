"""Which tools a caller's token can use, from what the forge told of it.

`TokenAccess` is what the runtime knows of one token: its kind (by prefix: the forge profile's
`ScopeModel.kind`) and, when the forge tells them, its OAuth scopes (`calls.scope_read` reads
them with one cheap request, `serving.access_book` keeps them per caller). `hidden` names the
tools a caller's surface leaves out (`ExposurePolicy.with_access` removes them, with every tool
that runs one of them):

* the forge told the token's scopes (GitHub's classic and OAuth-app tokens, a Forgejo token that
  may read its own account): every tool one of whose required scopes they do not grant. Tools
  that need no scope stay (GitHub answers public-repository reads to any token). A caller that
  can step its token up (an OAuth-app token over HTTP, `can_step_up`) keeps them instead: a call
  is answered with the scope challenge (`serving.tool_calls`), and its client may ask for more;
* an installation token (a GitHub App's, Actions' GITHUB_TOKEN): every tool acting on the
  token's own account (`user_context`), which it does not have;
* otherwise (fine-grained and App user tokens, whose permissions the API never lists, or scopes
  that could not be read): nothing. The forge refuses what the token may not do, and the tool
  answers `insufficient_scope`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ghmcp_runtime.core.model import ToolSpec
from ghmcp_runtime.core.token_scopes import ScopeModel, TokenKind, ToolScopes

# kinds whose client obtained the token from an authorization server it can go back to
STEP_UP_KINDS: frozenset[TokenKind] = frozenset({"oauth"})
# kinds whose permissions no answer of the forge lists: never asked about
UNLISTED: frozenset[TokenKind] = frozenset({"fine_grained", "app_user", "installation", "refresh"})


@dataclass(frozen=True, slots=True)
class TokenAccess:
    kind: TokenKind
    scopes: frozenset[str] | None = None  # what the forge told; None: it does not say

    def can_step_up(self, over_http: bool) -> bool:
        return over_http and self.kind in STEP_UP_KINDS and self.scopes is not None

    def missing(self, tool: ToolSpec, model: ScopeModel) -> tuple[str, ...]:
        """The tool's required scopes this token's scopes do not grant (none when unknown)."""
        needs = ToolScopes.of(tool.meta)
        if needs is None or self.scopes is None:
            return ()
        return needs.missing(model, self.scopes)

    def describe(self) -> str:
        """For logs: the kind, and the scopes when known."""
        return self.kind if self.scopes is None else f"{self.kind}: {','.join(sorted(self.scopes)) or '-'}"


def hidden(tools: Iterable[ToolSpec], access: TokenAccess, model: ScopeModel, *,
           step_up: bool = False) -> frozenset[str]:
    """The tools a caller holding a token of `access` does not see (`step_up`: it can ask for
    more scopes, so a missing one is challenged when called instead)."""
    out = set()
    for tool in tools:
        needs = ToolScopes.of(tool.meta)
        if needs is None:
            continue
        if (access.kind == "installation" and needs.user_context) or (not step_up and access.missing(tool, model)):
            out.add(tool.name)
    return frozenset(out)
