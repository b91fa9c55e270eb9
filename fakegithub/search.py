"""A useful subset of GitHub's issue search syntax (`q` of `GET /search/issues`).

Supported: `repo:o/r` (several = OR), `user:`/`org:`, `is:`/`type:`/`state:` (issue, pr,
pull-request, open, closed, locked, unlocked, merged, unmerged, draft), `label:x`,
`label:"multi word"`, `label:a,b` (= a OR b; several label terms = AND), `author:`, `assignee:`,
`commenter:`, `mentions:`, `involves:`, `no:label|assignee|milestone`, `milestone:"title"`,
`in:title|body|comments`, `created:`/`updated:`/`closed:` (`>`, `>=`, `<`, `<=`, `a..b`, `*`,
`YYYY-MM-DD` = whole UTC day, or an ISO datetime), `comments:` (same operators, integers),
`sort:created-asc` style, `-qualifier:value` and `NOT term` negation, `AND` (ignored: terms are
ANDed anyway), quoted phrases and bare words (case-insensitive substring match on title and
body unless `in:` says otherwise). Unknown qualifiers are searched as text like GitHub does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from fakegithub.clock import parse_time
from fakegithub.state import Issue, Repo, State, label_key

MAX_QUERY_LENGTH = 256
QUALIFIERS = frozenset(
    {
        "repo", "user", "org", "is", "type", "state", "label", "author", "assignee", "commenter",
        "mentions", "involves", "no", "milestone", "in", "created", "updated", "closed", "comments",
        "sort",
    }
)
_TOKEN = re.compile(
    r"""(?P<neg>-)?(?:(?P<key>[A-Za-z_]+):(?P<val>"[^"]*"?|\S+)|(?P<phrase>"[^"]*"?)|(?P<word>\S+))"""
)


class QueryError(ValueError):
    """The query cannot be run (GitHub answers 422)."""


@dataclass(frozen=True, slots=True)
class Term:
    key: str | None  # None = free text
    value: str
    negated: bool = False


@dataclass
class Query:
    terms: list[Term] = field(default_factory=list)
    sort: str | None = None  # from a `sort:` qualifier, e.g. "created"
    order: str | None = None

    def values(self, key: str, *, negated: bool = False) -> list[str]:
        return [t.value for t in self.terms if t.key == key and t.negated == negated]

    @property
    def repos(self) -> list[str]:
        return self.values("repo")


def _unquote(text: str) -> str:
    if text.startswith('"'):
        text = text[1:]
        if text.endswith('"'):
            text = text[:-1]
    return text


def parse(q: str) -> Query:
    if len(q) > MAX_QUERY_LENGTH:
        raise QueryError(f"The search is longer than {MAX_QUERY_LENGTH} characters.")
    query = Query()
    negate_next = False
    for m in _TOKEN.finditer(q):
        negated = bool(m.group("neg")) or negate_next
        negate_next = False
        key = m.group("key")
        if key is not None and key.lower() in QUALIFIERS:
            key = key.lower()
            value = _unquote(m.group("val"))
            if key == "sort":
                sort, _, order = value.lower().partition("-")
                query.sort, query.order = sort, order or "desc"
                continue
            if key in ("created", "updated", "closed"):
                _date_predicate(value)  # validate early
            if key == "comments":
                _number_predicate(value)
            query.terms.append(Term(key, value, negated))
            continue
        if m.group("phrase") is not None:
            query.terms.append(Term(None, _unquote(m.group("phrase")), negated))
            continue
        text = m.group(0)[1:] if m.group("neg") else m.group(0)
        if text in ("AND", "OR"):
            continue
        if text == "NOT":
            negate_next = True
            continue
        query.terms.append(Term(None, text, negated))
    return query


# comparisons --------------------------------------------------------------------------------

_OP = re.compile(r"^(>=|<=|>|<)?(.*)$")


def _compare(op: str, left: float | date | datetime, right: float | date | datetime) -> bool:
    if op == ">":
        return left > right  # type: ignore[operator]
    if op == ">=":
        return left >= right  # type: ignore[operator]
    if op == "<":
        return left < right  # type: ignore[operator]
    if op == "<=":
        return left <= right  # type: ignore[operator]
    return left == right


def _date_bound(text: str) -> date | datetime:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return date.fromisoformat(text)
    try:
        return parse_time(text)
    except ValueError as exc:
        raise QueryError(f"Invalid date in search query: {text!r}") from exc


def _at(when: datetime, bound: date | datetime) -> date | datetime:
    """Compare whole UTC days against a date bound, exact instants against a datetime bound."""
    return when.date() if not isinstance(bound, datetime) else when


def _date_predicate(value: str) -> Callable[[datetime | None], bool]:
    if ".." in value:
        low_text, _, high_text = value.partition("..")
        low = None if low_text in ("", "*") else _date_bound(low_text)
        high = None if high_text in ("", "*") else _date_bound(high_text)

        def in_range(when: datetime | None) -> bool:
            if when is None:
                return False
            ok_low = low is None or _compare(">=", _at(when, low), low)
            return ok_low and (high is None or _compare("<=", _at(when, high), high))

        return in_range
    m = _OP.match(value)
    assert m is not None
    op, bound = m.group(1) or "=", _date_bound(m.group(2))
    return lambda when: when is not None and _compare(op, _at(when, bound), bound)


def _number_predicate(value: str) -> Callable[[int], bool]:
    try:
        if ".." in value:
            low_text, _, high_text = value.partition("..")
            low = None if low_text in ("", "*") else int(low_text)
            high = None if high_text in ("", "*") else int(high_text)
            return lambda n: (low is None or n >= low) and (high is None or n <= high)
        m = _OP.match(value)
        assert m is not None
        op, bound = m.group(1) or "=", int(m.group(2))
    except ValueError as exc:
        raise QueryError(f"Invalid number in search query: {value!r}") from exc
    return lambda n: _compare(op, n, bound)


# matching ------------------------------------------------------------------------------------


def _is(value: str, repo: Repo, item: Issue) -> bool:
    v = value.lower()
    checks: dict[str, Callable[[], bool]] = {
        "issue": lambda: not item.is_pull_request,
        "pr": lambda: item.is_pull_request,
        "pull-request": lambda: item.is_pull_request,
        "open": lambda: item.state == "open",
        "closed": lambda: item.state == "closed",
        "locked": lambda: item.locked,
        "unlocked": lambda: not item.locked,
        "merged": lambda: item.merged_at is not None,
        "unmerged": lambda: item.is_pull_request and item.merged_at is None,
        "draft": lambda: item.draft,
        "public": lambda: not repo.private,
        "private": lambda: repo.private,
    }
    check = checks.get(v)
    return True if check is None else check()


def _same(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


def _mentions(item: Issue, login: str) -> bool:
    pattern = re.compile(rf"@{re.escape(login)}\b", re.IGNORECASE)
    texts = [item.body or "", *(c.body for c in item.comments)]
    return any(pattern.search(t) for t in texts)


def _qualifier(term: Term, state: State, repo: Repo, item: Issue) -> bool:
    key, value = term.key, term.value
    if key == "repo":
        return _same(value, repo.full_name)
    if key in ("user", "org"):
        return _same(value, repo.owner)
    if key in ("is", "type", "state"):
        return _is(value, repo, item)
    if key == "label":
        names = {label_key(n) for n in repo.label_names(item)}
        return any(label_key(v.strip()) in names for v in value.split(","))
    if key == "author":
        return _same(value, item.author)
    if key == "assignee":
        return any(_same(value, a) for a in item.assignees)
    if key == "commenter":
        return any(_same(value, c.author) for c in item.comments)
    if key == "mentions":
        return _mentions(item, value)
    if key == "involves":
        return (_same(value, item.author) or any(_same(value, a) for a in item.assignees)
                or any(_same(value, c.author) for c in item.comments) or _mentions(item, value))
    if key == "no":
        missing = {
            "label": not item.label_ids,
            "assignee": not item.assignees,
            "milestone": item.milestone is None,
        }
        return missing.get(value.lower(), True)
    if key == "milestone":
        ms = repo.milestones.get(item.milestone) if item.milestone is not None else None
        return ms is not None and _same(value, ms.title)
    if key in ("created", "updated", "closed"):
        when = {"created": item.created_at, "updated": item.updated_at, "closed": item.closed_at}[key]
        return _date_predicate(value)(when)
    if key == "comments":
        return _number_predicate(value)(len(item.comments))
    return True  # `in:` is applied to text terms


def _text_fields(query: Query, item: Issue) -> list[str]:
    where = {v.lower() for v in query.values("in")} or {"title", "body"}
    fields: list[str] = []
    if "title" in where:
        fields.append(item.title)
    if "body" in where:
        fields.append(item.body or "")
    if "comments" in where:
        fields.extend(c.body for c in item.comments)
    return [f.casefold() for f in fields]


def matches(query: Query, state: State, repo: Repo, item: Issue) -> bool:
    repos = query.values("repo")
    if repos and not any(_same(r, repo.full_name) for r in repos):
        return False
    texts: list[str] | None = None
    for term in query.terms:
        if term.key == "repo" and not term.negated:
            continue  # ORed above
        if term.key == "in":
            continue
        if term.key is None:
            if texts is None:
                texts = _text_fields(query, item)
            found = any(term.value.casefold() in t for t in texts)
        else:
            found = _qualifier(term, state, repo, item)
        if found == term.negated:
            return False
    return True


def run(query: Query, state: State, repos: Iterable[Repo]) -> list[tuple[Repo, Issue]]:
    return [
        (repo, item)
        for repo in repos
        for item in repo.live_issues()
        if matches(query, state, repo, item)
    ]
