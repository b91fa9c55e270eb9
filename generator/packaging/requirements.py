"""What the distributions require: the runtime's (`ghmcp_runtime/pyproject.toml`) and each generated
server's (`generated/<package>/pyproject.toml`).

Requirements are derived, never listed by hand: the third-party modules the code imports (outside
`if TYPE_CHECKING:`), mapped to the distributions that provide them in this environment, pinned to
the versions in `constraints.txt` (the one pinned list). Only what no import shows is declared here.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

from generator.base.format_cache import TextStore, default_directory, sources_text
from generator.spec.pinned import REPO_ROOT

CONSTRAINTS = REPO_ROOT / "constraints.txt"
RUNTIME_PACKAGE = "ghmcp_runtime"
RUNTIME_DIR = REPO_ROOT / RUNTIME_PACKAGE
RUNTIME_PYPROJECT = RUNTIME_DIR / "pyproject.toml"
RUNTIME_NAME = "ghmcp-runtime"
BUILD_BACKEND = "hatchling"

# Needed though nothing imports it: httpcore imports sniffio on every connection-pool lock, and
# without it each failed import rescans sys.path (~0.45 ms per upstream request, see bench/).
UNIMPORTED = ("sniffio",)
# Optional features: extra -> the distributions only that feature imports (inside a function, so
# the runtime imports without them). Everything else the runtime imports is required.
EXTRAS: Mapping[str, tuple[str, ...]] = {"redis": ("redis",)}

# PEP 508 project names and PEP 440 public versions (canonical form)
DIST_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
DIST_VERSION = re.compile(
    r"^(?:[1-9][0-9]*!)?(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*(?:(?:a|b|rc)(?:0|[1-9][0-9]*))?"
    r"(?:\.post(?:0|[1-9][0-9]*))?(?:\.dev(?:0|[1-9][0-9]*))?$")


class PackagingError(Exception):
    """The runtime imports something the pinned list cannot satisfy, or an extra is stale."""


@dataclass(frozen=True, slots=True)
class Packaging:
    """Everything the pyproject templates need besides the server itself."""

    runtime_package: str
    runtime_name: str
    runtime_version: str
    runtime_summary: str
    requires_python: str
    license: str
    build_requires: str  # the build backend, pinned
    runtime_requires: tuple[str, ...]
    runtime_extras: tuple[tuple[str, tuple[str, ...]], ...]
    module_requirements: Mapping[str, str]  # top-level module -> "Dist==version", every pinned dist
    author: str  # the root project's first author
    repository: str  # the root project's Repository URL (https://github.com/<owner>/<name>)

    @property
    def runtime_pin(self) -> str:
        return f"{self.runtime_name}=={self.runtime_version}"

    @property
    def registry_namespace(self) -> str:
        """The MCP Registry namespace the servers publish under: `io.github.<owner>`, which the
        registry grants to that GitHub account (and to its Actions workflows, by OIDC)."""
        return "io.github." + self.repository.removeprefix("https://github.com/").split("/")[0]


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(text: str) -> dict[str, str]:
    """`constraints.txt` -> canonical name -> `Name==version` (comments and blank lines skipped)."""
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep or not version.strip():
            raise PackagingError(f"constraints.txt: {raw!r} is not pinned as name==version")
        pins[canonical_name(name.strip())] = f"{name.strip()}=={version.strip()}"
    return pins


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_modules(source: str) -> dict[str, bool]:
    """Absolute top-level modules `source` imports at run time -> True when one import is at module
    level (not only inside a function). `if TYPE_CHECKING:` blocks import nothing at run time."""
    found: dict[str, bool] = {}

    # imports are statements: only statement lists are walked, never expressions (10x fewer nodes)
    def visit(statements: Iterable[ast.AST], in_function: bool) -> None:
        for node in statements:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.orelse, in_function)
                continue
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".", 1)[0]
                found[top] = found.get(top, False) or not in_function
            nested = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for block in _STATEMENT_BLOCKS:
                visit(getattr(node, block, ()), nested)
            for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                visit(clause.body, nested)

    visit(ast.parse(source).body, False)
    return found


_STATEMENT_BLOCKS = ("body", "orelse", "finalbody")


def third_party(modules: Iterable[str], first_party: Iterable[str]) -> list[str]:
    own = set(first_party)
    return sorted(m for m in modules if m not in sys.stdlib_module_names and m not in own)


def module_requirements(pins: Mapping[str, str]) -> dict[str, str]:
    """Every top-level module a pinned, installed distribution provides -> its pinned requirement."""
    out: dict[str, str] = {}
    for module, dists in sorted(packages_distributions().items()):
        pinned = sorted({pins[c] for c in map(canonical_name, dists) if c in pins})
        if len(pinned) == 1:
            out[module] = pinned[0]
    return out


def _runtime_imports(directory: Path) -> dict[str, bool]:
    merged: dict[str, bool] = {}
    for path in sorted(directory.rglob("*.py")):
        for module, eager in imported_modules(path.read_text(encoding="utf-8")).items():
            merged[module] = merged.get(module, False) or eager
    return merged


def _module_info(directory: Path) -> tuple[str, str]:
    """(`__version__`, first docstring line) of the runtime package, read without importing it."""
    tree = ast.parse((directory / "__init__.py").read_text(encoding="utf-8"))
    docstring = (ast.get_docstring(tree) or "").strip().splitlines()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value, docstring[0] if docstring else ""
    raise PackagingError(f"{RUNTIME_PACKAGE}/__init__.py assigns no __version__ string")


def runtime_requirements(imports: Mapping[str, bool], modules: Mapping[str, str],
                         pins: Mapping[str, str]) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """(required, extras) for the runtime distribution, from what it imports."""
    problems: list[str] = []
    used: dict[str, bool] = {}  # requirement -> imported at module level somewhere
    for module in third_party(imports, [RUNTIME_PACKAGE]):
        requirement = modules.get(module)
        if requirement is None:
            problems.append(f"{RUNTIME_PACKAGE} imports {module!r}, which no distribution installed here "
                            "and pinned in constraints.txt provides: pin it in constraints.txt and the root "
                            "pyproject.toml, then `make generate` (the venv reinstalls)")
            continue
        used[requirement] = used.get(requirement, False) or imports[module]
    extras: dict[str, tuple[str, ...]] = {}
    optional: set[str] = set()
    for extra, names in EXTRAS.items():
        wanted = []
        for name in names:
            requirement = pins.get(canonical_name(name))
            if requirement not in used:
                problems.append(f"extra {extra!r}: {RUNTIME_PACKAGE} does not import {name!r} "
                                "(remove it from generator/packaging/requirements.py EXTRAS)")
            elif used[requirement]:
                problems.append(f"extra {extra!r}: {RUNTIME_PACKAGE} imports {name!r} at module level, "
                                "so it would fail to import without the extra; import it where it is used")
            else:
                wanted.append(requirement)
                optional.add(requirement)
        extras[extra] = tuple(sorted(wanted, key=str.lower))
    for name in UNIMPORTED:
        if canonical_name(name) not in pins:
            problems.append(f"{name!r} (generator/packaging/requirements.py UNIMPORTED) is not pinned in constraints.txt")
        else:
            used.setdefault(pins[canonical_name(name)], False)
    if problems:
        raise PackagingError("\n".join(problems))
    required = tuple(sorted((r for r in used if r not in optional), key=str.lower))
    return required, extras


# Deriving the packaging parses the whole runtime and scans every installed distribution (~0.1 s,
# a sixth of an unchanged `make generate`): kept outside the tree by a digest of all it reads.
_root = default_directory()
STORE = TextStore(_root / "packaging" if _root else None, "packaging 1\n", ".json")


def derivation_inputs() -> str:
    """Everything current_packaging() reads, as one text: the runtime's sources, the pins, the
    project, and the distributions installed (their metadata directories name their versions)."""
    parts = [sys.version, sources_text(RUNTIME_DIR)]
    for path in (CONSTRAINTS, REPO_ROOT / "pyproject.toml"):
        parts.append(path.read_text(encoding="utf-8"))
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        parts += [entry, *sorted(n for n in names if n.endswith((".dist-info", ".egg-info")))]
    return "\0".join(parts)


def _from_json(text: str) -> Packaging:
    data = json.loads(text)
    return Packaging(**{**data, "runtime_requires": tuple(data["runtime_requires"]),
                        "runtime_extras": tuple((extra, tuple(reqs)) for extra, reqs in data["runtime_extras"])})


@cache
def current_packaging() -> Packaging:
    """The repository's runtime and pins, as this environment sees them (read once per process;
    kept in STORE, which the command line flushes)."""
    inputs = derivation_inputs()
    stored = STORE.get(inputs)
    if stored is not None:
        try:
            return _from_json(stored)
        except (ValueError, TypeError, KeyError):
            pass  # an entry of another layout: derive again
    packaging = _derive()
    STORE.put(inputs, json.dumps(asdict(packaging), sort_keys=True))
    return packaging


def _derive() -> Packaging:
    pins = read_pins(CONSTRAINTS.read_text(encoding="utf-8"))
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    backend = pins.get(canonical_name(BUILD_BACKEND))
    if backend is None:
        raise PackagingError(f"the build backend {BUILD_BACKEND!r} is not pinned in constraints.txt")
    modules = module_requirements(pins)
    required, extras = runtime_requirements(_runtime_imports(RUNTIME_DIR), modules, pins)
    version, summary = _module_info(RUNTIME_DIR)
    return Packaging(
        runtime_package=RUNTIME_PACKAGE,
        runtime_name=RUNTIME_NAME,
        runtime_version=version,
        runtime_summary=summary,
        requires_python=project["requires-python"],
        license=_license(project.get("license")),
        build_requires=backend,
        runtime_requires=required,
        runtime_extras=tuple(sorted(extras.items())),
        module_requirements=modules,
        author=_author(project.get("authors")),
        repository=_repository(project.get("urls")),
    )


GITHUB_REPOSITORY = re.compile(r"^https://github\.com/[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?/[A-Za-z0-9._-]+$")


def _author(value: object) -> str:
    first = value[0] if isinstance(value, list) and value else None
    name = first.get("name") if isinstance(first, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise PackagingError("pyproject.toml: project.authors names no author (the server "
                             "distributions and MCP Bundle manifests name the first)")
    return name


def _repository(urls: object) -> str:
    url = urls.get("Repository") if isinstance(urls, dict) else None
    if not isinstance(url, str) or not GITHUB_REPOSITORY.match(url):
        raise PackagingError("pyproject.toml: project.urls.Repository must be the project's GitHub "
                             "repository, https://github.com/<owner>/<name>: the MCP Registry "
                             "namespace (io.github.<owner>) is derived from it")
    return url


def _license(value: object) -> str:
    text = value.get("text") if isinstance(value, dict) else None
    if isinstance(text, str):
        return text
    if isinstance(value, str):
        return value
    raise PackagingError("pyproject.toml: project.license is neither a string nor {text = ...}")


def distribution_problems(name: str, version: str) -> list[tuple[str, str, str]]:
    """(field, message, hint) for a server name or version no distribution can carry."""
    out = []
    if not DIST_NAME.match(name):
        out.append(("name", f"server name {name!r} is not a valid distribution name",
                    "letters, digits, '.', '_' and '-', starting and ending with a letter or digit"))
    if not DIST_VERSION.match(version):
        out.append(("version", f"server version {version!r} is not a PEP 440 version",
                    "e.g. 1.2.0, 1.2.0rc1, 1.2.0.post1 or 1.2.0.dev3"))
    return out


# What a rendered source imports, by its text: parsing every generated module on every run cost
# a fifth of an unchanged `make generate`; kept like STORE, flushed by the command line.
IMPORTS = TextStore(_root / "imports" if _root else None, "imports 1\n", ".json")


def _imports_of(source: str) -> dict[str, bool]:
    stored = IMPORTS.get(source)
    if stored is not None:
        try:
            found: dict[str, bool] = json.loads(stored)
            return found
        except ValueError:
            pass
    found = imported_modules(source)
    IMPORTS.put(source, json.dumps(found, sort_keys=True))
    return found


def server_requirements(sources: Mapping[str, str], package: str, packaging: Packaging
                        ) -> tuple[list[str], list[str]]:
    """(requirements, problems) of a generated package from its rendered Python sources."""
    imports: set[str] = set()
    for text in sources.values():
        imports.update(_imports_of(text))
    requirements = {packaging.runtime_pin}
    problems = []
    for module in third_party(imports, [RUNTIME_PACKAGE, package]):
        requirement = packaging.module_requirements.get(module)
        if requirement is None:
            problems.append(module)
        else:
            requirements.add(requirement)
    return sorted(requirements, key=str.lower), problems


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    out = []
    for ch in text:
        if ch in short:
            out.append(short[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
