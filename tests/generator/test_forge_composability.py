"""Composability across the forge (issue 32): a small comments override file (five tools that
each take issue_number, no Python) generates beside the repository's GitHub files, because the
issues toolset returns issue numbers; alone, it is refused with a diagnostic that says no toolset
of the forge returns them. The forge server then names the toolset a selection lacks: in its log
and instructions when selected at start, in the enable answer with --dynamic-toolsets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gen_support import cli

from generator.base.diagnostics import Level
from generator.spec.pinned import REPO_ROOT

OVERRIDES = REPO_ROOT / "overrides"
CASE = Path(__file__).resolve().parent / "cases" / "forge_comments" / "github_comments.yaml"
COMMENT_TOOLS = ["github_add_issue_reaction", "github_list_issue_comments", "github_list_issue_labels",
                 "github_list_issue_reactions", "github_remove_issue_reaction"]


def test_the_case_is_five_tools_taking_issue_numbers_and_no_python() -> None:
    data = yaml.safe_load(CASE.read_text(encoding="utf-8"))
    tools = data["tools"]
    assert sorted(t["name"] for t in tools) == COMMENT_TOOLS
    assert all("issue_number" in t["params"] for t in tools)
    assert "hooks" not in data["server"] and not list(CASE.parent.glob("*.py"))


@pytest.fixture(scope="module")
def forge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's override files, its forge files and the comments file, generated."""
    root = tmp_path_factory.mktemp("forge")
    shutil.copytree(OVERRIDES, root / "overrides", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(CASE, root / "overrides" / CASE.name)
    proc = cli(["generate", "--quiet", "--overrides-dir", str(root / "overrides"),
                "--out", str(root / "generated")], cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root / "generated"


def test_it_generates_as_a_toolset_whose_ids_come_from_the_issues_toolset(forge: Path) -> None:
    tools = json.loads((forge / "github_comments_mcp" / "tools.json").read_text(encoding="utf-8"))["tools"]
    assert sorted(t["name"] for t in tools) == COMMENT_TOOLS
    index = (forge / "github_mcp" / "TOOLS.md").read_text(encoding="utf-8")
    assert "| `comments` | github-comments-mcp | no | 5 |" in index
    for tool in ("github_list_issue_comments", "github_add_issue_reaction"):
        row = next(line for line in index.splitlines() if line.startswith(f"| `{tool}` | `issue_number` |"))
        assert "`github_search_issues`" in row
    server = (forge / "github_mcp" / "server.py").read_text(encoding="utf-8")
    assert "from github_comments_mcp.server import SERVER as GITHUB_COMMENTS_MCP" in server
    # where the per-file index says each identifier comes from: the toolset of another file
    own = (forge / "github_comments_mcp" / "TOOLS.md").read_text(encoding="utf-8")
    assert "`issue_number` ← `github_list_issue_dependencies` (toolset dependencies), " \
           "`github_list_sub_issues` (toolset sub_issues), `github_search_issues` (toolset issues)" in own


def test_alone_it_is_refused_and_the_diagnostic_says_no_toolset_returns_the_id(tmp_path: Path) -> None:
    directory = tmp_path / "overrides"
    (directory / "forges").mkdir(parents=True)
    shutil.copy(CASE, directory / CASE.name)
    forge_file = (OVERRIDES / "forges" / "github.yaml").read_text(encoding="utf-8")
    start = forge_file.index("default_toolsets:")
    end = forge_file.index("\n", start)
    (directory / "forges" / "github.yaml").write_text(
        forge_file[:start] + "default_toolsets: [comments]" + forge_file[end:], encoding="utf-8")
    from generator.pipeline.run_all import generate_all
    from generator.spec.pinned import SpecCache

    run = generate_all(directory, specs=SpecCache(), root=tmp_path)
    errors = [d for r in run.results for d in r.diagnostics if d.level is Level.ERROR]
    assert not run.ok and {d.rule for d in errors} == {"composability"}
    assert len(errors) == len(COMMENT_TOOLS)  # one per tool, each at its issue_number parameter
    for d in errors:
        assert d.where.file == "overrides/github_comments.yaml" and d.where.line > 0
        assert "no toolset of the GitHub server returns issue_number" in d.message


PROBE = """
import json, anyio, logging
from mcp import Client
from github_mcp import SERVER
from ghmcp_runtime.guards.exposure import ExposureFlags
from ghmcp_runtime.serving.app import Settings, build_server

async def main():
    out = {}
    start = build_server(SERVER, Settings(token="ghp_" + "x" * 36,
                                          exposure=ExposureFlags(toolsets=("comments",))))
    async with Client(start, mode="legacy", cache=None) as client:
        out["instructions"] = client.instructions
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
    grow = build_server(SERVER, Settings(token="ghp_" + "x" * 36, exposure=ExposureFlags(dynamic=True)))
    async with Client(grow, mode="legacy", cache=None) as client:
        first = await client.call_tool("github_enable_toolsets", {"toolsets": ["comments"]})
        then = await client.call_tool("github_enable_toolsets", {"toolsets": ["issues"]})
        out["enable"] = [first.structured_content, then.structured_content]
    print(json.dumps(out))

anyio.run(main)
"""


def test_the_forge_server_names_the_toolset_a_selection_lacks(forge: Path) -> None:
    """Selected at start without the issues toolset: a warning in the log and a sentence in the
    instructions; enabled alone (--dynamic-toolsets): the answer's missing_inputs, gone once the
    issues toolset is enabled too. The generated tree is imported ahead of the installed one."""
    env = {**os.environ, "PYTHONPATH": str(forge)}
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                          timeout=120, cwd=forge, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["tools"] == COMMENT_TOOLS
    sentence = "github_list_issue_comments takes issue_number, which only toolsets"
    assert sentence in out["instructions"] and "issues" in out["instructions"].split(sentence, 1)[1][:80]
    warnings = [json.loads(line) for line in proc.stderr.splitlines() if '"config_warning"' in line]
    assert any(sentence in w["reason"] and "--toolsets" in w["reason"] for w in warnings), proc.stderr
    alone, together = out["enable"]
    assert any(line.startswith("github_add_issue_reaction takes issue_number") for line in alone["missing_inputs"])
    assert "missing_inputs" not in together
