"""The complete override file of docs/overrides.md, extracted and generated as an author would."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "overrides.md"


def complete_example() -> str:
    """The first YAML block after the '## A complete file' heading."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## A complete file"):]
    match = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert match, "docs/overrides.md lost its complete example"
    return match.group(1)


def generate_example(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`python -m generator generate --overrides <the example> --out <tmp>/generated`."""
    overrides = tmp_path / "overrides" / "from_the_doc.yaml"
    overrides.parent.mkdir()
    overrides.write_text(complete_example(), encoding="utf-8")
    out = tmp_path / "generated"
    proc = subprocess.run([sys.executable, "-m", "generator", "generate", "--overrides", str(overrides),
                           "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, check=False)
    return proc, out
