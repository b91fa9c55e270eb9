"""Exposure flags and X-MCP-* headers: selection rules, and a header only ever narrows."""

from __future__ import annotations

import argparse

import pytest

from ghmcp_runtime.guards.exposure import (
    ExposureError,
    ExposureFlags,
    ExposurePolicy,
    add_exposure_arguments,
    exposure_flags,
)
from github_issues_mcp import SERVER

ISSUES = {"github_search_issues", "github_get_issue", "github_create_issue", "github_update_issue",
          "github_update_issues", "github_add_comment"}
LABELS = {"github_list_labels", "github_create_label", "github_update_label", "github_delete_label"}
READS = {"github_search_issues", "github_get_issue", "github_list_labels"}


def policy(**flags: object) -> ExposurePolicy:
    return ExposurePolicy(SERVER.tools, SERVER.toolsets, ExposureFlags(**flags))  # type: ignore[arg-type]


@pytest.mark.parametrize(("flags", "tools"), [
    ({}, ISSUES | LABELS),
    ({"toolsets": ("all",)}, ISSUES | LABELS),
    ({"toolsets": ("labels",)}, LABELS),
    ({"tools": ("github_get_issue",)}, {"github_get_issue"}),
    ({"toolsets": ("labels",), "tools": ("github_get_issue",)}, LABELS | {"github_get_issue"}),
    ({"exclude_tools": ("github_delete_label",)}, ISSUES | LABELS - {"github_delete_label"}),
    ({"toolsets": ("labels",), "exclude_tools": ("github_list_labels",)}, LABELS - {"github_list_labels"}),
    ({"read_only": True}, READS),
    # read-only wins over an explicit --tools
    ({"read_only": True, "tools": ("github_create_issue", "github_get_issue")}, {"github_get_issue"}),
    ({"read_only": True, "toolsets": ("labels",)}, {"github_list_labels"}),
])
def test_flags_select_the_server_surface(flags: dict[str, object], tools: set[str]) -> None:
    assert policy(**flags).base.tools == tools


@pytest.mark.parametrize(("flags", "message"), [
    ({"toolsets": ("lables",)}, "--toolsets: unknown name 'lables'"),
    ({"tools": ("github_get_issues",)}, "--tools: unknown name 'github_get_issues'"),
    ({"exclude_tools": ("nope",)}, "--exclude-tools: unknown name 'nope'"),
    ({"read_only": True, "tools": ("github_create_issue",)}, "leave no tool"),
    ({"repos": ("octo-org",)}, "--repos: repository allowlist: 'octo-org' is not owner/repo"),
])
def test_bad_flags_are_refused_with_the_known_names(flags: dict[str, object], message: str) -> None:
    with pytest.raises(ExposureError) as info:
        policy(**flags)
    assert message in str(info.value)


def headers(**values: str) -> dict[str, str]:
    return {f"x-mcp-{k.replace('_', '-')}": v for k, v in values.items()}


@pytest.mark.parametrize(("flags", "sent", "tools"), [
    ({}, {}, ISSUES | LABELS),
    ({}, {"readonly": "true"}, READS),
    ({}, {"toolsets": "labels"}, LABELS),
    ({}, {"tools": "github_get_issue, github_list_labels"}, {"github_get_issue", "github_list_labels"}),
    ({}, {"toolsets": "issues", "exclude_tools": "github_add_comment"}, ISSUES - {"github_add_comment"}),
    # never wider than the server: read-only stays read-only, hidden tools stay hidden
    ({"read_only": True}, {"readonly": "false"}, READS),
    ({"read_only": True}, {"tools": "github_create_issue,github_get_issue"}, {"github_get_issue"}),
    ({"toolsets": ("labels",)}, {"toolsets": "all"}, LABELS),
    ({"toolsets": ("labels",)}, {"toolsets": "issues"}, set()),
    ({"exclude_tools": ("github_delete_label",)}, {"tools": "github_delete_label"}, set()),
])
def test_headers_narrow_within_the_flags(flags: dict[str, object], sent: dict[str, str],
                                         tools: set[str]) -> None:
    server = policy(**flags)
    surface = server.for_request(headers(**sent))
    assert surface.tools == tools and surface.tools <= server.base.tools
    assert surface.per_request


def test_repos_header_narrows_the_allowlist_and_cannot_widen_it() -> None:
    open_server = policy()
    assert open_server.base.repos is None
    assert open_server.for_request(headers(repos="octo-org/roadmap")).repos.patterns() == ("octo-org/roadmap",)  # type: ignore[union-attr]
    bounded = policy(repos=("octo-org/*",))
    asked = bounded.for_request(headers(repos="octo-org/roadmap, evil/*"))
    assert asked.repos is not None and asked.repos.patterns() == ("octo-org/roadmap",)
    outside = bounded.for_request(headers(repos="evil/*"))
    assert outside.repos is not None and outside.repos.patterns() == ()
    assert bounded.for_request(headers()).repos == bounded.base.repos


@pytest.mark.parametrize(("sent", "message"), [
    ({"readonly": "maybe"}, "X-MCP-Readonly takes true or false"),
    ({"toolsets": "isues"}, "X-MCP-Toolsets: unknown name 'isues'"),
    ({"tools": "github_get_issue,nope"}, "X-MCP-Tools: unknown name 'nope'"),
    ({"tools": "<script>"}, "X-MCP-Tools: unknown name a name"),
    ({"exclude_tools": "x"}, "X-MCP-Exclude-Tools: unknown name 'x'"),
    ({"repos": "octo-org"}, "X-MCP-Repos: repository allowlist"),
    ({"tools": ",".join(["github_get_issue"] * 65)}, "more than 64 names"),
    ({"tools": "a" * 5000}, "longer than 4096"),
])
def test_headers_the_server_cannot_apply_are_refused(sent: dict[str, str], message: str) -> None:
    with pytest.raises(ExposureError) as info:
        policy().for_request(headers(**sent))
    assert message in str(info.value)


def test_blank_headers_narrow_nothing() -> None:
    assert policy().for_request(headers(readonly="", toolsets=" ", tools=",")).tools == ISSUES | LABELS


def test_environment_and_command_line() -> None:
    env = ExposureFlags.from_env({"GHMCP_READ_ONLY": "yes", "GHMCP_TOOLSETS": "issues, labels",
                                  "GHMCP_REPOS": "octo-org/*", "GHMCP_EXCLUDE_TOOLS": ""})
    assert env == ExposureFlags(read_only=True, toolsets=("issues", "labels"), repos=("octo-org/*",))
    with pytest.raises(ExposureError):
        ExposureFlags.from_env({"GHMCP_READ_ONLY": "perhaps"})
    parser = argparse.ArgumentParser()
    add_exposure_arguments(parser, SERVER.toolsets)
    assert "this server's toolsets: issues (Issues and their comment threads" in " ".join(
        parser.format_help().split())
    args = parser.parse_args(["--toolsets", "labels", "--repos", "a/b,c/*"])
    merged = exposure_flags(args, env)
    assert merged == ExposureFlags(read_only=True, toolsets=("labels",), repos=("a/b", "c/*"))
    assert exposure_flags(parser.parse_args([]), ExposureFlags()) == ExposureFlags()
