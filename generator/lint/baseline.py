"""The committed output every breaking-change comparison starts from (`generate`, `check`, `review`).

Inside a git work tree the baseline is what is committed under the output directory at the merge
base of HEAD and the base ref: `$GENERATOR_BASE` when set (the pull-request workflow sets it to the
base branch), otherwise HEAD. A working-tree `tools.json` is never the baseline there, so a
breaking change stays refused until it is declared or committed, and a server never committed has
none. Outside git (a source archive) the files in the output directory are the baseline.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path, PurePosixPath

BASE_ENV = "GENERATOR_BASE"
ARTIFACTS = ("tools.json", "errors.json", "MANIFEST.json")


class BaselineError(Exception):
    pass


def base_ref() -> str:
    return os.environ.get(BASE_ENV) or "HEAD"


def git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except OSError as exc:
        raise BaselineError(f"git is not available: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise BaselineError(f"`git {' '.join(args)}` failed: {message}")
    return done.stdout.decode("utf-8")


def work_tree(path: Path) -> Path | None:
    """The top of the git work tree holding `path`, or None outside git (or without git)."""
    probe = path if path.is_dir() else path.parent
    while not probe.is_dir():
        probe = probe.parent
    try:
        return Path(git(probe, "rev-parse", "--show-toplevel").strip()).resolve()
    except BaselineError:
        return None


def base_commit(root: Path, ref: str) -> str | None:
    """The merge base of HEAD and `ref` (`ref` itself when it is HEAD or one of its ancestors);
    None before the first commit."""
    try:
        head = git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except BaselineError:
        return None
    if ref == "HEAD":
        return head
    try:
        commit = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").strip()
    except BaselineError:
        raise BaselineError(f"{ref!r} names no commit in {root} (in a shallow clone, fetch the base "
                            "first)") from None
    try:
        return git(root, "merge-base", commit, "HEAD").strip()
    except BaselineError:
        raise BaselineError(f"{ref!r} and HEAD have no merge base in {root} (in a shallow clone, "
                            "fetch deeper)") from None


def _wanted(path: str) -> bool:
    """`<package>/{tools,errors,MANIFEST}.json`, or the single-server layout's `MANIFEST.json`."""
    parts = PurePosixPath(path).parts
    return parts == ("MANIFEST.json",) or (len(parts) == 2 and parts[1] in ARTIFACTS)


def committed(root: Path, out: str, ref: str) -> dict[str, str]:
    """The review artifacts committed under `out` (relative to the work tree `root`) at the merge
    base of HEAD and `ref`, by path relative to `out`."""
    commit = base_commit(root, ref)
    return {} if commit is None else dict(_at_commit(root, out, commit))


@functools.cache
def _at_commit(root: Path, out: str, commit: str) -> tuple[tuple[str, str], ...]:
    """A commit's files never change: one process reads them once, all in one `git cat-file`."""
    listing = git(root, "ls-tree", "-r", "-z", commit, "--", out).split("\0")
    wanted = []
    for entry in filter(None, listing):
        meta, _, name = entry.partition("\t")
        if name.startswith(f"{out}/") and _wanted(name.removeprefix(f"{out}/")):
            wanted.append((name.removeprefix(f"{out}/"), meta.split()[2]))
    if not wanted:
        return ()
    try:
        done = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"], capture_output=True,
                              input="".join(f"{blob}\n" for _, blob in wanted).encode("ascii"), check=False)
    except OSError as exc:
        raise BaselineError(f"git is not available: {exc}") from None
    if done.returncode != 0:
        raise BaselineError(f"`git cat-file --batch` failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    out_files, data, at = [], done.stdout, 0
    for name, _ in wanted:  # each answer: "<sha> blob <size>\n<content>\n", in the order asked
        header_end = data.index(b"\n", at)
        size = int(data[at:header_end].split()[2])
        out_files.append((name, data[header_end + 1:header_end + 1 + size].decode("utf-8")))
        at = header_end + 1 + size + 1
    return tuple(out_files)


def on_disk(out: Path) -> dict[str, str]:
    paths = [out / "MANIFEST.json", *(p for name in ARTIFACTS for p in out.glob(f"*/{name}"))]
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in sorted(paths)
            if p.is_file()}


def read_baseline(out: Path, ref: str | None = None) -> dict[str, str]:
    """The baseline of the output directory `out` (see the module's docstring)."""
    out = out.resolve()
    root = work_tree(out)
    if root is None:
        return on_disk(out)
    return committed(root, out.relative_to(root).as_posix() or ".", ref or base_ref())
