"""Exposure controls through the official MCP client (in memory, both eras): read-only, toolsets,
tool lists, the repository allowlist, and the documents that describe the active surface."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, ResourceTemplateReference

from fakegithub import FakeGitHub
from ghmcp_runtime.guards.exposure import ExposureFlags
from github_issues_mcp import SERVER
from github_milestones_mcp import SERVER as MILESTONES
from tests.functional.conftest import OWNER, REPO, ROOT, TOKEN, in_memory_server, sent, stdio_params
from tests.functional.session import Session

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]
GENERATED = ROOT / "generated" / "github_issues_mcp"
BASE = {"owner": OWNER, "repo": REPO}
SECRET = {"owner": OWNER, "repo": "secret"}
READS = ["github_get_issue", "github_list_labels", "github_search_issues"]
LABELS = ["github_create_label", "github_delete_label", "github_list_labels", "github_update_label"]
INDEX = "ghissues://repos/{owner}/{repo}/issues{?state,labels,page}"
ISSUE = "ghissues://repos/{owner}/{repo}/issues/{issue_number}"
LABEL = "ghissues://repos/{owner}/{repo}/labels/{name}"
ONLY_ROADMAP = ExposureFlags(repos=(f"{OWNER}/{REPO}",))


def client(fake: FakeGitHub, mode: str = "auto", **flags: Any) -> Client:
    return Client(in_memory_server(fake, exposure=ExposureFlags(**flags)), mode=mode, cache=None)


def fingerprint_of(c: Client) -> str:
    assert c.server_info is not None and c.server_info.description is not None
    return c.server_info.description.rsplit(" ", 1)[-1]


async def text(c: Client, uri: str) -> str:
    contents = (await c.read_resource(uri)).contents[0]
    return contents.text  # type: ignore[union-attr]


async def names(c: Client) -> list[str]:
    return sorted(t.name for t in (await c.list_tools()).tools)


async def session(c: Client) -> Session:
    listed = await c.list_tools()
    return Session(c, {t.name: t.model_dump(by_alias=True, exclude_none=True, mode="json")
                       for t in listed.tools}, ())


@pytest.fixture
def two_repos(fake: FakeGitHub, seeded: dict[str, Any]) -> dict[str, Any]:
    """The functional seed plus octo-org/secret and someone-else/thing, both reachable by the
    token, with issues and labels the allowlisted server must never read."""
    for owner, repo in ((OWNER, "secret"), ("someone-else", "thing")):
        fake.add_repo(owner, repo)
        fake.grant("octocat", f"{owner}/{repo}")
        fake.add_label(owner, repo, "secret-label")
        fake.add_issue(owner, repo, "Crash in the secret project", body="hidden", author="hubot")
    return seeded


# -- read-only, toolsets, tools ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_read_only_hides_every_write_and_the_documents_say_so(
    fake: FakeGitHub, seeded: dict[str, Any], mode: str
) -> None:
    async with client(fake, mode, read_only=True) as c:
        listed = await c.list_tools()
        with pytest.raises(MCPError) as hidden:
            await c.call_tool("github_create_issue", {**BASE, "title": "must not exist"})
        summary = await text(c, "ghissues://server/summary")
        catalog = json.loads(await text(c, "ghissues://server/errors"))
        failing = await c.call_tool("github_get_issue", {**BASE, "issue_number": 999})
        templates = await c.list_resource_templates()
        fp, instructions = fingerprint_of(c), c.instructions or ""
    assert sorted(t.name for t in listed.tools) == READS
    assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
    assert hidden.value.error.code == INVALID_PARAMS
    assert hidden.value.error.message.startswith("Unknown tool: github_create_issue")
    assert fake.calls("issues/create") == []
    assert fp.startswith("github-issues-mcp@0.1.0+") and fp != SERVER.fingerprint
    assert fp in instructions and f"`{fp}`" in summary and catalog["fingerprint"] == fp
    assert failing.structured_content["fingerprint"] == fp
    assert "Read-only: no tool here writes to GitHub." in instructions
    assert "Read-only: no tool here writes to GitHub." in summary
    for hidden_tool in ("github_create_issue", "github_update_issue", "github_delete_label"):
        assert f"- `{hidden_tool}`" not in summary
    assert all(set(code["tools"]) <= set(READS) for code in catalog["codes"])
    assert "label_exists" not in {code["code"] for code in catalog["codes"]}
    # every template reads through a read-only tool, so all of them stay
    assert len(templates.resource_templates) == len(SERVER.templates)
    if mode == "auto":
        assert listed.cache_scope == "public"  # stdio/in-memory: one surface for every request


@pytest.mark.parametrize("mode", MODES)
async def test_a_toolset_hides_the_other_tools_templates_and_completions(
    fake: FakeGitHub, seeded: dict[str, Any], mode: str
) -> None:
    async with client(fake, mode, toolsets=("labels",)) as c:
        tools = await names(c)
        templates = [t.uri_template for t in (await c.list_resource_templates()).resource_templates]
        with pytest.raises(MCPError) as unreadable:
            await c.read_resource(f"ghissues://repos/{OWNER}/{REPO}/issues/1")
        before = len(fake.requests)
        owners = await c.complete(ResourceTemplateReference(uri=ISSUE),
                                  argument={"name": "owner", "value": ""})
        after = len(fake.requests)
        label_names = await c.complete(ResourceTemplateReference(uri=LABEL),
                                       argument={"name": "name", "value": "b"},
                                       context_arguments=BASE)
        summary = await text(c, "ghissues://server/summary")
        labels = json.loads(await text(c, f"ghissues://repos/{OWNER}/{REPO}/labels"))
    assert tools == LABELS
    assert templates == ["ghissues://repos/{owner}/{repo}/labels{?page,limit}", LABEL]
    assert unreadable.value.error.code == INVALID_PARAMS
    assert unreadable.value.error.data["machine_code"] == "invalid_field"
    assert owners.completion.values == [] and after == before
    assert label_names.completion.values == ["bug"]
    assert ISSUE not in summary and "ghissues://repos/{owner}/{repo}/labels/{name}" in summary
    assert len(labels["labels"]) == 5


async def test_equal_surfaces_share_a_fingerprint_however_they_were_chosen(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    async with client(fake, toolsets=("labels",)) as by_toolset, \
            client(fake, tools=tuple(LABELS)) as by_tools, \
            client(fake, exclude_tools=("github_search_issues", "github_get_issue", "github_create_issue",
                                        "github_update_issue", "github_update_issues",
                                        "github_add_comment")) as by_exclusion, \
            client(fake) as whole, client(fake, toolsets=("all",)) as all_sets:
        fingerprints = [fingerprint_of(c) for c in (by_toolset, by_tools, by_exclusion)]
        summaries = [await text(c, "ghissues://server/summary") for c in (by_toolset, by_tools)]
        assert fingerprint_of(whole) == fingerprint_of(all_sets) == SERVER.fingerprint
    assert len(set(fingerprints)) == 1 and fingerprints[0] != SERVER.fingerprint
    assert summaries[0] == summaries[1]


async def test_the_whole_surface_serves_exactly_the_generated_documents(fake: FakeGitHub) -> None:
    """The runtime renders the summary and catalog per surface with the generator's code: for
    the whole surface it must produce the committed files byte for byte."""
    async with client(fake) as c:
        summary = await text(c, "ghissues://server/summary")
        errors = await text(c, "ghissues://server/errors")
        instructions = c.instructions
    assert summary == (GENERATED / "summary.md").read_text(encoding="utf-8")
    assert errors == (GENERATED / "errors.json").read_text(encoding="utf-8")
    assert instructions == SERVER.instructions


async def test_the_milestones_server_read_only(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake, spec=MILESTONES, exposure=ExposureFlags(read_only=True)),
                      cache=None) as c:
        assert await names(c) == ["github_get_milestone", "github_list_milestones"]
        with pytest.raises(MCPError) as hidden:
            await c.call_tool("github_delete_milestone", {**BASE, "milestone_number": 1})
        catalog = json.loads(await text(c, "ghmilestones://server/errors"))
    assert hidden.value.error.code == INVALID_PARAMS
    assert "milestone_exists" not in {code["code"] for code in catalog["codes"]}


# -- the repository allowlist -----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_calls_outside_the_allowlist_are_refused_before_any_request(
    fake: FakeGitHub, two_repos: dict[str, Any], mode: str
) -> None:
    async with Client(in_memory_server(fake, exposure=ONLY_ROADMAP), mode=mode, cache=None) as c:
        s = await session(c)
        fake.requests.clear()
        refused = [
            await s.error("github_get_issue", {**SECRET, "issue_number": 1}, "repo_not_allowed"),
            await s.error("github_create_issue", {**SECRET, "title": "nope"}, "repo_not_allowed"),
            await s.error("github_list_labels", {"owner": "someone-else", "repo": "thing"},
                          "repo_not_allowed"),
            await s.error("github_search_issues", {**SECRET, "state": "all"}, "repo_not_allowed"),
            await s.error("github_search_issues", {"query": "crash repo:octo-org/secret"},
                          "repo_not_allowed"),
            await s.error("github_search_issues", {"query": "crash user:octo-org"}, "repo_not_allowed"),
        ]
        boolean = await s.error("github_search_issues", {"query": "crash OR hidden"}, "invalid_field")
        assert fake.requests == []
        allowed = await s.ok("github_get_issue", {**BASE, "issue_number": two_repos["first"]})
        catalog = json.loads(await text(c, "ghissues://server/errors"))
        summary = await text(c, "ghissues://server/summary")
    for err in refused:
        assert err["details"]["allowed_repositories"] == [f"{OWNER}/{REPO}"]
        assert "secret" not in err["message"] and "someone-else" not in err["message"]
    assert boolean["details"]["field"] == "query"
    assert allowed["issue"]["issue_number"] == two_repos["first"]
    codes = {code["code"]: code for code in catalog["codes"]}
    assert codes["repo_not_allowed"]["tools"] == sorted(t.name for t in SERVER.tools)
    assert f"Repositories: only {OWNER}/{REPO}" in summary


async def test_search_is_confined_with_qualifiers(fake: FakeGitHub, two_repos: dict[str, Any]) -> None:
    async with Client(in_memory_server(fake, exposure=ONLY_ROADMAP), cache=None) as c:
        s = await session(c)
        fake.requests.clear()
        found = await s.ok("github_search_issues", {"query": "crash", "state": "all"})
        sent = fake.calls("search/issues-and-pull-requests")
        scoped = await s.ok("github_search_issues", {"query": "crash", **BASE})
    assert [r["title"] for r in found["issues"]] == ["Crash on empty config"]
    assert len(sent) == 1 and sent[0].query["q"].endswith(f" repo:{OWNER}/{REPO}")
    assert [r["title"] for r in scoped["issues"]] == ["Crash on empty config"]


async def test_without_an_allowlist_search_reaches_every_repository(
    fake: FakeGitHub, two_repos: dict[str, Any]
) -> None:
    """The control for the test above: the secret issue is found when nothing confines search."""
    async with client(fake) as c:
        found = await (await session(c)).ok("github_search_issues", {"query": "crash", "state": "all"})
    assert len(found["issues"]) == 3


async def test_safe_delete_counts_through_search_inside_the_allowlist(
    fake: FakeGitHub, seeded: dict[str, Any]
) -> None:
    async with Client(in_memory_server(fake, exposure=ONLY_ROADMAP), cache=None) as c:
        refused = await (await session(c)).error("github_delete_label", {**BASE, "name": "bug"},
                                                 "label_in_use")
    assert refused["details"]["count"] >= 1


async def test_resources_and_completions_reach_nothing_outside(
    fake: FakeGitHub, two_repos: dict[str, Any]
) -> None:
    async with Client(in_memory_server(fake, exposure=ONLY_ROADMAP), cache=None) as c:
        fake.requests.clear()
        failures = []
        for uri in (f"ghissues://repos/{OWNER}/secret/issues/1", f"ghissues://repos/{OWNER}/secret/issues",
                    "ghissues://repos/someone-else/thing/labels", f"ghissues://repos/{OWNER}/secret/labels/bug"):
            with pytest.raises(MCPError) as failure:
                await c.read_resource(uri)
            failures.append(failure.value.error)
        labels = await c.complete(ResourceTemplateReference(uri=LABEL),
                                  argument={"name": "name", "value": ""},
                                  context_arguments=SECRET)
        assert fake.requests == []
        owners = await c.complete(ResourceTemplateReference(uri=INDEX), argument={"name": "owner", "value": ""})
        repos = await c.complete(ResourceTemplateReference(uri=INDEX), argument={"name": "repo", "value": ""},
                                 context_arguments={"owner": OWNER})
        unplaced = await c.complete(ResourceTemplateReference(uri=INDEX), argument={"name": "repo", "value": ""})
        inside = json.loads(await text(c, f"ghissues://repos/{OWNER}/{REPO}/issues"))
    for error in failures:
        assert error.code == INVALID_PARAMS and error.data["machine_code"] == "repo_not_allowed"
        assert error.data["details"]["field"] == "uri"
    assert labels.completion.values == []
    assert owners.completion.values == [OWNER]
    assert repos.completion.values == [REPO]
    assert unplaced.completion.values == [REPO]  # the single allowed owner is implied
    assert inside["issues"]


async def test_without_an_allowlist_completions_list_every_repository(
    fake: FakeGitHub, two_repos: dict[str, Any]
) -> None:
    """The control for the test above."""
    async with client(fake) as c:
        owners = await c.complete(ResourceTemplateReference(uri=INDEX), argument={"name": "owner", "value": ""})
        repos = await c.complete(ResourceTemplateReference(uri=INDEX), argument={"name": "repo", "value": ""},
                                 context_arguments={"owner": OWNER})
    assert owners.completion.values == [OWNER, "someone-else"]
    assert repos.completion.values == [REPO, "secret"]


async def test_an_owner_wildcard_allows_every_repository_of_that_owner(
    fake: FakeGitHub, two_repos: dict[str, Any]
) -> None:
    flags = ExposureFlags(repos=(f"{OWNER}/*",))
    async with Client(in_memory_server(fake, exposure=flags), cache=None) as c:
        s = await session(c)
        secret = await s.ok("github_search_issues", {**SECRET, "state": "all"})
        everywhere = await s.ok("github_search_issues", {"query": "crash", "state": "all"})
        await s.error("github_list_labels", {"owner": "someone-else", "repo": "thing"}, "repo_not_allowed")
    assert [r["title"] for r in secret["issues"]] == ["Crash in the secret project"]
    assert sorted(r["title"] for r in everywhere["issues"]) == ["Crash in the secret project",
                                                               "Crash on empty config"]
    assert TOKEN not in json.dumps(everywhere)


# -- a real stdio subprocess ------------------------------------------------------------------


async def test_flags_over_a_real_stdio_subprocess(fake: FakeGitHub, two_repos: dict[str, Any]) -> None:
    with fake.serve() as url:
        params = stdio_params(url)
        params.args = [*params.args, "--read-only", "--repos", f"{OWNER}/{REPO}"]
        async with Client(params, cache=None) as c:
            tools = await names(c)
            with pytest.raises(MCPError) as hidden:
                await c.call_tool("github_update_issue", {**BASE, "issue_number": 1, "title": "x"})
            outside = await c.call_tool("github_get_issue", {**SECRET, "issue_number": 1})
            inside = await c.call_tool("github_get_issue", {**BASE, "issue_number": 1})
            instructions = c.instructions or ""
    assert tools == READS and hidden.value.error.code == INVALID_PARAMS
    assert outside.is_error and outside.structured_content["code"] == "repo_not_allowed"
    assert not inside.is_error
    assert "Read-only" in instructions and f"Repositories: only {OWNER}/{REPO}" in instructions
    assert [r.path for r in sent(fake)] == [f"/repos/{OWNER}/{REPO}/issues/1",
                                              f"/repos/{OWNER}/{REPO}/issues/1/comments"]


@pytest.mark.parametrize(("args", "env", "message"), [
    (["--toolsets", "isues"], {}, "--toolsets: unknown name 'isues'"),
    (["--read-only", "--tools", "github_create_issue"], {}, "leave no tool"),
    ([], {"GHMCP_REPOS": "octo-org"}, "is not owner/repo or owner/*"),
    ([], {"GHMCP_READ_ONLY": "sometimes"}, "GHMCP_READ_ONLY takes true or false"),
])
def test_bad_flags_stop_the_console_script_with_a_usage_error(
    args: list[str], env: dict[str, str], message: str
) -> None:
    params = stdio_params("http://127.0.0.1:9")
    done = subprocess.run([params.command, *params.args, *args], env={**(params.env or {}), **env},
                          cwd=params.cwd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and message in done.stderr


async def test_no_repair_points_at_a_hidden_tool(fake: FakeGitHub, seeded: dict[str, Any]) -> None:
    """delete_label's label_in_use repair names github_search_issues: a server showing only the
    labels toolset must not send an agent to a tool it would not find."""
    async with client(fake) as whole, client(fake, toolsets=("labels",)) as labels:
        shown = await (await session(whole)).error("github_delete_label", {**BASE, "name": "bug"},
                                                   "label_in_use")
        hidden = await (await session(labels)).error("github_delete_label", {**BASE, "name": "bug"},
                                                     "label_in_use")
        text_hidden = (await labels.call_tool("github_delete_label", {**BASE, "name": "bug"})).content
    assert shown["repair"]["tool"] == "github_search_issues"
    assert "repair" not in hidden and hidden["message"] == shown["message"]
    assert "github_search_issues" not in text_hidden[0].text  # type: ignore[union-attr]
