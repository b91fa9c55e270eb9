"""The repository allowlist (`--repos owner/repo,owner/*`): which repositories calls may reach.

It is enforced before anything is sent: on a call's `owner`/`repo` arguments, on a resource URI's
variables, on every upstream request whose path names a repository (`ToolContext.call`), and on
search queries, which are confined to the allowlist with `repo:`/`user:` qualifiers. A query
that names another repository or owner is refused, never rewritten. Names compare without
letter case, as GitHub's do.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ghmcp_runtime.core.errors import ToolError
from ghmcp_runtime.core.forge_profile import ForgeProfile
from ghmcp_runtime.core.logs import log_event
from ghmcp_runtime.core.model import ErrorCode
from ghmcp_runtime.core.operation import UpstreamResponse

OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
REPO = re.compile(r"(?!\.{1,2}$)[A-Za-z0-9._-]{1,100}")
# search qualifiers that say where to search; any other qualifier only filters
SCOPE_QUALIFIERS = frozenset({"repo", "user", "org", "owner"})
# as GitHub reads a query: `-key:value`, `key:"quoted value"`, "a phrase", or a bare word
_TOKEN = re.compile(
    r"""(?P<neg>-)?(?:(?P<key>[A-Za-z_]+):(?P<val>"[^"]*"?|\S+)|(?P<phrase>"[^"]*"?)|(?P<word>\S+))"""
)

# a scope qualifier glued to the text before it by punctuation (`x,repo:a/b`): where GitHub's
# own reading splits the word is unknown, so it counts as a term of its own
_GLUED = re.compile(r'(?<![A-Za-z0-9_])(?P<key>repo|user|org|owner):(?P<val>"[^"]*"?|[^\s"]+)', re.IGNORECASE)
# parentheses outside quotes group terms on GitHub: read as spaces, `(x)repo:y` is two terms
_UNGROUPED = re.compile(r'"[^"]*"?|[()]')


def _ungroup(m: re.Match[str]) -> str:
    return m.group(0) if m.group(0).startswith('"') else " "


def scope_terms(q: str) -> Iterator[tuple[bool, str, str]]:
    """(negated, qualifier, value) of each term of `q` that says where to search (repo:, user:,
    org:, owner:), read as GitHub reads a query: the same tokenizer confines queries to the
    allowlist, so the two can never disagree on what a term is. A term negated inside a group
    (`NOT (repo:x)`) counts as not negated: refusing more is the safe side."""
    negate_next = False
    for m in _TOKEN.finditer(_UNGROUPED.sub(_ungroup, q)):
        negated = bool(m.group("neg")) or negate_next
        negate_next = m.group("word") == "NOT"
        key = m.group("key")
        if key is not None and key.lower() in SCOPE_QUALIFIERS:
            yield negated, key.lower(), m.group("val").strip('"')
        for glued in _glued(m):
            yield False, *glued


def _glued(m: re.Match[str]) -> Iterator[tuple[str, str]]:
    """(qualifier, value) of each scope qualifier glued inside a token's bare text: a word, or
    the unquoted value of another qualifier (`label:x,repo:a/b`)."""
    key = m.group("key")
    text = m.group("word") if key is None else "" if key.lower() in SCOPE_QUALIFIERS else m.group("val")
    if text and not text.startswith('"'):
        for g in _GLUED.finditer(text):
            yield g.group("key").lower(), g.group("val").strip('"')


REPO_NOT_ALLOWED = ErrorCode(
    code="repo_not_allowed",
    temporary=False,
    description="The repository is outside this server's repository allowlist "
                "(details.allowed_repositories); nothing was sent.",
    repair="Call again with a repository from details.allowed_repositories (owner/* allows every "
           "repository of that owner).",
)


@dataclass(frozen=True, slots=True)
class RepoAllowlist:
    """Allowed repositories: whole owners (`owner/*`) and single repositories, lower-cased."""

    owners: frozenset[str]
    repos: frozenset[tuple[str, str]]  # never one an entry in `owners` already covers

    @classmethod
    def parse(cls, entries: Iterable[str]) -> RepoAllowlist:
        """From `owner/repo` and `owner/*` entries (ValueError for anything else)."""
        owners: set[str] = set()
        repos: set[tuple[str, str]] = set()
        for raw in entries:
            entry = raw.strip()
            owner, slash, repo = entry.partition("/")
            if not slash or not OWNER.fullmatch(owner) or not (repo == "*" or REPO.fullmatch(repo)):
                shown = entry if len(entry) <= 140 and entry.isprintable() else "an entry"
                raise ValueError(f"repository allowlist: {shown!r} is not owner/repo or owner/*")
            if repo == "*":
                owners.add(owner.lower())
            else:
                repos.add((owner.lower(), repo.lower()))
        if not owners and not repos:
            raise ValueError("repository allowlist: no repositories given")
        return cls(frozenset(owners), frozenset(r for r in repos if r[0] not in owners))

    def allows(self, owner: str, repo: str) -> bool:
        owner = owner.lower()
        return owner in self.owners or (owner, repo.lower()) in self.repos

    def allows_owner(self, owner: str) -> bool:
        """Every repository of `owner` (what `user:owner` in a search reaches)."""
        return owner.lower() in self.owners

    def names_owner(self, owner: str) -> bool:
        """Some repository of `owner` is allowed."""
        owner = owner.lower()
        return owner in self.owners or any(o == owner for o, _ in self.repos)

    def patterns(self) -> tuple[str, ...]:
        return tuple(sorted([f"{o}/*" for o in self.owners] + [f"{o}/{r}" for o, r in self.repos]))

    def single_owner(self) -> str | None:
        owners = self.owners | {o for o, _ in self.repos}
        return next(iter(owners)) if len(owners) == 1 else None

    def intersect(self, other: RepoAllowlist) -> RepoAllowlist:
        """What both allow (a request's allowlist within the server's)."""
        owners = self.owners & other.owners
        repos = {r for r in self.repos | other.repos if self.allows(*r) and other.allows(*r)}
        return RepoAllowlist(frozenset(owners), frozenset(r for r in repos if r[0] not in owners))

    def qualifiers(self) -> str:
        """Search qualifiers reaching exactly the allowlist (GitHub ORs several of them)."""
        return " ".join([f"user:{o}" for o in sorted(self.owners)]
                        + [f"repo:{o}/{r}" for o, r in sorted(self.repos)])

    # -- refusals ---------------------------------------------------------------------------

    def refusal(self, field: str, reason: str = "outside the repository allowlist") -> ToolError:
        return ToolError(
            REPO_NOT_ALLOWED.code,
            "This server only reaches the repositories in details.allowed_repositories; "
            "nothing was sent.",
            details={"field": field, "reason": reason,
                     "allowed_repositories": list(self.patterns())},
        )

    def check_arguments(self, args: Mapping[str, Any], field: str | None = None) -> None:
        """Refuse arguments (or URI variables) naming a repository outside the allowlist; an
        organisation (`org`, e.g. its labels, which reach all its repositories) needs `org/*`."""
        org = args.get("org")
        if isinstance(org, str) and not self.allows_owner(org):
            raise self.refusal(field or "org", "the organisation is not allowed as a whole (org/*)")
        owner, repo = args.get("owner"), args.get("repo")
        if not isinstance(owner, str):
            return
        if isinstance(repo, str):
            if not self.allows(owner, repo):
                raise self.refusal(field or "repo")
        elif not self.allows_owner(owner):
            raise self.refusal(field or "owner")

    def allows_context(self, chosen: Mapping[str, str]) -> bool:
        """Whether the owner/repo a completion was given (if any) are inside the allowlist."""
        owner, repo = chosen.get("owner"), chosen.get("repo")
        if owner and repo:
            return self.allows(owner, repo)
        return not owner or self.names_owner(owner)

    def check_request(self, path_template: str, path: Mapping[str, str | int],
                      query: Mapping[str, Any] | None, forge: ForgeProfile) -> None:
        """Refuse an upstream request that could reach outside the allowlist: by the owner,
        repository or organisation it names (path or query `owner`), or, for a search, by
        where the forge's profile says it searches (`ForgeProfile.searches`)."""
        if "{org}" in path_template:
            self.check_arguments({"org": str(path.get("org", ""))}, field="org")
        if "{owner}" in path_template:
            self.check_arguments({k: str(v) for k, v in path.items() if k in ("owner", "repo")},
                                 field="repo" if "{repo}" in path_template else "owner")
            return
        query = query or {}
        if isinstance(query.get("owner"), str):  # an account named in the query, on any forge
            self.check_arguments({"owner": query["owner"]}, field="owner")
        for search in forge.searches:
            if search.path is not None and search.path != path_template:
                continue
            value = query.get(search.param)
            if not isinstance(value, str):
                if search.path is not None:
                    raise self.refusal(search.param, "the search is not confined to the "
                                       "repository allowlist (it names no owner)")
            elif search.qualifiers and not self._scoped(value):
                raise self.refusal("query", "the search is not confined to the repository allowlist")
            elif not search.qualifiers:
                self.check_arguments({"owner": value}, field=search.param)

    def screen(self, resp: UpstreamResponse, forge: ForgeProfile) -> tuple[UpstreamResponse, int]:
        """The answer without what names a repository outside the allowlist, and how many rows
        were left out. A row (an element of a list: a sub-issue, a blocker, a search row) that
        names another repository, itself or anything inside it, by the forge profile's
        `repository_links`, is left out and counted; an object that is not one row of many (the
        answer itself, a parent) naming one is refused (`repo_not_allowed`), since leaving it
        out would change what the answer says. Search rows must also name an allowed repository
        (`search_rows`, `row_repository`): a confined query never returns any from elsewhere,
        so this catches a query the forge read differently than `confine` did."""
        data, dropped = resp.data, 0
        if self._foreign(data, forge):  # the common case is one cheap walk: nothing to leave out
            data, dropped = self._kept(data, forge)
        key, fields = forge.search_rows, forge.row_repository
        items = data.get(key) if key and fields and isinstance(data, dict) else None
        if isinstance(items, list) and fields:
            kept = [row for row in items if self._row_allowed(row, fields, forge)]
            dropped, data = dropped + len(items) - len(kept), {**data, key: kept}
        if not dropped:
            return resp, 0
        log_event("allowlist_screened", level=logging.WARNING, dropped=dropped)
        return replace(resp, data=data), dropped

    def _kept(self, value: Any, forge: ForgeProfile) -> tuple[Any, int]:
        """`value` (which names another repository somewhere) without the rows that do, and
        how many those were; refused when `value` is an object naming one itself."""
        if isinstance(value, list):
            kept = [item for item in value if not self._foreign(item, forge)]
            return kept, len(value) - len(kept)
        assert isinstance(value, dict)
        if self._names_other(value, forge):
            raise self.refusal("repo", f"{forge.display_name}'s answer is about a repository "
                               "outside the allowlist; nothing of it is returned")
        out, dropped = dict(value), 0
        for key, item in value.items():
            if isinstance(item, dict | list) and self._foreign(item, forge):
                out[key], n = self._kept(item, forge)
                dropped += n
        return out, dropped

    def _foreign(self, value: Any, forge: ForgeProfile) -> bool:
        """Whether `value` or anything inside it names a repository outside the allowlist."""
        stack = [value]
        children: Iterable[Any]
        while stack:
            item = stack.pop()
            if type(item) is dict:
                if self._names_other(item, forge):
                    return True
                children = item.values()
            elif type(item) is list:
                children = item
            else:
                continue
            for child in children:
                if type(child) is dict or type(child) is list:
                    stack.append(child)
        return False

    def _names_other(self, obj: Mapping[str, Any], forge: ForgeProfile) -> bool:
        for link in forge.repository_links:
            url = obj.get(link)
            named = forge.repository_of(url) if isinstance(url, str) else None
            if named is not None and not self.allows(*named):
                return True
        return False

    def _row_allowed(self, row: Any, fields: tuple[str, ...], forge: ForgeProfile) -> bool:
        for field in fields:
            url: Any = row
            for key in field.split("."):
                url = url.get(key) if isinstance(url, dict) else None
            repository = forge.repository_of(url) if isinstance(url, str) else None
            if repository is not None:
                return self.allows(*repository)
        return False

    # -- search ------------------------------------------------------------------------------

    def confine(self, q: str) -> str:
        """`q` confined to the allowlist: unchanged when it already names allowed repositories or
        owners, else with the allowlist's qualifiers appended. A query naming a repository or
        owner outside it, or using OR/parentheses (which could take terms out of the appended
        scope), is refused."""
        if self._scoped(q):
            return q
        return f"{q} {self.qualifiers()}" if q.strip() else self.qualifiers()

    def _scoped(self, q: str) -> bool:
        """Whether `q` names where to search, all of it inside the allowlist (else refused)."""
        scoped = False
        negate_next = False
        for m in _TOKEN.finditer(q):
            negated = bool(m.group("neg")) or negate_next
            negate_next = False
            if m.group("phrase") is not None:
                continue
            for glued_key, glued_value in _glued(m):
                if not self._scope_allowed(glued_key, glued_value):
                    raise self.refusal("query", "the query names a repository or owner outside "
                                       "the repository allowlist")
            key, value = m.group("key"), m.group("val")
            if key is not None and key.lower() in SCOPE_QUALIFIERS:
                if not self._scope_allowed(key.lower(), value.strip('"')):
                    raise self.refusal("query", "the query names a repository or owner outside "
                                       "the repository allowlist")
                scoped = scoped or not negated
                continue
            bare = m.group("word") if key is None else ("" if value.startswith('"') else value)
            if bare == "NOT":
                negate_next = True
            elif bare == "OR" or "(" in bare or ")" in bare:
                raise ToolError(
                    "invalid_field",
                    "With a repository allowlist, searches cannot use OR or parentheses outside "
                    "quotes: run one search per alternative.",
                    details={"field": "query",
                             "reason": "OR and grouping cannot be confined to the allowlist"},
                )
        return scoped

    def _scope_allowed(self, key: str, value: str) -> bool:
        if key == "repo":
            owner, slash, repo = value.partition("/")
            return bool(slash) and OWNER.fullmatch(owner) is not None \
                and REPO.fullmatch(repo) is not None and self.allows(owner, repo)
        return OWNER.fullmatch(value) is not None and self.allows_owner(value)

    # -- completions -------------------------------------------------------------------------

    def completions(self, variable: str, values: Sequence[str], owner: str | None) -> list[str]:
        """The completion values that name nothing outside the allowlist."""
        if variable == "owner":
            return [v for v in values if self.names_owner(v)]
        if variable != "repo":
            return list(values)
        if owner:
            return [v for v in values if self.allows(owner, v)]
        # without an owner a name cannot be placed: only names the allowlist spells out
        exact = {r for _, r in self.repos}
        return [v for v in values if v.lower() in exact]


def parse_entries(text: str | None) -> tuple[str, ...]:
    """`a/b, c/*` (a flag, an environment variable or a header) -> its entries."""
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())
