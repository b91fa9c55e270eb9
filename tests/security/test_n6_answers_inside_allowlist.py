"""Security review n6: `--repos` screened only search rows on the way back, so with
`--repos octo-org/roadmap` github-sub-issues-mcp returned the private octo-org/secret#1 ("TOP
SECRET plan") as a sub-issue, a parent and a blocker of roadmap issues. Every answer is now
screened (guards/allowlist.py `RepoAllowlist.screen`): a row naming another repository is left
out and counted (`outside_allowlist`), an object that is not one row of many is refused
(`repo_not_allowed`).

The walk calls every tool of every generated server (from its published example, over several
issues and every enum value), reads every resource template and completes every template
variable, under an allowlist, against fakes that hold cross-repository links; nothing of the
repositories outside may appear on the wire."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import ResourceTemplateReference

from fakeforgejo import FakeForgejo
from fakegithub import FakeGitHub
from forgejo_mcp import SERVER as FORGEJO
from ghmcp_runtime.calls.upstream import ForgeUpstream
from ghmcp_runtime.core.forges import FORGEJO as FORGEJO_PROFILE
from ghmcp_runtime.core.model import ServerSpec, ToolSpec
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, build_server
from github_issues_mcp import SERVER as ISSUES
from github_mcp import SERVER as GITHUB
from github_milestones_mcp import SERVER as MILESTONES
from github_sub_issues_mcp import SERVER as SUB_ISSUES
from tests.forgejo import forgejo_support
from tests.functional.conftest import OWNER, REPO, in_memory_server

pytestmark = pytest.mark.anyio
SECRET = f"{OWNER}/secret"
GITHUB_MARKERS = ("top secret", "octo-org/secret", "the private body", "secret-label", "secret-ms")
FORGEJO_MARKERS = ("acme/vault", "acme/api", "key rotation", "token leak")
ISSUE_FIELD = re.compile(r"(^|_)issue_number$")
TEMPLATE_VARIABLE = re.compile(r"\{([a-z_]+)\}")


@pytest.fixture
def linked(fake: FakeGitHub, seeded: dict[str, Any]) -> dict[str, Any]:
    """roadmap issues linked with issues of the private octo-org/secret, which the token reads."""
    fake.add_repo(OWNER, "secret", private=True)
    fake.grant("octocat", SECRET)
    fake.add_label(OWNER, "secret", "secret-label")
    fake.add_milestone(OWNER, "secret", "secret-ms")
    plan = fake.add_issue(OWNER, "secret", "TOP SECRET plan", body="the private body",
                          labels=["secret-label"], author="octocat")
    above = fake.add_issue(OWNER, "secret", "TOP SECRET parent", body="the private body", author="octocat")
    parent = fake.add_issue(OWNER, REPO, "parent in roadmap", body="x", author="hubot")
    child = fake.add_issue(OWNER, REPO, "child of a secret parent", body="x", author="hubot")
    blocker = fake.add_issue(OWNER, REPO, "blocks a secret issue", body="x", author="hubot")
    fake.add_sub_issue(OWNER, REPO, parent, plan, child_in=SECRET)  # a sub-issue elsewhere
    fake.add_sub_issue(OWNER, REPO, parent, blocker)  # and one inside
    fake.add_sub_issue(OWNER, "secret", above, child, child_in=f"{OWNER}/{REPO}")  # a parent elsewhere
    fake.add_blocker(OWNER, REPO, parent, plan, blocker_in=SECRET)  # blocked by an issue elsewhere
    fake.add_blocker(OWNER, "secret", plan, blocker, blocker_in=f"{OWNER}/{REPO}")  # blocking one
    return {"issues": [parent, child, blocker], "milestone": seeded["milestone"]}


def example(tool: ToolSpec) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(tool.description.rsplit("Example: ", 1)[1])
    return found


def variants(tool: ToolSpec, place: dict[str, Any], numbers: list[int]) -> Iterator[dict[str, Any]]:
    """The tool's example placed in the allowed repository, once per issue (each issue-number
    field a different one), then once per value of each enum parameter it sets."""
    base = {**example(tool), **{k: v for k, v in place.items() if k in example(tool)}}
    fields = [k for k in base if ISSUE_FIELD.search(k)]
    for start in range(len(numbers) if fields else 1):
        args = {**base, **{f: numbers[(start + i) % len(numbers)] for i, f in enumerate(fields)}}
        yield args
        for name, schema in tool.input_schema["properties"].items():
            for value in schema.get("enum", []) if name in args else []:
                yield {**args, name: value}


def wire(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False).lower()


async def walk(client: Client, spec: ServerSpec, place: dict[str, Any], numbers: list[int],
               markers: tuple[str, ...]) -> dict[str, set[str]]:
    """Every tool (reads before writes), template and completion; what was screened, by tool."""
    screened: dict[str, set[str]] = {"left_out": set(), "refused": set(), "ok": set()}
    for tool in sorted(spec.tools, key=lambda t: (not t.annotations.read_only, t.name)):
        for args in variants(tool, place, numbers):
            result = await client.call_tool(tool.name, args)
            text = wire(result)
            assert not [m for m in markers if m in text], (tool.name, args, text[:400])
            data = result.structured_content or {}
            if data.get("outside_allowlist"):
                screened["left_out"].add(tool.name)
            if data.get("code") == "repo_not_allowed" and "answer is about" in data["details"]["reason"]:
                screened["refused"].add(tool.name)
            if not result.is_error:
                screened["ok"].add(tool.name)
    for template in spec.templates:
        names = TEMPLATE_VARIABLE.findall(template.uri_template)
        for number in numbers:
            values = {**place, "issue_number": number, "name": "bug", "label_id": place.get("label_id", 1)}
            uri = template.uri_template.split("{?")[0]
            for name in names:
                uri = uri.replace("{" + name + "}", str(values[name]))
            try:
                read = await client.read_resource(uri)
                text = wire(read)
            except MCPError as err:
                text = json.dumps(err.error.model_dump(mode="json")).lower()
            assert not [m for m in markers if m in text], (uri, text[:400])
        ref = ResourceTemplateReference(uri=template.uri_template)
        context = {k: str(v) for k, v in place.items() if k in ("owner", "repo", "org")}
        for name in names:
            done = await client.complete(ref, argument={"name": name, "value": ""}, context_arguments=context)
            assert not [m for m in markers if any(m in v.lower() for v in done.completion.values)]
    return screened


@pytest.mark.parametrize("spec", [SUB_ISSUES, ISSUES, MILESTONES, GITHUB], ids=lambda s: s.name)
async def test_every_github_tool_answers_only_from_the_allowlist(
    fake: FakeGitHub, linked: dict[str, Any], spec: ServerSpec
) -> None:
    flags = ExposureFlags(repos=(f"{OWNER}/{REPO}",), toolsets=("all",))  # github-mcp: every toolset
    server = in_memory_server(fake, spec=spec, exposure=flags)
    place = {"owner": OWNER, "repo": REPO, "milestone_number": linked["milestone"],
             "milestone_numbers": [linked["milestone"]]}
    async with Client(server, cache=None) as client:
        screened = await walk(client, spec, place, linked["issues"], GITHUB_MARKERS)
    assert len(screened["ok"]) >= len(spec.tools) // 2, screened  # the walk reached real answers
    if spec in (SUB_ISSUES, GITHUB):  # the review's three: rows left out and counted, the parent refused
        assert {"github_list_sub_issues", "github_list_issue_dependencies"} <= screened["left_out"]
        assert "github_get_parent_issue" in screened["refused"]


async def test_the_rows_left_out_are_counted_and_the_rest_kept(fake: FakeGitHub, linked: dict[str, Any]) -> None:
    """n6 as the review ran it: the roadmap rows remain, the secret one is counted."""
    parent, child, blocker = linked["issues"]
    server = in_memory_server(fake, spec=SUB_ISSUES, exposure=ExposureFlags(repos=(f"{OWNER}/{REPO}",)))
    async with Client(server, cache=None) as client:
        subs = (await client.call_tool("github_list_sub_issues", {"owner": OWNER, "repo": REPO,
                                                                 "issue_number": parent})).structured_content
        deps = (await client.call_tool("github_list_issue_dependencies", {
            "owner": OWNER, "repo": REPO, "issue_number": parent, "direction": "blocked_by"})).structured_content
        up = await client.call_tool("github_get_parent_issue", {"owner": OWNER, "repo": REPO, "issue_number": child})
    assert [r["issue_number"] for r in subs["sub_issues"]] == [blocker] and subs["outside_allowlist"] == 1
    assert deps["issues"] == [] and deps["outside_allowlist"] == 1
    assert up.is_error and up.structured_content["code"] == "repo_not_allowed"
    assert up.structured_content["details"]["allowed_repositories"] == [f"{OWNER}/{REPO}"]
    async with Client(in_memory_server(fake, spec=SUB_ISSUES), cache=None) as client:  # no allowlist
        subs = (await client.call_tool("github_list_sub_issues", {"owner": OWNER, "repo": REPO,
                                                                 "issue_number": parent})).structured_content
    assert len(subs["sub_issues"]) == 2 and "outside_allowlist" not in subs


@pytest.mark.parametrize("spec", [forgejo_support.SERVER, FORGEJO], ids=lambda s: s.name)
async def test_every_forgejo_tool_answers_only_from_the_allowlist(spec: ServerSpec) -> None:
    fake = FakeForgejo()
    ids = forgejo_support.seed(fake)
    for repos in ("acme/web", "acme/web,acme/api"):
        flags = ExposureFlags(repos=tuple(repos.split(",")), toolsets=("all",))
        upstream = ForgeUpstream(forge=FORGEJO_PROFILE, base_url=forgejo_support.API,
                                 transport=fake.asgi_transport(), retry=forgejo_support.FAST_RETRY)
        settings = Settings(token=forgejo_support.OWNER_TOKEN, api_url=forgejo_support.API, exposure=flags)
        markers = tuple(m for m in FORGEJO_MARKERS if m.split("/")[-1] not in repos)
        place = {"owner": "acme", "repo": "web", "org": "acme", "label_id": ids["bug"]}
        async with Client(build_server(spec, settings, upstream=upstream), cache=None) as client:
            screened = await walk(client, spec, place, [1], markers)
        assert "forgejo_list_repo_labels" in screened["ok"]
    fake.assert_no_violations()
