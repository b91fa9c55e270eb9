"""IR → file map: Jinja2 (StrictUndefined) for code and docs, black in-process, fixed headers."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jinja2

from generator import NAME
from generator.base.diagnostics import Diagnostic, DiagnosticError, Level, Where
from generator.base.format_cache import Caches, FormatCache, default_directory
from generator.build.builder import const_name
from generator.build.ir import IRServer
from generator.build.wire import (
    compact_bytes,
    error_catalog,
    fingerprint,
    model_visible,
    runtime_annotations,
    runtime_shape,
    summary_document,
    wire_tool,
)
from generator.lint.compose import Peer, sources
from generator.packaging.registry_entry import registry_name, server_json
from generator.packaging.requirements import Packaging, server_requirements, toml_string
from generator.spec.pinned import REPO_ROOT
from ghmcp_runtime.core.declared import Completion
from ghmcp_runtime.core.forges import FORGES
from ghmcp_runtime.core.model import Operation
from ghmcp_runtime.core.token_scopes import SCOPES_META
from ghmcp_runtime.serving import capability_docs
from ghmcp_runtime.serving.environment import variables

TEMPLATES = REPO_ROOT / "templates"
# black's mode, as (target version, line length); black is imported only when the cache misses
BLACK_TARGET, BLACK_LINE_LENGTH = "PY311", 100
BLACK_MODE_KEY = f"{BLACK_TARGET} {BLACK_LINE_LENGTH}"
# black's output and compiled templates, outside the tree; the command line flushes them
CACHES = Caches(default_directory(), BLACK_MODE_KEY)
FileMap = dict[str, str]


def declared_completions(server: IRServer) -> dict[str, Completion]:
    """Every distinct declared completion by the constant that holds it: COMPLETE_<VARIABLE>,
    numbered when one variable name has several listings."""
    by_source: dict[str, tuple[str, Completion]] = {}
    for t in server.templates:
        for var, spec in t.completions:
            if isinstance(spec, Completion) and _pyobj(spec) not in by_source:
                taken = sum(1 for v, _ in by_source.values() if v == var)
                by_source[_pyobj(spec)] = (var, spec) if not taken else (f"{var}_{taken + 1}", spec)
    return {f"COMPLETE_{name.upper()}": spec for name, spec in by_source.values()}


def _py(value: Any) -> str:
    return repr(value)


def _pyobj(value: Any) -> str:
    """Python source for a runtime declaration: keyword arguments, non-default values only;
    operations by their constant in the generated operations module."""
    if isinstance(value, Operation):
        return f"operations.{const_name(value.operation_id)}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        args = []
        for f in dataclasses.fields(value):
            current = getattr(value, f.name)
            if f.default is not dataclasses.MISSING and current == f.default:
                continue
            if f.default_factory is not dataclasses.MISSING and current == f.default_factory():
                continue
            args.append(f"{f.name}={_pyobj(current)}")
        return f"{type(value).__name__}({', '.join(args)})"
    if isinstance(value, tuple):  # no magic trailing comma: black decides the layout
        return "(" + ", ".join(_pyobj(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_pyobj(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {_pyobj(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _classes(value: Any, out: set[str] | None = None) -> set[str]:
    """Names of the declaration classes a value uses (for the generated imports)."""
    out = set() if out is None else out
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and not isinstance(value, Operation):
        out.add(type(value).__name__)
        for f in dataclasses.fields(value):
            _classes(getattr(value, f.name), out)
    elif isinstance(value, list | tuple):
        for v in value:
            _classes(v, out)
    elif isinstance(value, Mapping):
        for v in value.values():
            _classes(v, out)
    return out


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _typename(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return " \\| ".join(str(k) for k in kind)
    if kind == "array":
        return f"array of {_typename(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"] if v is not None)
    return str(kind)


def _pytype(schema: Mapping[str, Any]) -> str:
    from generator.spec.schemas import python_type

    return python_type(schema)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        bytecode_cache=CACHES.templates,
    )
    env.filters.update(py=_py, pyobj=_pyobj, pydict=lambda v: repr(dict(v)), const=const_name,
                       pascal=_pascal, md=capability_docs.md, typename=_typename, pytype=_pytype,
                       hints=lambda a: capability_docs.hints(runtime_annotations(a)), toml=toml_string)
    return env


def format_python(source: str, template: str, cache: FormatCache | None = None) -> str:
    cache = CACHES.format if cache is None else cache
    formatted = cache.get(source)
    if formatted is None:
        formatted = _black(source, template)
        cache.put(source, formatted)
    return formatted


def _black(source: str, template: str) -> str:
    import black
    from black.mode import TargetVersion

    mode = black.Mode(target_versions={TargetVersion[BLACK_TARGET]},
                      line_length=BLACK_LINE_LENGTH)
    try:
        return black.format_str(source, mode=mode)
    except Exception as exc:  # black raises several unrelated types for invalid source
        numbered = "\n".join(f"{i:5d} | {line}" for i, line in enumerate(source.splitlines(), 1))
        raise DiagnosticError([Diagnostic(
            Level.ERROR, Where(f"templates/{template}"),
            f"rendered source does not format: {exc}\n{numbered}",
            "the template produced invalid Python; fix the template (not the output)",
        )]) from None


def _requirements(files: FileMap, pkg: str, packaging: Packaging, hooks_display: str | None) -> list[str]:
    """The package's requirements: what its modules import."""
    sources = {p: t for p, t in files.items() if p.startswith(f"{pkg}/") and p.endswith(".py")}
    requirements, unpinned = server_requirements(sources, pkg, packaging)
    if unpinned:
        raise DiagnosticError([Diagnostic(
            Level.ERROR, Where(hooks_display or f"templates/{pkg}"),
            f"the generated package imports {', '.join(map(repr, unpinned))}, which no distribution "
            "pinned in constraints.txt provides",
            "pin the distribution in constraints.txt (and the root pyproject.toml), or do not import it",
        )])
    return requirements


def distribution_files(env: jinja2.Environment, context: Mapping[str, Any], *, description: str,
                       forge: str, packaging: Packaging, requirements: Sequence[str]) -> FileMap:
    """What makes a server's package a distribution (pyproject.toml, its README.md, which PyPI
    shows) and what lists it in the MCP Registry (server.json). `context["server"]` is the
    server (an override file's or a forge file's) with name, title, version and package."""
    server, profile = context["server"], FORGES[forge]
    pkg = server.package
    extra = {"description": description, "packaging": packaging, "requirements": requirements}
    readme = env.get_template("README.md.jinja").render(
        **context, **extra, name=server.name, title=server.title, version=server.version,
        registry_name=registry_name(packaging, server.name), token_env=profile.token_env,
        repository=packaging.repository, environment=variables(profile))
    return {
        f"{pkg}/pyproject.toml": env.get_template("pyproject.toml.jinja").render(**context, **extra),
        f"{pkg}/README.md": readme,
        f"{pkg}/server.json": server_json(
            name=server.name, title=server.title, description=description, version=server.version,
            package=pkg, forge=profile, packaging=packaging, where=Where(context["overrides_file"])),
    }


def runtime_pyproject(packaging: Packaging) -> str:
    """`ghmcp_runtime/pyproject.toml`: the runtime as its own distribution."""
    return environment().get_template("runtime_pyproject.toml.jinja").render(
        generator=NAME, packaging=packaging)


def render(
    server: IRServer,
    *,
    header_source: str,
    hooks_display: str | None,
    packaging: Packaging,
    formatter: Callable[[str, str], str] = format_python,
    peers: Sequence[Peer] = (),
) -> tuple[FileMap, dict[str, int]]:
    env = environment()
    wire_tools = [wire_tool(t) for t in server.tools]
    tool_bytes = {t["name"]: compact_bytes(t) for t in wire_tools}
    fp = fingerprint(server, {"tools": wire_tools})
    used = [op for t in server.tools for op in t.operations]
    used += [op for tmpl in server.templates for op in tmpl.operations]
    operations = sorted({op.operation_id: op for op in used}.values(), key=lambda op: op.operation_id)
    completions = declared_completions(server)
    declarations: list[Any] = [t.declaration for t in server.tools if t.declaration is not None]
    declarations += [c for c in completions.values()]
    declarations += [t.declaration for t in server.templates if t.declaration is not None]
    declarations += [t.resolve for t in server.tools if t.declaration is None and t.batch is None and t.resolve]
    declarations += [t.batch for t in server.tools if t.batch is not None]
    calls_operations = bool(declarations)  # every declaration but the error rules names some
    declarations += list(server.error_rules)
    shapes = {s.name: runtime_shape(s) for s in server.shapes}
    context = {
        "generator": NAME,
        "overrides_file": header_source,
        "server": server,
        "forge": FORGES[server.forge].display_name,
        "tools": server.tools,
        "shapes": server.shapes,
        "runtime_shapes": shapes,
        "declared_classes": sorted(_classes(declarations)),
        "identifier_sources": sources(server, peers),
        "toolset_of": {t.name: t.toolset for s in peers for t in s.tools},
        "completions": completions,
        "runner_imports": [name for name, used in (
            ("completer", bool(completions)),
            ("declared", any(t.declaration for t in server.tools)
             or any(t.declaration for t in server.templates)),
            ("resolving", any(t.resolve and t.handler is not None for t in server.tools))) if used],
        "batches": any(t.batch is not None for t in server.tools),
        "completion_name": {_pyobj(c): name for name, c in completions.items()},
        "hook_completions": sorted({fn for t in server.templates for _, fn in t.completions
                                    if isinstance(fn, str)}),
        # what handlers.py refers to: the operations (in declarations) and the hooks module
        "handler_imports": [name for name, used in (
            ("hooks", hooks_display is not None and (
                any(t.declaration is None and t.batch is None for t in server.tools)
                or any(t.declaration is None for t in server.templates)
                or any(isinstance(fn, str) for t in server.templates for _, fn in t.completions))),
            ("operations", calls_operations)) if used],
        "tool_annotations": {t.name: runtime_annotations(t.annotations) for t in server.tools},
        "hooks": hooks_display is not None,
        "error_codes": server.error_codes,
        "operations": operations,
        "coverage": server.coverage,
        "fingerprint": fp,
        "tool_bytes": tool_bytes,
        "scopes_meta": SCOPES_META,
        "private_scope": FORGES[server.forge].scopes.private_scope,
        "total_bytes": compact_bytes({"tools": wire_tools}),
        "model_bytes": compact_bytes(model_visible(wire_tools)),
        "needs_not_required": any(f.detail == "full" for s in server.shapes for f in s.fields)
        or any(not p.required for t in server.tools for p in t.params)
        or any(not f.required for t in server.tools for f in t.output),
    }
    pkg = server.package
    files: FileMap = {}
    for template, target in (
        ("package_init.py.jinja", f"{pkg}/__init__.py"),
        ("main.py.jinja", f"{pkg}/__main__.py"),
        ("operations.py.jinja", f"{pkg}/operations.py"),
        ("types.py.jinja", f"{pkg}/types.py"),
        ("server.py.jinja", f"{pkg}/server.py"),
        ("handlers.py.jinja", f"{pkg}/handlers.py"),
    ):
        files[target] = formatter(env.get_template(template).render(**context), template)
    if hooks_display is not None:
        header = env.get_template("_header.jinja").render(**context)
        hooks_note = f"# Copied verbatim from {hooks_display}; edit that file, then run `make generate`.\n"
        files[f"{pkg}/hooks.py"] = header + hooks_note + server.hooks_source
        for part in server.hook_parts:
            note = f"# Copied verbatim from {part.file}; edit that file, then run `make generate`.\n"
            files[f"{pkg}/{part.module}.py"] = header + note + part.source
    files[f"{pkg}/py.typed"] = ""
    files[f"{pkg}/tools.json"] = json.dumps({"tools": wire_tools}, sort_keys=True, indent=2,
                                             ensure_ascii=False) + "\n"
    files[f"{pkg}/checks.json"] = json.dumps(
        {"tools": {t.name: t.input_checks for t in server.tools if t.input_checks}},
        sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    files[f"{pkg}/TOOLS.md"] = env.get_template("TOOLS.md.jinja").render(**context)
    files[f"{pkg}/summary.md"] = summary_document(server, fp)
    files[f"{pkg}/errors.json"] = error_catalog(server, fp)
    files.update(distribution_files(
        env, context, description=server.description, forge=server.forge, packaging=packaging,
        requirements=_requirements(files, pkg, packaging, hooks_display)))
    stats = {"tools_list_bytes": compact_bytes({"tools": wire_tools}),
             **{f"tool:{k}": v for k, v in tool_bytes.items()}}
    return files, stats
