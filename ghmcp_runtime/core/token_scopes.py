"""What a tool needs of a token, and how one forge's scopes grant one another.

A forge profile's `ScopeModel` holds what is true of every token of the forge: which OAuth scopes
exist and which grant which (GitHub's `repo` grants `public_repo`, Forgejo's `write:issue` grants
`read:issue`), which scope reaches private repositories, what a declaration must name for a
write, which paths act on the token's own account, and what a token's prefix says it is.

A tool's `ToolScopes` is derived by the generator from the declarations of the operations it
calls and published in its `_meta` under `SCOPES_META`: every scope of `required` (or one that
grants it) is needed; `accepted` lists every scope that satisfies one of them; `fine_grained`
lists GitHub's fine-grained permissions, one requirement each (`issues:write|pull_requests:write`:
either), which fine-grained tokens and GitHub Apps need and the API never lists; `user_context`:
the tool acts on the token's own account, which an installation token (an App's, Actions'
GITHUB_TOKEN) does not have.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

SCOPES_META = "ghmcp/scopes"

# classic: a personal access token with OAuth scopes; oauth: an OAuth app's token (the client got
# it through an authorization server, so it can ask for more); fine_grained / app_user /
# installation: permissions, not scopes, which the API does not list; refresh: never a bearer
TokenKind = Literal["classic", "oauth", "fine_grained", "app_user", "installation", "refresh", "unknown"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScopeModel:
    names: frozenset[str]
    grants: Mapping[str, frozenset[str]]  # scope -> the scopes it grants directly
    write_scope: str  # a pattern one OAuth scope of a write's declaration must match
    user_paths: str  # a pattern of the paths of operations acting on the token's own account
    read_scope: str | None = None  # ... of a read's (None: a read may need no scope)
    write_permission: str | None = None  # ... every fine-grained alternative of a write; None: none
    private_scope: str | None = None  # the scope private repositories need besides (GitHub: repo)
    prefixes: tuple[tuple[str, TokenKind], ...] = ()
    unprefixed: TokenKind = "unknown"
    legacy: str | None = None  # a pattern of the forge's unprefixed classic tokens
    _closure: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def granted(self, scopes: Iterable[str]) -> frozenset[str]:
        """`scopes` and every scope they grant, transitively."""
        out: set[str] = set()
        for scope in scopes:
            out |= self._grants_of(scope)
        return frozenset(out)

    def _grants_of(self, scope: str) -> frozenset[str]:
        known = self._closure.get(scope)
        if known is None:
            seen, todo = {scope}, [scope]
            while todo:
                for child in self.grants.get(todo.pop(), frozenset()):
                    if child not in seen:
                        seen.add(child)
                        todo.append(child)
            known = self._closure[scope] = frozenset(seen)
        return known

    def accepted(self, scope: str) -> frozenset[str]:
        """Every scope that grants `scope`, itself included."""
        return frozenset(s for s in (*self.names, scope) if scope in self._grants_of(s))

    def minimal(self, scopes: Iterable[str]) -> tuple[str, ...]:
        """`scopes` without those another of them grants, sorted."""
        wanted = set(scopes)
        return tuple(sorted(s for s in wanted
                            if not any(o != s and s in self._grants_of(o) for o in wanted)))

    def kind(self, token: str) -> TokenKind:
        for prefix, kind in self.prefixes:
            if token.startswith(prefix):
                return kind
        if self.legacy is not None and re.fullmatch(self.legacy, token):
            return "classic"
        return self.unprefixed


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolScopes:
    required: tuple[str, ...] = ()
    accepted: tuple[str, ...] = ()
    fine_grained: tuple[str, ...] = ()
    user_context: bool = False

    def meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {"required": list(self.required), "accepted": list(self.accepted)}
        if self.fine_grained:
            out["fine_grained"] = list(self.fine_grained)
        if self.user_context:
            out["user_context"] = True
        return out

    @classmethod
    def of(cls, meta: Mapping[str, Any]) -> ToolScopes | None:
        """The scopes a tool's `_meta` publishes; None when it publishes none."""
        raw = meta.get(SCOPES_META)
        return cls.read(raw) if isinstance(raw, Mapping) else None

    @classmethod
    def read(cls, raw: Mapping[str, Any]) -> ToolScopes:
        """From what `meta()` wrote."""
        return cls(required=tuple(raw.get("required", ())), accepted=tuple(raw.get("accepted", ())),
                   fine_grained=tuple(raw.get("fine_grained", ())),
                   user_context=bool(raw.get("user_context", False)))

    def text(self, quote: Callable[[str], str] = lambda s: f"`{s}`") -> str:
        """In words: OAuth scopes (and what else satisfies them), fine-grained permissions,
        whether it acts on the token's own account."""
        parts = [", ".join(map(quote, self.required)) if self.required else "no OAuth scope"]
        others = [s for s in self.accepted if s not in self.required]
        if others:  # each required scope is needed; any accepted one grants one of them
            word = "or" if len(self.required) == 1 else "each also granted by one of"
            parts[0] += f" ({word} {', '.join(map(quote, others))})"
        if self.fine_grained:
            parts.append("fine-grained " + ", ".join(" or ".join(map(quote, f.split("|")))
                                                     for f in self.fine_grained))
        if self.user_context:
            parts.append("acts on the token's own account")
        return "; ".join(parts)

    def missing(self, model: ScopeModel, held: Iterable[str]) -> tuple[str, ...]:
        """The required scopes `held` does not grant."""
        granted = model.granted(held)
        return tuple(s for s in self.required if s not in granted)


_LEVELS = {"read": 0, "write": 1, "admin": 2}


def combined(parts: Iterable[ToolScopes], model: ScopeModel) -> ToolScopes:
    """What needing each of `parts` needs (a tool's operations, a batch's tools, a selection of
    tools): all of it, without a scope or permission another one it needs grants."""
    items = list(parts)
    required = model.minimal(s for p in items for s in p.required)
    accepted = sorted({a for s in required for a in model.accepted(s)})
    needs = {frozenset(f.split("|")) for p in items for f in p.fine_grained}
    kept = {n for n in needs if not any(o != n and _implies(o, n) for o in needs)}
    return ToolScopes(required=required, accepted=tuple(accepted),
                      fine_grained=tuple(sorted("|".join(sorted(n)) for n in kept)),
                      user_context=any(p.user_context for p in items))


def _implies(have: frozenset[str], need: frozenset[str]) -> bool:
    """Whatever satisfies `have` satisfies `need`: each of its permissions grants one of `need`'s
    (the same permission at the same or a higher level)."""
    return all(any(_grants(h, n) for n in need) for h in have)


def _grants(have: str, need: str) -> bool:
    h_name, _, h_level = have.partition(":")
    n_name, _, n_level = need.partition(":")
    return h_name == n_name and _LEVELS.get(h_level, -1) >= _LEVELS.get(n_level, 99)
