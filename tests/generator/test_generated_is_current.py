"""`generated/` is the biggest golden file: it must be exactly what the generator produces now,
and `python -m generator check` must catch every kind of hand edit."""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from gen_support import GENERATED, OVERRIDES, cli, snapshot

from generator.pipeline.io import compare, existing_files
from generator.pipeline.run_all import generate_all
from generator.render.files import FileMap
from generator.spec.pinned import SpecCache
from tests.support.servers import FORGE_SERVERS, SERVERS


@pytest.fixture(scope="module")
def files() -> FileMap:
    """Every server of overrides/*.yaml and every forge server, as `make generate` writes them."""
    run = generate_all(OVERRIDES.parent, specs=SpecCache())
    assert run.ok, "\n".join(d.render() for r in run.results for d in r.diagnostics)
    out: FileMap = dict(run.forge_files)
    for result in run.results:
        assert result.files is not None
        out.update(result.files)
    return out


def test_generated_is_current(files: FileMap) -> None:
    changes = compare(files, GENERATED)
    report = "\n".join(f"{c.kind}: generated/{c.path}\n{c.diff}" for c in changes)
    assert not changes, (
        f"generated/ is stale or was edited by hand ({len(changes)} file(s)):\n{report}\n"
        "run `make generate` (never edit generated/ by hand) and commit the result")


def test_each_override_file_is_one_package_whose_manifest_lists_its_files(files: FileMap) -> None:
    packages = sorted({path.split("/", 1)[0] for path in files})
    assert packages == sorted([*(s.package for s in SERVERS), *(f.package for f in FORGE_SERVERS)])
    for server in SERVERS:
        manifest = json.loads(files[f"{server.package}/MANIFEST.json"])
        own = {p.split("/", 1)[1] for p in files if p.startswith(f"{server.package}/")}
        assert set(manifest["files"]) == own - {"MANIFEST.json"}
        assert manifest["overrides"]["file"] == f"overrides/{server.overrides.name}"


def test_one_override_file_regenerates_only_its_package(tmp_path: Path) -> None:
    out = _copy(tmp_path, "one")
    _edit(out)
    milestones = out / "github_milestones_mcp" / "tools.json"
    milestones.write_text("{}", encoding="utf-8")  # another server's file: not this run's business
    proc = cli(["generate", "--quiet", "--overrides", str(OVERRIDES), "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert existing_files(out / "github_issues_mcp") == existing_files(GENERATED / "github_issues_mcp")
    assert milestones.read_text(encoding="utf-8") == "{}"


# -- hand-edit detection through the CLI ------------------------------------------------------


def _copy(tmp: Path, name: str) -> Path:
    out = tmp / name / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return out


def _edit(out: Path) -> str:
    target = out / "github_issues_mcp" / "operations.py"
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace('method="GET"', 'method="PUT"', 1), encoding="utf-8")
    return "github_issues_mcp/operations.py"


def _delete(out: Path) -> str:
    (out / "github_issues_mcp" / "TOOLS.md").unlink()
    return "github_issues_mcp/TOOLS.md"


def _add(out: Path) -> str:
    (out / "github_issues_mcp" / "stray.py").write_text("x = 1\n", encoding="utf-8")
    return "github_issues_mcp/stray.py"


TAMPERING = {"CHANGED": _edit, "MISSING": _delete, "EXTRA": _add}


@dataclass(frozen=True)
class CheckRun:
    rel: str
    out: Path
    before: dict[str, bytes]
    proc: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def check_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CheckRun]:
    tmp = tmp_path_factory.mktemp("check")
    prepared: dict[str, tuple[str, Path]] = {}
    for kind, tamper in [*TAMPERING.items(), ("clean", None)]:
        out = _copy(tmp, kind)
        prepared[kind] = (tamper(out) if tamper else "", out)
    before = {k: snapshot(out) for k, (_, out) in prepared.items()}
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {k: pool.submit(cli, ["check", "--out", str(out)], cwd=out.parent)
                   for k, (_, out) in prepared.items()}
        return {k: CheckRun(*prepared[k], before[k], f.result()) for k, f in futures.items()}


def test_check_passes_on_a_faithful_copy(check_runs: dict[str, CheckRun]) -> None:
    run = check_runs["clean"]
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert run.proc.stdout == ""


@pytest.mark.parametrize("kind", list(TAMPERING))
def test_check_reports_hand_edits(kind: str, check_runs: dict[str, CheckRun]) -> None:
    run = check_runs[kind]
    rel, stdout, stderr = run.rel, run.proc.stdout, run.proc.stderr
    assert run.proc.returncode == 1, stdout + stderr
    assert f"{kind}: generated/{rel}" in stdout
    assert "make generate" in stderr and "Traceback" not in stderr
    reported = [ln for ln in stdout.splitlines() if ln.split(":")[0] in TAMPERING]
    assert reported == [f"{kind}: generated/{rel}"]  # only the tampered file
    if kind == "CHANGED":
        assert f"--- generated/{rel} (on disk)" in stdout
        assert f"+++ generated/{rel} (regenerated)" in stdout
        assert '-    method="PUT",' in stdout and '+    method="GET",' in stdout
    assert snapshot(run.out) == run.before  # check never writes


def test_diff_shows_the_same_but_exits_zero(tmp_path: Path) -> None:
    out = _copy(tmp_path, "diff")
    rel = _edit(out)
    proc = cli(["diff", "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"CHANGED: generated/{rel}" in proc.stdout


def test_generate_repairs_a_tampered_copy_and_only_touches_what_differs(tmp_path: Path) -> None:
    out = _copy(tmp_path, "repair")
    changed, missing, extra = _edit(out), _delete(out), _add(out)
    untouched = out / "github_issues_mcp" / "types.py"
    stamp = untouched.stat().st_mtime_ns
    proc = cli(["generate", "--quiet", "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert existing_files(out) == existing_files(GENERATED)
    assert not (out / extra).exists() and (out / missing).exists() and (out / changed).exists()
    assert untouched.stat().st_mtime_ns == stamp  # only changed bytes are written


def test_check_names_the_edited_override_file_first_and_the_manifest_last(tmp_path: Path) -> None:
    """An override file edited without `make generate`: check's output starts with that file (what
    a human edits), then the diffs of what it generates; MANIFEST.json (hashes) comes last, named
    without its diff."""
    out = _copy(tmp_path, "edited")
    overrides = tmp_path / "overrides" / "github_milestones.yaml"
    overrides.parent.mkdir()
    text = (OVERRIDES.parent / "github_milestones.yaml").read_text(encoding="utf-8")
    overrides.write_text(text.replace("Scope: the milestones", "Scope: all milestones", 1), encoding="utf-8")
    proc = cli(["check", "--overrides", str(overrides), "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"EDITED: {overrides} since generated/github_milestones_mcp/ was generated"
    named = [ln.split(": ", 1)[1] for ln in lines if ln.startswith("CHANGED: ")]
    assert named[-1] == "generated/github_milestones_mcp/MANIFEST.json"
    assert "generated/github_milestones_mcp/summary.md" in named[:-1]
    assert "+Scope: all milestones" in proc.stdout and "sha256" not in proc.stdout
