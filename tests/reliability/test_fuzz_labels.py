"""What the label-taking parameters mean, fuzzed with hostile names, and pages of mostly pull requests.

tests/reliability/test_fuzz_hostile.py checks that hostile values stay in bounds; here the answers
are checked against the fake's ground truth. Label names mix commas, quotes, backslashes, path and
query characters, dot segments, bidi and emoji, and case variants (ASCII, and Unicode ones such as
`straße` for `STRASSE`, which GitHub's own lookup settles). For every example:

* github_search_issues `labels` (listing and search mode): exactly the issues carrying every label;
* github_update_issue `add_labels`/`remove_labels`: the issue then carries (before + added) -
  removed, changed_fields names labels when either did something; a name added and removed, or a
  missing name, is refused and nothing changes;
* github_create_issue `labels`: the issue carries exactly those labels, or nothing is created;
* never a new label in the catalog (GitHub creates unknown labels on add), never a spec violation.

Pull-request-heavy listings: any mix of issues and pull requests, walked page by page, delivers
exactly the issues in order up to the row cap and the scan limit, and says truncated exactly when
items are left. `FUZZ_EXAMPLES` (default 40) is the number of examples per test.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

import github_issues_mcp.hooks as hooks
from fakegithub import FakeGitHub
from ghmcp_runtime.cleaning.untrusted import sanitize
from ghmcp_runtime.engine.catalog import fold
from tests.reliability.reliability_support import OWNER, REPO, TOKEN, server_for, small_seed

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NAMES = ["needs,info", "needs", "info", 'say "hi"', "say hi", "back\\slash", "back", "STRASSE", "Été",
         "a/b", "%2e%2e", "?x=1", "#frag", "ünïcødé 😀", "\u202eabc", "x y", 'label:"q"', "100%",
         ".", "..", "bug", "triage"]
UNICODE_VARIANTS = {"STRASSE": ["straße", "Straße"], "Été": ["été", "ÉTÉ"]}
MISSING = ["no such label", "needs,inf", 'say "hi', "STRASS"]


def spellings(name: str) -> list[str]:
    """Ways a caller may write an existing label: exact, ASCII case variants, Unicode ones."""
    ascii_swapped = "".join(c.swapcase() if c.isascii() else c for c in name)
    return list(dict.fromkeys([name, ascii_swapped, *UNICODE_VARIANTS.get(name, [])]))


SPELLED = st.sampled_from(NAMES).flatmap(lambda n: st.sampled_from(spellings(n)).map(lambda s: (n, s)))


def labelled_fake() -> FakeGitHub:
    fake = FakeGitHub()
    small_seed(fake)
    for name in NAMES:
        if fake.state.find_repo(OWNER, REPO).find_label(name) is None:  # type: ignore[union-attr]
            fake.add_label(OWNER, REPO, name)
    fake.set_rate_limit(TOKEN, limit=10**9, remaining=10**9)
    fake.set_rate_limit(TOKEN, limit=10**9, remaining=10**9, resource="search")
    return fake


@pytest.fixture(scope="module")
def world() -> tuple[FakeGitHub, dict[int, set[str]]]:
    """Issues carrying every pair of labels (and some pull requests); never written to."""
    fake = labelled_fake()
    carried: dict[int, set[str]] = {}
    for pair in itertools.combinations(NAMES, 2):
        carried[fake.add_issue(OWNER, REPO, f"item {'+'.join(pair)}", labels=list(pair))] = set(pair)
        if len(carried) % 7 == 0:
            fake.add_pull_request(OWNER, REPO, "item pr", labels=list(pair))
    for number in (1, 2):  # small_seed's issues
        carried[number] = set(fake.label_names(OWNER, REPO, number))
    return fake, carried


@pytest.fixture(scope="module")
def write_world() -> FakeGitHub:
    return labelled_fake()


def catalog_size(fake: FakeGitHub) -> int:
    return len(fake.state.find_repo(OWNER, REPO).labels)  # type: ignore[union-attr]


async def _calls(fake: FakeGitHub, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, dict[str, Any]]]:
    out = []
    async with Client(server_for(fake.asgi_transport(), timeout=5.0), cache=None) as client:
        for name, args in calls:
            result = await client.call_tool(name, args)
            out.append((bool(result.is_error), dict(result.structured_content or {})))
    return out


async def _walk(fake: FakeGitHub, args: dict[str, Any]) -> tuple[list[int], dict[str, Any]]:
    seen: list[int] = []
    async with Client(server_for(fake.asgi_transport(), timeout=5.0), cache=None) as client:
        cursor = None
        for _ in range(60):
            result = await client.call_tool("github_search_issues", {**args, **({"cursor": cursor} if cursor else {})})
            data = dict(result.structured_content or {})
            assert not result.is_error, data
            seen += [row["issue_number"] for row in data["issues"]]
            if not data["has_more"]:
                return seen, data
            cursor = data["next_cursor"]
    raise AssertionError("the walk did not end")


@SETTINGS
@given(chosen=st.lists(SPELLED, min_size=1, max_size=2, unique_by=lambda p: p[0]),
       mode=st.sampled_from(["list", "search"]))
def test_label_filters_select_exactly_the_issues_carrying_every_label(
        world: tuple[FakeGitHub, dict[int, set[str]]], chosen: list[tuple[str, str]], mode: str) -> None:
    fake, carried = world
    args = {"owner": OWNER, "repo": REPO, "state": "all", "labels": [s for _, s in chosen],
            **({"query": "item"} if mode == "search" else {})}
    seen, _ = anyio.run(_walk, fake, args)
    want = {n for n, labels in carried.items() if {name for name, _ in chosen} <= labels}
    if mode == "search":
        want = {n for n in want if n not in (1, 2)}  # the query matches the "item" titles only
    assert len(seen) == len(set(seen)), "an issue was delivered twice"
    assert set(seen) == want
    assert fake.violations == []


@SETTINGS
@given(start=st.lists(st.sampled_from(NAMES), max_size=4, unique=True),
       add=st.lists(SPELLED, max_size=3), remove=st.lists(SPELLED, max_size=3),
       missing=st.sampled_from([None, *MISSING]), title=st.booleans())
def test_add_and_remove_labels_do_what_github_shows(
        write_world: FakeGitHub, start: list[str], add: list[tuple[str, str]],
        remove: list[tuple[str, str]], missing: str | None, title: bool) -> None:
    fake = write_world
    size = catalog_size(fake)
    number = fake.add_issue(OWNER, REPO, "target", labels=start)
    args: dict[str, Any] = {"owner": OWNER, "repo": REPO, "issue_number": number,
                            "add_labels": [s for _, s in add] + ([missing] if missing else []),
                            "remove_labels": [s for _, s in remove]}
    if title:
        args["title"] = "renamed"
    args = {k: v for k, v in args.items() if v != []}
    if set(args) == {"owner", "repo", "issue_number"}:
        args["title"] = "renamed"
    [(is_error, data)] = anyio.run(_calls, fake, [("github_update_issue", args)])
    after = set(fake.label_names(OWNER, REPO, number))
    added, removed = {n for n, _ in add}, {n for n, _ in remove}
    assert catalog_size(fake) == size, "a label was created"
    if missing or added & removed or {".", ".."} & removed & set(start):
        assert is_error and data["code"] in ("label_not_found", "invalid_field"), data
        assert after == set(start) and fake.get_issue(OWNER, REPO, number).title == "target"
        return
    assert not is_error, data
    assert after == (set(start) | added) - removed
    assert ("labels" in data["changed_fields"]) == bool(added - set(start) or removed & set(start))
    assert set(data["issue"]["labels"]) == {sanitize(n)[0] for n in after}  # what GitHub holds, as shown
    assert fake.violations == []


@SETTINGS
@given(labels=st.lists(SPELLED, max_size=4), missing=st.sampled_from([None, *MISSING]))
def test_create_applies_exactly_the_named_labels(
        write_world: FakeGitHub, labels: list[tuple[str, str]], missing: str | None) -> None:
    fake = write_world
    size = catalog_size(fake)
    before = len(fake.state.find_repo(OWNER, REPO).issues)  # type: ignore[union-attr]
    args = {"owner": OWNER, "repo": REPO, "title": "created",
            "labels": [s for _, s in labels] + ([missing] if missing else [])}
    [(is_error, data)] = anyio.run(_calls, fake, [("github_create_issue", args)])
    assert catalog_size(fake) == size, "a label was created"
    if missing:
        assert is_error and data["code"] == "label_not_found"
        assert len(fake.state.find_repo(OWNER, REPO).issues) == before  # type: ignore[union-attr]
        return
    assert not is_error, data
    assert set(fake.label_names(OWNER, REPO, data["issue"]["issue_number"])) == {n for n, _ in labels}
    assert set(data["issue"]["labels"]) == {sanitize(n)[0] for n, _ in labels}
    assert "ignored_fields" not in data


@pytest.fixture(scope="module")
def pr_world() -> FakeGitHub:
    fake = FakeGitHub()
    small_seed(fake)
    fake.set_rate_limit(TOKEN, limit=10**9, remaining=10**9)
    return fake


_repos = itertools.count()


@SETTINGS
@given(kinds=st.lists(st.sampled_from("PPPPI"), max_size=160), cap=st.integers(1, 60),
       limit=st.sampled_from([40, 100, 130, 1000]))
def test_pages_of_mostly_pull_requests_deliver_every_issue_once(
        pr_world: FakeGitHub, kinds: list[str], cap: int, limit: int) -> None:
    fake = pr_world
    repo = f"mixed-{next(_repos)}"
    fake.add_repo(OWNER, repo)
    issues = []
    for i, kind in enumerate(kinds):
        if kind == "I":
            issues.append((i, fake.add_issue(OWNER, repo, f"issue {i}")))
        else:
            fake.add_pull_request(OWNER, repo, f"pr {i}")
    saved = hooks.WALK_CAP, hooks.SCAN_LIMIT
    hooks.WALK_CAP, hooks.SCAN_LIMIT = cap, limit
    try:
        seen, last = anyio.run(_walk, fake, {"owner": OWNER, "repo": repo, "state": "all",
                                             "sort": "created", "order": "asc"})
    finally:
        hooks.WALK_CAP, hooks.SCAN_LIMIT = saved
    window = [number for position, number in issues if position < limit]
    stop = issues[cap - 1][0] + 1 if len(window) >= cap else min(len(kinds), limit)
    assert seen == window[:cap]
    assert last["truncated"] is (stop < len(kinds))
    assert fake.violations == []


def test_the_label_names_cover_every_case() -> None:
    # the fuzz is only as good as its names: each class of trouble is present
    assert {c for n in NAMES for c in ',"\\' if c in n} == {",", '"', "\\"}
    assert {".", ".."} <= set(NAMES) and any(not n.isascii() for n in NAMES)
    assert all(fold(v) != fold(k) for k, vs in UNICODE_VARIANTS.items() for v in vs)
