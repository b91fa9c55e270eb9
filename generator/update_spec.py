"""`make update-spec VERSION=x.y.z`: fetch @octokit/openapi with `npm pack`, re-vendor, re-pin."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from generator.drift import drift_report
from generator.overrides import read_overrides
from generator.pipeline import override_files
from generator.spec import REPO_ROOT, SPEC_DIR, index_operations, load_pinned_spec, read_pinned

PACKAGE = "@octokit/openapi"
MEMBER = "package/generated/api.github.com.json"
OVERRIDES_DIR = REPO_ROOT / "overrides"


def fetch(version: str, workdir: Path) -> bytes:
    subprocess.run(["npm", "pack", f"{PACKAGE}@{version}", "--silent"], cwd=workdir, check=True,
                   stdout=subprocess.DEVNULL)
    tarball = next(workdir.glob("*.tgz"))
    with tarfile.open(tarball) as tar:
        member = tar.extractfile(MEMBER)
        if member is None:
            raise SystemExit(f"{tarball.name} has no {MEMBER}")
        return member.read()


def changed_operations(old: dict[str, object], new: dict[str, object]) -> list[str]:
    before, after = index_operations(old), index_operations(new)
    lines = []
    for op_id in sorted(set(before) | set(after)):
        if op_id not in after:
            lines.append(f"removed  {op_id}")
        elif op_id not in before:
            lines.append(f"added    {op_id}")
        elif json.dumps(before[op_id].node, sort_keys=True) != json.dumps(after[op_id].node, sort_keys=True):
            lines.append(f"changed  {op_id}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m generator.update_spec VERSION", file=sys.stderr)
        return 2
    version = argv[0]
    old = load_pinned_spec().document
    with tempfile.TemporaryDirectory() as tmp:
        raw = fetch(version, Path(tmp))
    new = json.loads(raw)
    pinned = read_pinned()
    # what changed for the operations we use, printed before anything is re-pinned
    for path in override_files(OVERRIDES_DIR):
        model, located = read_overrides(path, f"overrides/{path.name}")
        print(f"## {path.name}")
        print(drift_report(old, new, model, located, f"{PACKAGE} {pinned.version}", f"{PACKAGE} {version}"))
    (SPEC_DIR / pinned.vendored_file).write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    meta = json.loads((SPEC_DIR / "PINNED.json").read_text(encoding="utf-8"))
    meta.update(version=version, sha256=hashlib.sha256(raw).hexdigest())
    (SPEC_DIR / "PINNED.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    for line in changed_operations(old, new):
        print(line)
    print(f"vendored {PACKAGE}@{version}; now run `make generate` and review the diff")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
