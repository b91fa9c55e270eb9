"""`<server> list-scopes` (issue 37): the token scopes a selection of tools needs, chosen with
the server's own exposure flags, printed by the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from github_mcp import SERVER

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("github-mcp")


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GHMCP_")}
    return subprocess.run([str(SCRIPT), "list-scopes", *args], capture_output=True, text=True,
                          env={**clean, **env}, cwd=ROOT, timeout=120, check=False)


def test_the_default_toolsets_need_public_repo_and_repo_for_private_repositories() -> None:
    proc = run("--output", "summary")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["scopes: public_repo", "private repositories: repo"]
    assert lines[2].startswith("fine-grained permissions: ") and "issues:write" in lines[2]
    # github_get_me (toolset context, a default one) reads the token's own account
    assert lines[3:] == ["acts on the token's own account: not with an App installation's token"]


def test_read_only_needs_no_scope_on_public_repositories() -> None:
    proc = run("--read-only", "--toolsets", "issues,labels,milestones,sub_issues", "--output", "summary")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["scopes: (none)", "private repositories: repo",
                                        "fine-grained permissions: issues:read"]


def test_the_text_lists_each_tool_of_the_selection() -> None:
    proc = run("--toolsets", "labels")
    assert proc.returncode == 0, proc.stderr
    rows = [line.split()[0] for line in proc.stdout.splitlines()[:4]]
    assert rows == sorted(t.name for t in SERVER.tools if t.toolset == "labels")
    assert "github_delete_label  writes     public_repo (or repo)" in proc.stdout


def test_json_carries_every_tool_and_the_total() -> None:
    proc = run("--toolsets", "all", "--output", "json", GHMCP_EXCLUDE_TOOLS="github_update_issues")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    names = [t["name"] for t in data["tools"]]
    assert "github_update_issues" not in names and len(names) == len(SERVER.tools) - 1
    assert data["needs"]["required"] == ["public_repo"] and data["private_repositories"] == "repo"
    create = next(t for t in data["tools"] if t["name"] == "github_create_issue")
    assert create == {"name": "github_create_issue", "toolset": "issues", "read_only": False,
                      "required": ["public_repo"], "accepted": ["public_repo", "repo"],
                      "fine_grained": ["issues:write"]}


@pytest.mark.parametrize("args", [("--toolsets", "nope"), ("--output", "yaml")])
def test_a_bad_selection_is_refused_with_exit_2(args: tuple[str, ...]) -> None:
    proc = run(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "list-scopes" in proc.stderr
