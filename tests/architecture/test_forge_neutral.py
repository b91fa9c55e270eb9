"""Nothing forge-specific is hard-wired in the shared runtime: no runtime module but the forge
profiles' data (`ghmcp_runtime/core/forges.py`) holds an operation id or an API path of a forge
the servers are generated for, so the GitHub and the Forgejo servers go through the same code and
a forge's operations are declared once, in its profile.

The operation ids and paths are those of the pinned descriptions the generator reads for the
override files (`server.spec`), so a new forge's description is covered without a test edit.
Docstrings may name operations as examples; code, comments aside, may not.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from generator.pipeline import override_files
from generator.spec import SPEC_DIR, SpecCache, declared_spec, iter_operations, spec_dir

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "ghmcp_runtime"
# the forge profiles: the one place a forge's operations, paths and conventions are declared
PROFILE_DATA = frozenset({RUNTIME / "core" / "forges.py"})


@cache
def vocabulary() -> tuple[frozenset[str], re.Pattern[str]]:
    """Every operation id of the pinned descriptions, and a pattern finding an API path in a
    string: a path's first segment after a `/` that no word character precedes (`/repos/…`,
    `/user`, `r"/repos/([^/]+)"`), not a media type (`application/json`) or a URL's host part."""
    specs = SpecCache(SPEC_DIR)
    directories = {spec_dir(declared_spec(path.read_text(encoding="utf-8")))
                   for path in override_files(ROOT / "overrides")}
    ids: set[str] = set()
    segments: set[str] = set()
    for directory in directories:
        for op in iter_operations(specs.load(directory).document):
            ids.add(op.operation_id)
            first = op.path.strip("/").split("/")[0]
            if first and not first.startswith("{"):
                segments.add(first)
    alternatives = "|".join(sorted(map(re.escape, segments), key=len, reverse=True))
    return frozenset(ids), re.compile(rf"(?<![\w.-])/(?:{alternatives})(?=$|[/{{?#)\]\\\s])")


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def forge_literals(path: Path) -> Iterator[tuple[int, str]]:
    """(line, literal) of each string in `path`'s code that is an operation id or holds an API path."""
    ids, api_path = vocabulary()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = docstrings(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
                and (node.value in ids or api_path.search(node.value))):
            yield node.lineno, node.value


def test_the_vocabulary_comes_from_every_forge_the_servers_use() -> None:
    ids, api_path = vocabulary()
    assert {"repos/get", "users/get-authenticated", "repoGet", "userGetCurrent",
            "repoGetRepoPermissions"} <= ids
    for text in ("/repos/{owner}/{repo}", "/user", r"/repos/([^/]+)/([^/?#]+)", "GET /orgs/{org}"):
        assert api_path.search(text), text
    for text in ("application/json", "text/event-stream", "/mcp", "https://api.example/v3", "a/b"):
        assert not api_path.search(text), text


def test_the_profiles_hold_the_forges_operations() -> None:
    """The detector finds what the profiles declare (it would find it anywhere else too)."""
    found = {literal for path in PROFILE_DATA for _, literal in forge_literals(path)}
    assert {"repos/get-collaborator-permission-level", "repoGetRepoPermissions", "/user"} <= found


def test_no_runtime_module_names_a_forge_operation_or_api_path() -> None:
    problems = [f"{path.relative_to(ROOT)}:{line}: {literal!r}"
                for path in sorted(RUNTIME.rglob("*.py")) if path not in PROFILE_DATA
                for line, literal in forge_literals(path)]
    assert not problems, ("forge operations and API paths belong in the forge profile "
                          "(ghmcp_runtime/core/forges.py):\n  " + "\n  ".join(problems))
