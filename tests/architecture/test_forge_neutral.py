"""Nothing forge-specific is hard-wired in the shared runtime: no runtime module but the forge
profiles' data (`ghmcp_runtime/core/forges.py`) holds an operation id or an API path of a forge
the servers are generated for, or a header, variable, URL or token prefix a profile declares, so
the GitHub and the Forgejo servers go through the same code and a forge's conventions are
declared once, in its profile.

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

from generator.pipeline.generate import override_files
from generator.spec.pinned import SPEC_DIR, SpecCache, declared_spec, iter_operations, spec_dir
from ghmcp_runtime.core.forges import FORGES

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


@cache
def profile_words() -> tuple[frozenset[str], frozenset[str]]:
    """What the profiles declare that names one forge: header names (compared without case),
    and environment variables, API URLs and token prefixes (compared exactly). Generic values a
    profile also holds (`application/json`, `page`, `items`) are not among them."""
    headers: set[str] = set()
    exact: set[str] = set()
    for forge in FORGES.values():
        headers.update(h.lower() for h in (forge.version_header, forge.request_id_header,
                                           forge.total_count_header) if h)
        if forge.rate_limit is not None:
            limits = forge.rate_limit
            headers.update(h.lower() for h in (limits.remaining, limits.limit, limits.reset))
        exact.update(v for v in (forge.token_env, forge.api_url_env, forge.default_api_url) if v)
        exact.update(forge.token_prefixes)
    return frozenset(headers), frozenset(exact)


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def forge_literals(path: Path) -> Iterator[tuple[int, str]]:
    """(line, literal) of each string in `path`'s code that is an operation id, holds an API
    path, or holds a word only a forge profile may declare (`profile_words`)."""
    ids, api_path = vocabulary()
    headers, exact = profile_words()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = docstrings(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in skipped:
            continue
        text = node.value
        if (text in ids or api_path.search(text) or any(h in text.lower() for h in headers)
                or any(word in text for word in exact)):
            yield node.lineno, text


def test_the_vocabulary_comes_from_every_forge_the_servers_use() -> None:
    ids, api_path = vocabulary()
    assert {"repos/get", "users/get-authenticated", "repoGet", "userGetCurrent",
            "repoGetRepoPermissions"} <= ids
    for text in ("/repos/{owner}/{repo}", "/user", r"/repos/([^/]+)/([^/?#]+)", "GET /orgs/{org}"):
        assert api_path.search(text), text
    for text in ("application/json", "text/event-stream", "/mcp", "https://api.example/v3", "a/b"):
        assert not api_path.search(text), text


def test_the_profiles_hold_the_forges_operations_and_conventions() -> None:
    """The detector finds what the profiles declare (it would find it anywhere else too)."""
    found = {literal for path in PROFILE_DATA for _, literal in forge_literals(path)}
    assert {"repos/get-collaborator-permission-level", "repoGetRepoPermissions", "/user",
            "X-GitHub-Api-Version", "x-ratelimit-remaining", "x-total-count", "GITHUB_TOKEN",
            "FORGEJO_API_URL", "https://api.github.com", "github_pat_"} <= found


def test_no_runtime_module_names_a_forge_operation_path_or_convention() -> None:
    problems = [f"{path.relative_to(ROOT)}:{line}: {literal!r}"
                for path in sorted(RUNTIME.rglob("*.py")) if path not in PROFILE_DATA
                for line, literal in forge_literals(path)]
    assert not problems, ("forge operations, API paths and conventions belong in the forge profile "
                          "(ghmcp_runtime/core/forges.py):\n  " + "\n  ".join(problems))
