"""`make update-spec VERSION=x [FORGE=github|forgejo] [SOURCE=file]`: re-vendor a forge's API
description, re-pin it, and print the drift report for every override file built on it.

* github: `@octokit/openapi` from npm (`npm pack`), `package/generated/api.github.com.json`,
  vendored unmodified into `spec/`.
* forgejo: `templates/swagger/v1_json.tmpl` of the Forgejo release tag (from Codeberg, or
  SOURCE: a file, e.g. `git show v11.0.1:templates/swagger/v1_json.tmpl` of a clone), its two
  template placeholders substituted, converted from Swagger 2.0 to OpenAPI 3 with the pinned
  `swagger2openapi`; the original and the converted document are vendored into `spec/forgejo/`.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base.npm import NodeSetupError, ensure_npm_package, node_env
from generator.language.overrides import read_overrides
from generator.pipeline.generate import override_files
from generator.review.drift import drift_report
from generator.spec.pinned import (
    REPO_ROOT,
    SPEC_DIR,
    SpecError,
    index_operations,
    load_pinned_spec,
    read_pinned,
    spec_dir,
)

OVERRIDES_DIR = REPO_ROOT / "overrides"

GITHUB_PACKAGE = "@octokit/openapi"
GITHUB_MEMBER = "package/generated/api.github.com.json"

CONVERTER = "swagger2openapi"
CONVERTER_VERSION = "7.0.8"
CONVERTER_PREFIX = REPO_ROOT / ".swagger2openapi"  # git-ignored
FORGEJO_TEMPLATE = "templates/swagger/v1_json.tmpl"
FORGEJO_URL = "https://codeberg.org/forgejo/forgejo/raw/tag/{version}/" + FORGEJO_TEMPLATE
# the template's only placeholders (Forgejo renders them per instance): the API is served at
# <AppSubUrl>/api/v1, so the vendored description uses basePath /api/v1, the root install
FORGEJO_PLACEHOLDERS = {"{{AppVer | JSEscape}}": "{version}", "{{AppSubUrl | JSEscape}}": ""}


@dataclass(frozen=True, slots=True)
class Vendored:
    """What one update produced: the document the generator reads, and provenance to pin."""

    document: bytes
    pinned: dict[str, Any]  # keys merged into PINNED.json
    extra_files: dict[str, bytes]  # other files written (gzipped) beside it, by name


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob(data: bytes) -> str:
    """The file's git object id: `git rev-parse <tag>:<path>` in a clone must print the same."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


# -- GitHub ----------------------------------------------------------------------------------------

def github(version: str, source: Path | None) -> Vendored:
    with tempfile.TemporaryDirectory() as tmp:
        if source is None:
            subprocess.run(["npm", "pack", f"{GITHUB_PACKAGE}@{version}", "--silent"], cwd=tmp,
                           check=True, stdout=subprocess.DEVNULL)
            source = next(Path(tmp).glob("*.tgz"))
        with tarfile.open(source) as tar:
            member = tar.extractfile(GITHUB_MEMBER)
            if member is None:
                raise SystemExit(f"{source.name} has no {GITHUB_MEMBER}")
            raw = member.read()
    return Vendored(raw, {"version": version, "sha256": sha256(raw)}, {})


# -- Forgejo ---------------------------------------------------------------------------------------

def substitute(template: bytes, version: str) -> bytes:
    """The template with its placeholders filled; refuses a template with any other."""
    text = template.decode("utf-8")
    for placeholder, value in FORGEJO_PLACEHOLDERS.items():
        text = text.replace(placeholder, value.format(version=version.removeprefix("v")))
    if "{{" in text:
        line = text[: text.index("{{")].count("\n") + 1
        raise SystemExit(f"{FORGEJO_TEMPLATE}: an unknown template placeholder on line {line}; "
                         "add it to FORGEJO_PLACEHOLDERS with the value the API serves")
    if json.loads(text).get("swagger") != "2.0":
        raise SystemExit(f"{FORGEJO_TEMPLATE} is not a Swagger 2.0 description")
    return text.encode("utf-8")


def convert(swagger: bytes) -> bytes:
    """Swagger 2.0 -> OpenAPI 3.0 with the pinned swagger2openapi (installed on first use)."""
    try:
        binary = ensure_npm_package(CONVERTER_PREFIX, CONVERTER, CONVERTER_VERSION, CONVERTER)
    except NodeSetupError as exc:
        raise SystemExit(str(exc)) from None
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "swagger.json", Path(tmp) / "openapi.json"
        src.write_bytes(swagger)
        subprocess.run([str(binary), "--indent", "  ", "--outfile", str(out), str(src)],
                       check=True, env=node_env(), timeout=300)
        return out.read_bytes()


def forgejo(version: str, source: Path | None) -> Vendored:
    if source is not None:
        template, origin = source.read_bytes(), f"file supplied as SOURCE ({source.name})"
    else:
        url = FORGEJO_URL.format(version=version)
        with urllib.request.urlopen(url, timeout=60) as resp:
            template, origin = resp.read(), url
    converted = convert(substitute(template, version))
    if json.loads(converted).get("openapi", "")[:2] != "3.":
        raise SystemExit(f"{CONVERTER} did not produce an OpenAPI 3 document")
    pinned = {
        "version": version, "sha256": sha256(converted), "original_sha256": sha256(template),
        "source_git_blob": git_blob(template), "fetched_from": origin, "converter": f"{CONVERTER}@{CONVERTER_VERSION}",
        "placeholders": {k: v.format(version=version.removeprefix("v"))
                         for k, v in FORGEJO_PLACEHOLDERS.items()},
    }
    return Vendored(converted, pinned, {"original_file": template})


FORGES: dict[str, tuple[Path, Callable[[str, Path | None], Vendored]]] = {
    "github": (SPEC_DIR, github),
    "forgejo": (SPEC_DIR / "forgejo", forgejo),
}


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
    parser = argparse.ArgumentParser(prog="python -m generator.review.update_spec")
    parser.add_argument("version")
    parser.add_argument("--forge", choices=sorted(FORGES), default="github")
    parser.add_argument("--source", type=Path, default=None,
                        help="github: an npm tarball; forgejo: the v1_json.tmpl file (default: fetch)")
    args = parser.parse_args(argv)
    directory, fetch = FORGES[args.forge]
    pinned = read_pinned(directory)
    try:
        old: dict[str, Any] = load_pinned_spec(directory).document
    except (OSError, SpecError):  # the first vendoring (or a damaged copy): everything is new
        old = {"paths": {}}
    vendored = fetch(args.version, args.source)
    new = json.loads(vendored.document)
    # what changed for the operations each server uses, printed before anything is re-pinned
    for path in override_files(OVERRIDES_DIR):
        model, located = read_overrides(path, f"overrides/{path.name}")
        if spec_dir(model.server.spec) != directory:
            continue
        print(f"## {path.name}")
        print(drift_report(old, new, model, located, f"{pinned.package} {pinned.version}",
                           f"{pinned.package} {args.version}"))
    meta = json.loads((directory / "PINNED.json").read_text(encoding="utf-8"))
    (directory / pinned.vendored_file).write_bytes(gz(vendored.document))
    for key, data in vendored.extra_files.items():
        (directory / meta[key]).write_bytes(gz(data))
    meta.update(vendored.pinned)
    (directory / "PINNED.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    for line in changed_operations(old, new):
        print(line)
    print(f"vendored {pinned.package} {args.version} into {directory.relative_to(REPO_ROOT)}/; "
          "now run `make generate` and review the diff")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
