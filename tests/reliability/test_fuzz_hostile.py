"""Hostile values where they hurt: every tool, otherwise-valid arguments with hostile strings,
huge integers and nested junk planted in one to three parameters (path segments, search
queries, bodies, cursors), mixed with the schema-derived arguments of tests/functional/strategies.

Complements tests/functional/test_fuzz.py (same `FUZZ_EXAMPLES` knob, calls per tool): there,
arbitrary arguments mostly stop at validation; here most calls reach the fake GitHub, and what
the server sends is checked on the wire. For every call:

* a schema-valid success or error envelope, never a JSON-RPC error or a crash;
* no token in any output or log line, and no hostile value from a parameter that is not
  echo-safe inside an error envelope;
* every upstream request is one of the tool's declared endpoints (or the repository probe), as
  sent: each path parameter one segment, never `.`/`..`, owner/repo equal to the arguments, so no
  request leaves /repos/{owner}/{repo}/… or /search/issues;
* the fake records no request the pinned spec rejects.

`make fuzz` runs this and test_fuzz.py with FUZZ_EXAMPLES=560: 2 x 9 tools x 560 >= 10,000 calls
(and test_fuzz_labels.py, which checks what label parameters mean, not only where they go).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp import Client

from fakegithub import FakeGitHub
from ghmcp_runtime.core.model import ToolSpec
from tests.functional.strategies import HOSTILE, HUGE_INTS, JUNK, arguments
from tests.reliability.reliability_support import (
    OWNER,
    REPO,
    TOKEN,
    TOOLS,
    Recorder,
    endpoint_problems,
    server_for,
    small_seed,
)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
# Labels with hostile names, so label paths (/labels/{name}, /issues/{n}/labels/{name}) carry
# them for real ("." and "..": see test_path_safety.py).
HOSTILE_LABELS = [".", "..", "a/b", "%2e%2e", "..%2f", "?x=1", "#frag", "ünïcødé 😀", "\u202eabc", "x y",
                  "label:\"q\"", "100%", "a,b", "x\\y", "STRASSE"]
REPO_ARGS = {"owner": OWNER, "repo": REPO}
HOSTILE_ISSUE = 4  # small_seed makes #1, #2 and pull request #3; the world fixture adds #4


def good_call(tool: str) -> dict[str, Any]:
    """A valid call of each tool; hostile values are planted into copies of it."""
    calls: dict[str, dict[str, Any]] = {
        "github_add_comment": {**REPO_ARGS, "issue_number": HOSTILE_ISSUE, "body": "A body"},
        "github_create_issue": {**REPO_ARGS, "title": "A title", "body": "A body", "labels": ["bug"]},
        "github_create_label": {**REPO_ARGS, "name": "fuzz-label", "color": "00ff00",
                                "description": "Described"},
        "github_delete_label": {**REPO_ARGS, "name": "obsolete"},
        "github_get_issue": {**REPO_ARGS, "issue_number": HOSTILE_ISSUE, "detail": "summary"},
        "github_list_labels": dict(REPO_ARGS),
        "github_search_issues": {**REPO_ARGS, "query": "crash", "state": "all"},
        "github_update_issue": {**REPO_ARGS, "issue_number": HOSTILE_ISSUE, "title": "A title",
                                "add_labels": ["bug"], "remove_labels": ["a/b"]},
        "github_update_label": {**REPO_ARGS, "name": "triage", "description": "Described"},
    }
    return dict(calls.get(tool, REPO_ARGS))  # a tool added later: planted values on owner/repo


DEEP: Any = []
for _ in range(200):
    DEEP = [DEEP]
STRINGS = st.sampled_from(HOSTILE + HOSTILE_LABELS) | st.text(min_size=1, max_size=60)


def _weighted(often: st.SearchStrategy[Any], rarely: st.SearchStrategy[Any], odds: int
              ) -> st.SearchStrategy[Any]:
    """`often` `odds` times in `odds + 1` (st.one_of does not weight repeated branches)."""
    return st.sampled_from(range(odds + 1)).flatmap(lambda i: rarely if i == odds else often)


def _fits(schema: dict[str, Any]) -> Any:
    return Draft202012Validator(schema).is_valid


def _hostile_value(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Mostly values the schema accepts (so they reach the handler and GitHub), sometimes not."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    accepted: list[st.SearchStrategy[Any]] = []
    if "string" in kinds:
        fits = _fits({k: v for k, v in schema.items() if k != "description"})
        pool = [v for v in [*HOSTILE, *HOSTILE_LABELS] if fits(v)]
        if pool:
            accepted.append(st.sampled_from(pool))
        accepted.append(st.text(min_size=1, max_size=60).filter(fits))
    if "integer" in kinds:
        accepted.append(st.sampled_from([1, 2, 3, 2**31 - 1, 2**53 + 1, 2**63, 10**100]))
    if "array" in kinds:
        item = schema.get("items", {})
        fits_item = _fits({k: v for k, v in item.items() if k != "description"})
        pool = [v for v in [*HOSTILE, *HOSTILE_LABELS] if fits_item(v)]
        if pool:
            accepted.append(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    if "boolean" in kinds:
        accepted.append(st.booleans())
    rejected = st.one_of(JUNK, st.just(DEEP), st.sampled_from([*HUGE_INTS, "1", True, -1, 0]),
                         st.lists(STRINGS, min_size=30, max_size=31))
    if not accepted:
        return rejected
    good = st.one_of(*accepted)
    return _weighted(good, rejected, 9)


def hostile_arguments(tool: ToolSpec) -> st.SearchStrategy[dict[str, Any]]:
    props: dict[str, Any] = tool.input_schema["properties"]
    base = good_call(tool.name)
    names = sorted(props)
    planted = st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True).flatmap(
        lambda chosen: st.fixed_dictionaries({n: _hostile_value(props[n]) for n in chosen}))
    hostile = planted.map(lambda values: {**base, **values})
    return _weighted(hostile, arguments(tool.input_schema), 5)


@pytest.fixture(scope="module")
def world() -> FakeGitHub:
    fake = FakeGitHub()
    small_seed(fake)
    for name in HOSTILE_LABELS:
        fake.add_label(OWNER, REPO, name)
    number = fake.add_issue(OWNER, REPO, "Hostile labels", body="x", labels=HOSTILE_LABELS,
                            author="hubot")
    assert number == HOSTILE_ISSUE
    fake.set_rate_limit(TOKEN, limit=10**9, remaining=10**9)
    fake.set_rate_limit(TOKEN, limit=10**9, remaining=10**9, resource="search")
    return fake


def _echoed(tool: ToolSpec, args: Any, envelope: dict[str, Any]) -> list[str]:
    """Free-form values (not echo-safe, 12+ characters) that appear inside an error envelope."""
    if not isinstance(args, dict):
        return []
    # `code` is a symbol from the error catalog: hypothesis draws string constants from loaded
    # modules, so a value like 'invalid_fiel' would otherwise "appear" in 'invalid_field'
    text = json.dumps({k: v for k, v in envelope.items()
                       if k not in ("request_id", "fingerprint", "code")}, ensure_ascii=False)
    found = []
    for name, value in args.items():
        values = value if isinstance(value, list) else [value]
        for v in values:
            if name not in tool.echo_safe and isinstance(v, str) and len(v) >= 12 and v in text:
                found.append(f"{name}={v[:40]!r}")
    return found


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_hostile_values_stay_in_bounds(world: FakeGitHub, name: str,
                                       capfd: pytest.CaptureFixture[str]) -> None:
    tool = TOOLS[name]
    validator = Draft202012Validator(tool.output_schema)
    recorder = Recorder(world.asgi_transport())
    server = server_for(recorder, timeout=5.0)
    calls = {"n": 0}
    stats: Counter[str] = Counter()

    async def one(args: Any) -> Any:
        async with Client(server, cache=None) as client:
            return await client.call_tool(name, args)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much, HealthCheck.large_base_example])
    @given(args=hostile_arguments(tool))
    def check(args: Any) -> None:
        calls["n"] += 1
        seen = len(recorder.sent)
        result = anyio.run(one, args)
        data = result.structured_content
        assert isinstance(data, dict)
        problems = [e.message for e in validator.iter_errors(data)]
        assert not problems, problems[:2]
        assert result.is_error == ("code" in data)
        stats[data.get("code", "ok")] += 1
        wire = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
        assert TOKEN not in wire
        if result.is_error:
            assert not _echoed(tool, args, data), _echoed(tool, args, data)
        for sent in recorder.sent[seen:]:
            assert not endpoint_problems(tool, args if isinstance(args, dict) else {}, sent), \
                (sent, endpoint_problems(tool, args, sent))

    check()
    if os.environ.get("FUZZ_STATS"):  # a file to append per-tool counts to
        with open(os.environ["FUZZ_STATS"], "a", encoding="utf-8") as f:
            f.write(f"{name}: {calls['n']} calls, {len(recorder.sent)} upstream requests, "
                    f"answers {dict(stats)}\n")
    out, err = capfd.readouterr()
    assert TOKEN not in out + err
    assert world.violations == [], world.violations[:3]
    assert calls["n"] >= EXAMPLES * 0.9, f"hypothesis ran only {calls['n']} of {EXAMPLES} examples"
