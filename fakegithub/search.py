"""GitHub's documented issue search syntax (`q` of `GET /search/issues`), as far as the fake's state
can answer it; everything else GitHub documents is refused with 422 rather than answered wrongly.

Implemented (docs.github.com, "Searching issues and pull requests" and "Understanding the search
syntax"):

* scope: `repo:o/r` (several = OR), `user:`/`org:`;
* kind and state: `is:`/`type:` (issue, pr, pull-request), `is:`/`state:` (open, closed), `is:`
  locked, unlocked, merged, unmerged, draft, public, private; `reason:` (completed, "not planned",
  duplicate); `draft:true|false`; `archived:true|false` (no fake repository is archived);
* text: bare words and quoted phrases match whole words, in any case, of the title, body and
  comments, or of the parts `in:` names (`in:title,body`: a comma list of title, body,
  comments). Search matches words, never parts of words ("export" does not find "exporter"),
  with some stemming for plurals ("features" finds "feature"; GitHub staff, todogroup/gh-issues#70);
  punctuation separates words, so `with-ghc` needs both words (isaacs/github#573). The fake
  stems a trailing -s only; a quoted phrase needs its words in a row;
* people: `author:`, `assignee:` (`*` = anyone), `mentions:`, `commenter:`, `involves:`, each also
  `@me` (the token's login);
* metadata: `label:x`, `label:"multi word"`, `label:a,b` and `label:"a b","c"` (= any of them;
  several label terms = all of them; a comma inside quotes belongs to the name), `milestone:`,
  `no:label|assignee|milestone`;
* numbers and dates: `comments:`, `created:`, `updated:`, `closed:`, `merged:` with `>`, `>=`, `<`,
  `<=`, `a..b`, `a..*`, `*..b`; a date is a whole UTC day, or an ISO timestamp;
* negation: `-qualifier:value`, `-word`, `NOT word`; `AND` (terms are ANDed anyway);
  `sort:created|updated|comments[-asc|-desc]`.

* branches: `head:` and `base:` (a pull request's head and base branch names; issues match neither).

Refused with 422 (GitHub answers these, the fake cannot): the other documented qualifiers
(`project:`, `team:`, `linked:`, `language:`, `status:`, `interactions:`,
`reactions:`, `review:` and the reviewer qualifiers), values of the qualifiers above that GitHub
does not document or the fake does not model (`is:queued`, `no:project`, `in:name`, `type:Bug`, …),
`-no:` (GitHub documents that it does not work), `OR` and parentheses. A word before a colon that
is no qualifier (`foo:bar`) is searched as text, as on GitHub.
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
        "mentions", "involves", "no", "milestone", "in", "created", "updated", "closed", "merged",
        "comments", "reason", "draft", "archived", "sort", "head", "base",
    }
)
# documented by GitHub for issue and pull request search, not modelled by the fake: refused
UNMODELLED = frozenset(
    {
        "project", "team", "linked", "language", "status", "interactions",
        "reactions", "review", "reviewed-by", "review-requested", "user-review-requested",
        "team-review-requested",
    }
)
PEOPLE = frozenset({"author", "assignee", "mentions", "commenter", "involves"})
DATES = frozenset({"created", "updated", "closed", "merged"})
IS_VALUES = frozenset({"issue", "pr", "pull-request", "open", "closed", "locked", "unlocked",
                       "merged", "unmerged", "draft", "public", "private"})
CHOICES = {
    "type": frozenset({"issue", "pr", "pull-request"}),
    "state": frozenset({"open", "closed"}),
    "no": frozenset({"label", "assignee", "milestone"}),
    "in": frozenset({"title", "body", "comments"}),
    "reason": frozenset({"completed", "not planned", "duplicate"}),
    "draft": frozenset({"true", "false"}),
    "archived": frozenset({"true", "false"}),
}
SORTS = frozenset({"created", "updated", "comments"})
_VALUE = r'(?:"[^"]*"?|[^\s"]+)+'
_TOKEN = re.compile(
    rf"""(?P<neg>-)?(?:(?P<key>[A-Za-z][A-Za-z_-]*):(?P<val>{_VALUE})|(?P<phrase>"[^"]*"?)|(?P<word>\S+))"""
)
_LIST_ITEM = re.compile(r'"([^"]*)"?|([^,"]+)')


class QueryError(ValueError):
    """The query cannot be run (GitHub answers 422)."""


@dataclass(frozen=True, slots=True)
class Term:
    key: str | None  # None = free text
    value: str
    negated: bool = False
    phrase: bool = False  # free text in quotes: its words in a row


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


def alternatives(value: str) -> list[str]:
    """`a,b` or `"a b","c"`: the comma-separated alternatives, unquoted (a quoted comma stays)."""
    return [m.group(1) if m.group(1) is not None else m.group(2).strip()
            for m in _LIST_ITEM.finditer(value) if (m.group(1) or (m.group(2) or "").strip())]


def _check(key: str, value: str, negated: bool) -> None:
    """Refuse what GitHub documents but the fake does not model, or GitHub does not document."""
    if key == "no" and negated:
        raise QueryError("The no: qualifier cannot be negated (GitHub documents that -no: does not work).")
    if key == "is":
        allowed: frozenset[str] | None = IS_VALUES
    elif key == "in":
        for part in value.lower().split(","):
            if part not in CHOICES["in"]:
                raise QueryError(f"in: takes title, body and comments, not {part!r}.")
        return
    else:
        allowed = CHOICES.get(key)
    if allowed is not None and value.lower() not in allowed:
        raise QueryError(f"{key}: takes {', '.join(sorted(allowed))}; {value!r} is not implemented.")
    if key in DATES:
        _date_predicate(value)
    if key == "comments":
        _number_predicate(value)


def parse(q: str) -> Query:
    if len(q) > MAX_QUERY_LENGTH:
        raise QueryError(f"The search is longer than {MAX_QUERY_LENGTH} characters.")
    query = Query()
    negate_next = False
    for m in _TOKEN.finditer(q):
        negated = bool(m.group("neg")) or negate_next
        negate_next = False
        key = m.group("key")
        if key is not None and key.lower() in UNMODELLED:
            raise QueryError(f"The {key.lower()}: qualifier is not implemented by this fake.")
        if key is not None and key.lower() in QUALIFIERS:
            key = key.lower()
            value = _unquote(m.group("val")) if key != "label" else m.group("val")
            if key == "sort":
                sort, _, order = value.lower().partition("-")
                if sort not in SORTS or order not in ("", "asc", "desc"):
                    raise QueryError(f"sort: takes created, updated or comments; {value!r} is not implemented.")
                query.sort, query.order = sort, order or "desc"
                continue
            _check(key, value, negated)
            query.terms.append(Term(key, value, negated))
            continue
        if m.group("phrase") is not None:
            query.terms.append(Term(None, _unquote(m.group("phrase")), negated, phrase=True))
            continue
        text = m.group(0)[1:] if m.group("neg") else m.group(0)
        if text == "AND":
            continue
        if text == "OR" or text.startswith("(") or text.endswith(")"):
            raise QueryError("OR and parentheses are not implemented by this fake.")
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
        "draft": lambda: item.is_pull_request and item.draft,
        "public": lambda: not repo.private,
        "private": lambda: repo.private,
    }
    return checks[value.lower()]()


def _same(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()


def _mentions(item: Issue, login: str) -> bool:
    pattern = re.compile(rf"@{re.escape(login)}\b", re.IGNORECASE)
    texts = [item.body or "", *(c.body for c in item.comments)]
    return any(pattern.search(t) for t in texts)


def _person(key: str, login: str, item: Issue) -> bool:
    if key == "author":
        return _same(login, item.author)
    if key == "assignee":
        return bool(item.assignees) if login == "*" else any(_same(login, a) for a in item.assignees)
    if key == "commenter":
        return any(_same(login, c.author) for c in item.comments)
    if key == "mentions":
        return _mentions(item, login)
    return any(_person(k, login, item) for k in ("author", "assignee", "commenter", "mentions"))


def _qualifier(term: Term, repo: Repo, item: Issue, actor: str | None, state: State) -> bool:
    key, value = term.key, term.value
    assert key is not None
    if key in ("head", "base"):
        git = state.git.get(repo.id)
        pull = git.pulls.get(item.number) if git is not None and item.is_pull_request else None
        return pull is not None and (pull.head if key == "head" else pull.base) == value
    if key == "repo":
        return _same(value, repo.full_name)
    if key in ("user", "org"):
        return _same(value, repo.owner)
    if key in ("is", "type", "state"):
        return _is(value, repo, item)
    if key in PEOPLE:
        login = actor if value.lower() == "@me" and actor is not None else value
        return _person(key, login, item)
    if key == "label":
        names = {label_key(n) for n in repo.label_names(item)}
        return any(label_key(v.strip()) in names for v in alternatives(value))
    if key == "no":
        return {"label": not item.label_ids, "assignee": not item.assignees,
                "milestone": item.milestone is None}[value.lower()]
    if key == "milestone":
        ms = repo.milestones.get(item.milestone) if item.milestone is not None else None
        return ms is not None and _same(value, ms.title)
    if key == "reason":
        return item.state == "closed" and (item.state_reason or "completed") == value.lower().replace(" ", "_")
    if key == "draft":
        return item.is_pull_request and item.draft == (value.lower() == "true")
    if key == "archived":
        return value.lower() == "false"  # no repository of the fake is archived
    if key in DATES:
        when = {"created": item.created_at, "updated": item.updated_at, "closed": item.closed_at,
                "merged": item.merged_at}[key]
        return _date_predicate(value)(when)
    if key == "comments":
        return _number_predicate(value)(len(item.comments))
    return True  # `in:` is applied to text terms


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """A text as search indexes it: words (runs of letters, digits and _), any case, a plural's
    trailing s dropped (not a double s: "class" stays)."""
    out = []
    for word in _WORD.findall(text.casefold()):
        out.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out


def _text_fields(query: Query, item: Issue) -> list[list[str]]:
    named = {part for v in query.values("in") for part in v.lower().split(",")}
    where = named or {"title", "body", "comments"}
    fields: list[str] = []
    if "title" in where:
        fields.append(item.title)
    if "body" in where:
        fields.append(item.body or "")
    if "comments" in where:
        fields.extend(c.body for c in item.comments)
    return [words(f) for f in fields]


def _contains(field: list[str], wanted: list[str], phrase: bool) -> bool:
    if not phrase:
        return all(w in field for w in wanted)
    n = len(wanted)
    return any(field[i:i + n] == wanted for i in range(len(field) - n + 1))


def matches(query: Query, state: State, repo: Repo, item: Issue, actor: str | None = None) -> bool:
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
            wanted = words(term.value)
            found = bool(wanted) and any(_contains(t, wanted, term.phrase) for t in texts)
        else:
            found = _qualifier(term, repo, item, actor, state)
        if found == term.negated:
            return False
    return True


def run(query: Query, state: State, repos: Iterable[Repo], actor: str | None = None) -> list[tuple[Repo, Issue]]:
    return [
        (repo, item)
        for repo in repos
        for item in repo.live_issues()
        if matches(query, state, repo, item, actor)
    ]
