"""No code path of the shared runtime serves one server's hooks alone.

A static scan: every runtime name a hook file beside an override file (`overrides/*.py`) imports
is looked up where it is defined, and must be used by the runtime itself (another module, or
code of its own module besides its definition) or by the generated servers' templates. What
only hooks use belongs beside them (a hook part) or becomes a declared recipe; the exceptions
below are generic hook API, each with the reason it stays.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "ghmcp_runtime"

# (module, name) -> why it stays in the runtime although only hooks use it today
HOOK_API = {
    ("ghmcp_runtime.engine.walk", "walk"):
        "forge-neutral: pages a listing whose filters the forge cannot apply, filtering rows "
        "locally within read and scan caps; any hook listing with local filters needs it",
    ("ghmcp_runtime.guards.allowlist", "scope_terms"):
        "reads a search query's scope terms with the tokenizer the allowlist confines queries "
        "with, so a hook refusing foreign scopes and the allowlist never disagree on a term",
}


def module_file(module: str) -> Path | None:
    parts = module.split(".")
    for candidate in (ROOT.joinpath(*parts).with_suffix(".py"), ROOT.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def defining_module(module: str, name: str) -> str:
    """Where `name`, imported from `module`, is defined (following re-exports, also those a
    module loads on use)."""
    path = module_file(module)
    if path is None:
        return module
    body = ast.parse(path.read_text(encoding="utf-8")).body
    # names a module loads on use are imported under `if TYPE_CHECKING:` (the package root's)
    nested = [inner for node in body if isinstance(node, ast.If) for inner in node.body]
    for node in [*body, *nested]:
        if (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ghmcp_runtime")
                and any((alias.asname or alias.name) == name for alias in node.names)):
            original = next(alias.name for alias in node.names if (alias.asname or alias.name) == name)
            return defining_module(node.module, original)
    return module


def hook_imports() -> set[tuple[str, str]]:
    """(defining module, name) of every runtime name a hook file imports."""
    found = set()
    for path in sorted((ROOT / "overrides").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ghmcp_runtime":
                found |= {(defining_module(node.module, alias.name), alias.name) for alias in node.names}
    return found


def dotted(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def used_by_runtime(module: str, name: str) -> bool:
    """`name` of `module` is used by runtime code: imported by another runtime module, or
    referenced in its own module besides its definition; or imported by a template."""
    for path in sorted(RUNTIME.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if dotted(path) == module:
                if isinstance(node, ast.Name) and node.id == name:
                    return True
            elif isinstance(node, ast.ImportFrom) and node.module == module and any(
                    a.name == name for a in node.names):
                return True
    imports = re.compile(rf"from {re.escape(module)} import [^\n]*\b{re.escape(name)}\b")
    return any(imports.search(t.read_text(encoding="utf-8")) for t in (ROOT / "templates").glob("*.jinja"))


def test_every_runtime_name_a_hook_uses_is_shared_or_declared_hook_api() -> None:
    only_hooks = {(m, n) for m, n in hook_imports() if not used_by_runtime(m, n)}
    assert only_hooks == set(HOOK_API), (
        "runtime code used only by hooks (move it beside the hook, make it a recipe, or add it to "
        f"HOOK_API with the reason it is generic): {sorted(only_hooks - set(HOOK_API))}; "
        f"allowed but now shared or unused (drop from HOOK_API): {sorted(set(HOOK_API) - only_hooks)}")


def test_the_scan_finds_a_name_only_a_hook_uses(tmp_path: Path) -> None:
    # the scan itself: a function nothing in the runtime calls is found, one it calls is not
    assert not used_by_runtime("ghmcp_runtime.engine.walk", "walk")
    assert used_by_runtime("ghmcp_runtime.engine.paging", "open_state")
    assert ("ghmcp_runtime.calls.context", "ToolContext") in hook_imports()
