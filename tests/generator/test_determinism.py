"""Output is byte-identical across runs, processes, hash seeds and working directories, and
`generate` is pure: no writes, no subprocesses, no chdir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gen_support import (
    GENERATED,
    GOLDEN,
    OVERRIDES,
    PYTHON,
    digests,
    golden_cases,
    snapshot,
)

from generator.pipeline.generate import Result, generate, load_inputs
from generator.spec.pinned import REPO_ROOT

SEEDS = ("0", "1", "random")

_DIGEST_SCRIPT = """
import json, sys
from pathlib import Path
from generator.pipeline.generate import generate, load_inputs
out = {}
real = generate(load_inputs(Path(sys.argv[1])))
out["real"] = {k: __import__("hashlib").sha256(v.encode()).hexdigest() for k, v in real.files.items()}
for root in sys.argv[2:]:
    root = Path(root)
    (yaml,) = sorted((root / "overrides").glob("*.yaml"))
    r = generate(load_inputs(yaml, root=root, spec_dir=root / "spec"))
    out[root.name] = {k: __import__("hashlib").sha256(v.encode()).hexdigest() for k, v in r.files.items()}
print(json.dumps({"seed": __import__("os").environ.get("PYTHONHASHSEED"), "digests": out}))
"""


def _in_process() -> dict[str, dict[str, str]]:
    real = generate(load_inputs(OVERRIDES))
    assert real.files is not None
    out = {"real": digests(real.files)}
    for c in golden_cases():
        files = c.generate().files
        assert files is not None
        out[c.name] = digests(files)
    return out


def test_two_runs_in_one_process_are_byte_identical() -> None:
    first = generate(load_inputs(OVERRIDES))
    inputs = load_inputs(OVERRIDES)
    second, third = generate(inputs), generate(inputs)  # the same Inputs twice: no state leaks
    assert first.files is not None and second.files is not None and third.files is not None
    assert first.files == second.files == third.files
    assert [d.render() for d in first.diagnostics] == [d.render() for d in third.diagnostics]


def test_golden_cases_are_byte_identical_across_runs() -> None:
    for c in golden_cases():
        a, b = c.generate().files, c.generate().files
        assert a is not None and a == b, c.name


def test_identical_across_processes_hash_seeds_and_working_directories(tmp_path: Path) -> None:
    roots = [str(c.root) for c in golden_cases()]

    def run(seed: str) -> subprocess.CompletedProcess[str]:
        cwd = tmp_path / f"seed-{seed}"
        cwd.mkdir()
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run([PYTHON, "-c", _DIGEST_SCRIPT, str(OVERRIDES), *roots], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=180, check=False)

    with ThreadPoolExecutor(max_workers=len(SEEDS)) as pool:
        procs = list(pool.map(run, SEEDS))
    expected = _in_process()
    for seed, proc in zip(SEEDS, procs, strict=True):
        assert proc.returncode == 0, proc.stderr
        got: dict[str, Any] = json.loads(proc.stdout)
        assert got["seed"] == seed
        for name, files in expected.items():
            differing = sorted(k for k in set(files) | set(got["digests"][name])
                               if files.get(k) != got["digests"][name].get(k))
            assert not differing, f"PYTHONHASHSEED={seed}: {name} differs in {differing}"


def test_the_real_output_matches_the_manifest_digests() -> None:
    result = generate(load_inputs(OVERRIDES))
    assert result.files is not None
    manifest = json.loads(result.files["github_issues_mcp/MANIFEST.json"])
    without = {k.split("/", 1)[1]: v for k, v in digests(result.files).items()
               if k != "github_issues_mcp/MANIFEST.json"}
    assert manifest["files"] == without


# -- purity ------------------------------------------------------------------------------------

_WRITE_EVENTS = {
    "os.mkdir", "os.remove", "os.rename", "os.rmdir", "os.symlink", "os.link", "os.truncate",
    "os.chmod", "os.chown", "os.utime", "os.chdir", "os.fchdir", "os.system", "os.exec",
    "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.startfile", "os.kill",
    "subprocess.Popen", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
    "shutil.move", "shutil.rmtree", "shutil.make_archive", "shutil.unpack_archive",
    "tempfile.mkstemp", "tempfile.mkdtemp", "socket.connect", "socket.bind",
}
_RECORDING: list[list[tuple[str, str]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _RECORDING:
        return
    if event == "open":
        path, mode = args[0], args[1]
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            _RECORDING[-1].append((event, f"{path} mode={mode}"))
        elif isinstance(mode, int) and mode & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC):
            _RECORDING[-1].append((event, f"{path} flags={mode}"))
    elif event in _WRITE_EVENTS:
        _RECORDING[-1].append((event, repr(args)[:200]))


_HOOKED = False


@contextmanager
def _side_effects() -> Iterator[list[tuple[str, str]]]:
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # cannot be removed; inert while _RECORDING is empty
        _HOOKED = True
    seen: list[tuple[str, str]] = []
    _RECORDING.append(seen)
    try:
        yield seen
    finally:
        _RECORDING.pop()


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        st = path.stat()
        out[path.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


WATCHED = (GENERATED, GOLDEN, REPO_ROOT / "spec", REPO_ROOT / "overrides")


@pytest.mark.parametrize("which", ["real", "hostile"])
def test_generate_is_pure(which: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = load_inputs(OVERRIDES) if which == "real" else next(
        c for c in golden_cases() if c.name == which).inputs()
    generate(inputs)  # warm up: lazy imports may write bytecode caches on a first run
    monkeypatch.chdir(tmp_path)
    before_repo = {str(d): _listing(d) for d in WATCHED}
    before_top = sorted(p.name for p in REPO_ROOT.iterdir())
    with _side_effects() as seen:
        result: Result = generate(inputs)
    assert result.files is not None
    assert seen == [], f"generate had side effects: {seen}"
    assert snapshot(tmp_path) == {}  # nothing created in the working directory
    assert {str(d): _listing(d) for d in WATCHED} == before_repo
    assert sorted(p.name for p in REPO_ROOT.iterdir()) == before_top


def test_the_audit_hook_would_notice_a_write(tmp_path: Path) -> None:
    """Guard the purity test itself."""
    with _side_effects() as seen:
        (tmp_path / "x.txt").write_text("x", encoding="utf-8")
        subprocess.run([PYTHON, "-c", "pass"], check=True)
    assert [e for e, _ in seen] == ["open", "subprocess.Popen"]


def test_generate_reports_its_stages() -> None:
    result = generate(load_inputs(OVERRIDES))
    assert {"load", "build", "lint", "render", "format"} <= set(result.timings)
    assert all(v >= 0 for v in result.timings.values())
