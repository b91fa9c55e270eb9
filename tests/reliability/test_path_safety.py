"""Path parameters are single segments on the wire, whatever their value.

`ForgeUpstream.url` percent-encodes every path parameter (`quote(..., safe="")`), so `/`, `?`,
`#` and `%` cannot escape their segment. Dot segments were the exception: `quote` leaves `.` and
`..` alone and httpx normalizes them away, so `github_update_issue` `remove_labels: ["."]` on a
repository that has such a label sent `DELETE /repos/{o}/{r}/issues/{n}/labels` (on GitHub:
remove every label) and `[".."]` sent `DELETE /repos/{o}/{r}/issues/{n}`. Found by this harness
(then a strict xfail), fixed in dd34f29: the runtime refuses empty and dot segments.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from fakegithub import FakeGitHub
from tests.reliability.reliability_support import (
    OWNER,
    REPO,
    TOOLS,
    Recorder,
    endpoint_problems,
    server_for,
    small_seed,
)

REPO_ARGS = {"owner": OWNER, "repo": REPO}


async def _call(fake: FakeGitHub, tool: str, args: dict[str, Any]) -> tuple[Any, Recorder]:
    recorder = Recorder(fake.asgi_transport())
    async with Client(server_for(recorder), cache=None) as client:
        result = await client.call_tool(tool, args)
    return result, recorder


@pytest.mark.parametrize("name", ["a/b", "?x=1", "#frag", "%2e%2e", "..%2f", "ünï 😀", "100%"])
def test_hostile_label_names_stay_in_their_segment(name: str) -> None:
    fake = FakeGitHub()
    small_seed(fake)
    fake.add_label(OWNER, REPO, name)
    number = fake.add_issue(OWNER, REPO, "Odd labels", labels=[name, "bug"])
    calls = [
        ("github_list_labels", {**REPO_ARGS, "name": name}),
        ("github_update_issue", {**REPO_ARGS, "issue_number": number, "remove_labels": [name]}),
        ("github_update_label", {**REPO_ARGS, "name": name, "description": "still here"}),
        ("github_delete_label", {**REPO_ARGS, "name": name, "delete_mode": "force"}),
    ]
    for tool, args in calls:
        result, recorder = anyio.run(_call, fake, tool, args)
        assert not result.is_error, (tool, result.structured_content)
        for sent in recorder.sent:
            assert not endpoint_problems(TOOLS[tool], args, sent), (tool, sent)
    assert fake.label_names(OWNER, REPO, number) == ["bug"]
    assert fake.violations == []


@pytest.mark.parametrize("name", [".", ".."])
def test_label_tools_refuse_dot_names_before_any_request(name: str) -> None:
    fake = FakeGitHub()
    small_seed(fake)
    for tool in ("github_list_labels", "github_update_label", "github_delete_label"):
        args = {**REPO_ARGS, "name": name, **({"description": "x"} if tool == "github_update_label" else {})}
        result, recorder = anyio.run(_call, fake, tool, args)
        assert result.is_error and result.structured_content["code"] == "invalid_field", tool
        # nothing but the token's scope read at start (GET /rate_limit)
        assert [s.raw_path for s in recorder.sent] == ["/rate_limit"], tool


@pytest.mark.parametrize("name", [".", ".."])
def test_remove_labels_with_a_dot_name_stays_on_the_label_endpoint(name: str) -> None:
    fake = FakeGitHub()
    small_seed(fake)
    fake.add_label(OWNER, REPO, name)  # GitHub has no rule against such names
    number = fake.add_issue(OWNER, REPO, "Dotted", labels=[name, "bug", "triage"])
    args = {**REPO_ARGS, "issue_number": number, "remove_labels": [name]}
    result, recorder = anyio.run(_call, fake, "github_update_issue", {**args, "title": "Renamed"})
    for sent in recorder.sent:
        assert not endpoint_problems(TOOLS["github_update_issue"], args, sent), sent
    assert fake.violations == []
    # refused before any write, so the title is not changed either
    assert result.is_error and result.structured_content["code"] == "invalid_field"
    assert [s for s in recorder.sent if s.method != "GET"] == []
    assert fake.get_issue(OWNER, REPO, number).title == "Dotted"


def test_the_runtime_never_builds_a_url_with_a_dot_or_empty_segment() -> None:
    from ghmcp_runtime.calls.upstream import ForgeUpstream
    from ghmcp_runtime.core.errors import ToolError

    upstream = ForgeUpstream(base_url="https://api.github.com")
    for value in (".", "..", ""):
        with pytest.raises(ToolError) as refused:
            upstream.url("/repos/{owner}/{repo}/labels/{name}", {"owner": "o", "repo": "r", "name": value})
        assert refused.value.code == "invalid_field"
    url = upstream.url("/repos/{owner}/{repo}/labels/{name}", {"owner": "o", "repo": "r", "name": "a/.."})
    assert httpx.URL(url).raw_path.decode() == "/repos/o/r/labels/a%2F.."


@pytest.mark.parametrize(("tool", "extra"), [
    ("github_get_issue", {"issue_number": 1.0}),
    ("github_update_issue", {"issue_number": 1.0, "title": "Renamed"}),
    ("github_create_issue", {"title": "With milestone", "milestone": 1.0}),
])
def test_integral_floats_are_sent_as_integers_or_refused(tool: str, extra: dict[str, Any]) -> None:
    """JSON Schema counts 1.0 as an integer; it used to reach GitHub as /issues/1.0 and
    {"milestone": 1.0} (found by `make fuzz`, fixed in be3167f)."""
    fake = FakeGitHub()
    small_seed(fake)
    result, recorder = anyio.run(_call, fake, tool, {**REPO_ARGS, **extra})
    data = result.structured_content
    refused_up_front = result.is_error and data["code"] == "invalid_field" and recorder.sent == []
    assert refused_up_front or not result.is_error, data
    assert not any(".0" in s.raw_path for s in recorder.sent), recorder.sent
    assert fake.violations == [], fake.violations
