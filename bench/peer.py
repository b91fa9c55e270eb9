"""The peer: FastMCP 4.1.6's OpenAPI provider, installed into its own venv so the project's pinned
dependencies stay untouched, and the trimmed spec (the same 17 issue operations) it serves.

    .venv/bin/python bench/peer.py        # create bench/.peer-venv (first use) and the trimmed spec
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from bench.common import BENCH, WORK, compact  # noqa: E402

FASTMCP_VERSION = "4.1.6"
PEER_VENV = BENCH / ".peer-venv"
PEER_PY = PEER_VENV / "bin" / "python"
STAMP = PEER_VENV / f".fastmcp-{FASTMCP_VERSION}"
TRIMMED = WORK / "trimmed-spec.json"

# The issue operations FastMCP is measured on (shared/notes/baseline-fastmcp.md §2).
OPERATIONS = (
    "issues/list-for-repo", "issues/create", "issues/get", "issues/update",
    "issues/list-comments", "issues/create-comment", "issues/add-labels", "issues/remove-label",
    "issues/lock", "issues/unlock", "issues/list-labels-for-repo", "issues/create-label",
    "issues/get-label", "issues/delete-label", "issues/update-label", "issues/list-milestones",
    "search/issues-and-pull-requests",
)
# ... and the pull-request and file operations of the code trial (bench/code_trial.py)
CODE_OPERATIONS = (
    "pulls/list", "pulls/get", "pulls/list-files", "pulls/list-reviews", "pulls/create-review",
    "pulls/merge", "pulls/create", "checks/list-for-ref", "repos/get-combined-status-for-ref",
    "repos/get-content", "repos/get-commit", "git/create-ref", "repos/create-or-update-file-contents",
)


def ensure_peer_venv(log: bool = True) -> Path:
    """bench/.peer-venv with fastmcp==4.1.6 (created by pip on first use); returns its python."""
    if STAMP.exists() and PEER_PY.exists():
        return PEER_PY
    if log:
        print(f"bench: creating {PEER_VENV.relative_to(BENCH.parent)} with fastmcp=={FASTMCP_VERSION} "
              "(first use only)", file=sys.stderr)
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--clear", str(PEER_VENV)], check=True)
    pip = subprocess.run([str(PEER_PY), "-m", "pip", "install", "--quiet",
                          "--disable-pip-version-check", f"fastmcp=={FASTMCP_VERSION}"],
                         capture_output=True, text=True, check=False)
    if pip.returncode != 0:
        raise SystemExit(f"pip install fastmcp=={FASTMCP_VERSION} failed:\n{pip.stdout}{pip.stderr}")
    STAMP.write_text("ok\n")
    return PEER_PY


def peer_versions() -> dict[str, str]:
    code = ("import json, importlib.metadata as m; print(json.dumps({p: m.version(p) for p in "
            "('fastmcp', 'mcp', 'httpx2', 'pydantic', 'uvicorn', 'starlette')}))")
    out = subprocess.run([str(PEER_PY), "-c", code], check=True, capture_output=True, text=True)
    versions: dict[str, str] = json.loads(out.stdout)
    return versions


def trimmed_spec(operations: tuple[str, ...] = OPERATIONS) -> Path:
    """The pinned description (unpatched, as FastMCP would get it) trimmed to `operations`, with
    their path-level fields and only the components they reference, transitively."""
    from fakegithub.validation import trim_spec
    from generator.spec.pinned import load_pinned_spec

    document = trim_spec(load_pinned_spec().document, operations)
    WORK.mkdir(parents=True, exist_ok=True)
    data = compact(document)
    path = TRIMMED if operations == OPERATIONS else WORK / "trimmed-code-spec.json"
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return path


if __name__ == "__main__":
    print(ensure_peer_venv())
    path = trimmed_spec()
    doc = json.loads(path.read_bytes())
    ops = sum(1 for item in doc["paths"].values() for k in item if k in ("get", "post", "put", "patch", "delete"))
    print(f"{path}: {path.stat().st_size} B, {len(doc['paths'])} paths, {ops} operations")
    print(peer_versions())
