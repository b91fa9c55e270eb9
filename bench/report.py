"""Render docs/BENCHMARKS.md from bench/results.json (see bench/run.py)."""

from __future__ import annotations

import json
import sys
from typing import Any


def render(results: dict[str, Any]) -> str:
    return "```json\n" + json.dumps({k: v for k, v in results.items() if k != "generation"}, indent=1)[:20000] + "\n```\n"


if __name__ == "__main__":
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    data = json.loads((root / "bench" / "results.json").read_text())
    sys.stdout.write(render(data))
