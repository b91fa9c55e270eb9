"""Hypothesis strategies built from a tool's published inputSchema, plus hostile junk."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HOSTILE = [
    "", " ", "\x00", "../", "%2e%2e/", "..", ".", "?x=1", "#frag", "a/b", "\r\nX-Injected: 1",
    "${jndi:x}", "{{7*7}}", '"; DROP TABLE issues; --', "\u202e\u0645\u0631\u062d\u0628\u0627",
    "😀" * 10, "ghp_" + "A" * 36, "x" * 1_000_000, "\ud7ff", "null", "[]", "{}",
    # path and query smuggling, encoded and not
    "..%2f", "%2e%2e%2f", "%2E%2E", "..\\", "/../../../etc/passwd", "a/../../b", "?x=", "&per_page=1",
    "%3Fx%3D1", "%00", "a\x00b", "%0d%0aX-Injected:%201", "\r\n", "\n", "\t", "@evil.example",
    # unicode: separators, BOM, combining marks, astral plane, right-to-left override
    "\u2028\u2029", "\ufeff", "e\u0301", "\U0001d54f" * 50, "\U0010ffff", "\u202egnp.exe",
    # GitHub search syntax and numbers as text
    'label:"x" OR is:pr', "repo:other/repo", "99999999999999999999", "-1", "1e309", "NaN",
]
HUGE_INTS = [2**31, 2**53 + 1, 2**63, -(2**63) - 1, 2**64, 10**100, -(10**100)]
JUNK: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(HUGE_INTS)
    | st.floats(allow_nan=False) | st.text(max_size=20) | st.sampled_from(HOSTILE),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
LOGINS = st.sampled_from(["octocat", "hubot", "ghost", "octo-org", "a" * 39])


def _string(schema: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if name in ("owner", "assignee_login", "creator_login"):
        return LOGINS | st.from_regex(schema.get("pattern", ".*"), fullmatch=True)
    if name == "repo":
        return st.sampled_from(["roadmap", "missing", "a.b", "x_y-z"])
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True)
    if schema.get("format") == "date-time":
        return st.sampled_from(["2020-01-01T00:00:00Z", "2031-12-31T23:59:59Z", "yesterday"])
    return st.text(max_size=40) | st.sampled_from(HOSTILE)


def valid_value(schema: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of(*(valid_value({**schema, "type": k}, name) for k in kind))
    if kind == "null":
        return st.none()
    if kind == "string":
        return _string(schema, name)
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum", -5), max_value=schema.get("maximum", 40))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        item = valid_value(schema.get("items", {}), name)
        return st.lists(item, max_size=min(schema.get("maxItems", 4), 4))
    return JUNK


def arguments(input_schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    props: dict[str, Any] = input_schema["properties"]
    required = set(input_schema.get("required", []))
    value = {name: st.one_of(valid_value(s, name), valid_value(s, name), JUNK) for name, s in props.items()}
    well_formed = st.fixed_dictionaries(
        {n: v for n, v in value.items() if n in required},
        optional={n: v for n, v in value.items() if n not in required},
    )
    with_extra = st.tuples(well_formed, st.dictionaries(st.text(max_size=10), JUNK, max_size=2)).map(
        lambda pair: {**pair[1], **pair[0]}
    )
    junk_object = st.dictionaries(st.text(max_size=12), JUNK, max_size=4)
    return st.one_of(well_formed, well_formed, well_formed, with_extra, junk_object)
