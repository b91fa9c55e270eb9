"""uv, what an MCP Bundle host runs a `server.type: "uv"` bundle with (tests/packaging): pip installs
the pinned release into the git-ignored `.uv-tool/` on first use (its cache is uv's own, outside the
checkout)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UV_VERSION = "0.13.9"
PREFIX = ROOT / ".uv-tool"


def ensure_uv(prefix: Path = PREFIX) -> Path:
    """`prefix/bin/uv` of uv UV_VERSION, installed with pip when missing or another version."""
    marker = prefix / f"uv-{UV_VERSION}.dist-info"
    if not marker.is_dir():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--upgrade", "--target",
                        str(prefix), f"uv=={UV_VERSION}"], check=True, timeout=600)
    return prefix / "bin" / "uv"
