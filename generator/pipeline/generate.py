"""`generate(inputs) -> Result`: pure (no writes, no subprocesses, no cwd); timed by stage."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path, PurePosixPath
from typing import Any

from generator import NAME, __version__
from generator.base.diagnostics import Diagnostic, DiagnosticError, Level, Where
from generator.base.yamlsrc import Located
from generator.build.builder import Builder
from generator.build.field_notes import explain_fields
from generator.build.ir import HookPart, IRServer
from generator.language.hookscan import relative_imports, scan_hooks
from generator.language.overrides import OverrideFile, parse_overrides
from generator.lint.baseline import read_baseline
from generator.lint.breaking import check_breaking, publish_renames
from generator.lint.compose import Peer
from generator.lint.rules import lint
from generator.packaging.requirements import Packaging, current_packaging, distribution_problems
from generator.render.files import FileMap, format_python, render
from generator.render.review_facts import review_facts
from generator.spec.patches import SpecPatch, apply_patches
from generator.spec.pinned import REPO_ROOT, SPEC_DIR, LoadedSpec, SpecCache, declared_spec


@dataclass(frozen=True, slots=True)
class Inputs:
    spec: LoadedSpec
    overrides_display: str  # repository-relative path, as printed and written in headers
    overrides_text: str
    sources: Mapping[str, str]  # other files beside the override file, by repository-relative path
    # committed output (`<package>/tools.json`, `MANIFEST.json`), for the breaking-change check
    # (generator/lint/baseline.py)
    baseline: Mapping[str, str] = field(default_factory=dict)
    load_seconds: float = 0.0  # reading and verifying the inputs, reported as the "load" stage
    # the runtime distribution and the pinned requirements (the repository's, whatever the root)
    packaging: Packaging = field(default_factory=current_packaging)


@dataclass(slots=True)
class Result:
    files: FileMap | None
    diagnostics: list[Diagnostic]
    server: IRServer | None = None
    stats: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # declared breaking changes and renames
    report: str = ""  # what `make generate` prints about it (generator/pipeline/report.py)

    @property
    def ok(self) -> bool:
        return self.files is not None

    @property
    def package(self) -> str | None:
        if self.server is not None:
            return self.server.package
        return next(iter(self.files)).split("/", 1)[0] if self.files else None


def load_inputs(overrides: Path, root: Path = REPO_ROOT, spec_dir: Path | None = None,
                baseline_dir: Path | None = None, spec: LoadedSpec | None = None,
                specs: SpecCache | None = None, baseline: Mapping[str, str] | None = None) -> Inputs:
    """`spec_dir` is the spec root (default spec/); the file's `server.spec` picks a description
    under it. An explicit `spec` is used as it is, an explicit `baseline` (read once for every
    file of a run) instead of reading `baseline_dir`'s."""
    t0 = time.perf_counter()
    text = overrides.read_text(encoding="utf-8")
    if spec is None:
        specs = specs or SpecCache(spec_dir or SPEC_DIR)
        spec = specs.load(specs.root / (declared_spec(text) or ""))
    display = display_path(overrides, root)
    sources = {display_path(p, root): p.read_text(encoding="utf-8")
               for p in sorted(overrides.parent.glob("*.py"))}
    if baseline is None:
        baseline = read_baseline(baseline_dir) if baseline_dir else {}
    return Inputs(spec, display, text, sources, baseline, time.perf_counter() - t0)


def _missing_modules(server: IRServer, hooks_display: str | None, hooks_source: str,
                     files: FileMap) -> list[Diagnostic]:
    """A module the hooks (or a part) import from the package that the package does not hold."""
    if hooks_display is None:
        return []
    held = {PurePosixPath(rel).stem for rel in files
            if rel.startswith(f"{server.package}/") and rel.endswith(".py")}
    hooks = PurePosixPath(hooks_display)
    return [Diagnostic(Level.ERROR, Where(file, line, col),
                       f"the hooks import .{module}, which the generated package does not hold",
                       f"import a generated module (operations, types), or add {hooks.parent}/"
                       f"{hooks.stem}_{module.removeprefix('hooks_')}.py (copied as {module}.py)")
            for file, source in [(hooks_display, hooks_source),
                                 *((p.file, p.source) for p in server.hook_parts)]
            for line, col, module in relative_imports(source) if module not in held]


def hook_parts(hooks_display: str | None, sources: Mapping[str, str]) -> tuple[HookPart, ...]:
    """The modules beside the hooks file named `<its stem>_<part>.py`: helpers of that server's
    hooks only, copied into its package as `hooks_<part>.py` (the hooks import `.hooks_<part>`)."""
    if hooks_display is None:
        return ()
    hooks = PurePosixPath(hooks_display)
    name = re.compile(re.escape(hooks.stem) + r"_([a-z][a-z0-9_]*)\.py")
    found = []
    for display, source in sorted(sources.items()):
        path = PurePosixPath(display)
        match = name.fullmatch(path.name)
        if path.parent == hooks.parent and match:
            found.append(HookPart(module=f"hooks_{match.group(1)}", file=display, source=source))
    return tuple(found)


def override_files(directory: Path) -> list[Path]:
    """Every server's override file: `*.yaml` in the overrides directory, in name order."""
    return sorted(directory.glob("*.yaml"))


def display_path(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class Prepared:
    """One override file built into its IR (or refused): what the forge-wide checks read before
    `complete` lints and renders it."""

    inputs: Inputs
    server: IRServer | None
    problems: list[Diagnostic]
    overrides: OverrideFile | None = None
    located: Located | None = None
    document: dict[str, Any] = field(default_factory=dict)
    hooks_display: str | None = None
    hooks_source: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.server is not None and not any(p.level is Level.ERROR for p in self.problems)

    @property
    def forge(self) -> str | None:
        return self.server.forge if self.server is not None else None


class _Laps:
    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self.clock = time.perf_counter()

    def __call__(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + now - self.clock
        self.clock = now


def generate(inputs: Inputs, peers: Sequence[Peer] = ()) -> Result:
    """One override file's package. `peers`: the other override files of its forge, built, for
    the checks that span the forge (composability: generator/pipeline/forge_server.py runs them all)."""
    return complete(prepare(inputs), peers)


def prepare(inputs: Inputs) -> Prepared:
    """Parse, patch the spec and build the IR (no lint, no render)."""
    timings: dict[str, float] = {}
    if inputs.load_seconds:
        timings["load"] = inputs.load_seconds
    lap = _Laps(timings)
    try:
        overrides, located = parse_overrides(inputs.overrides_text, inputs.overrides_display)
    except DiagnosticError as exc:
        return Prepared(inputs, None, exc.diagnostics, timings=timings)
    document = dict(inputs.spec.document)  # patches copy what they touch
    lap("load")
    patch_problems = apply_patches(
        document, [(p, located.where(("spec_patches", i))) for i, p in enumerate(overrides.spec_patches)]
    )
    base = str(PurePosixPath(inputs.overrides_display).parent)
    problems = list(patch_problems)
    problems.extend(Diagnostic(Level.ERROR, located.where(("server", key)), message, hint)
                    for key, message, hint in distribution_problems(overrides.server.name,
                                                                    overrides.server.version))
    hooks_display: str | None = None
    hooks_source = ""
    if overrides.server.hooks is not None:
        hooks_display = str(PurePosixPath(base) / overrides.server.hooks)
        found = inputs.sources.get(hooks_display)
        if found is None:
            problems.append(Diagnostic(Level.ERROR, located.where(("server", "hooks")),
                                       f"hook module {hooks_display} does not exist",
                                       "server.hooks is relative to the override file"))
        hooks_source = found or ""
    facts = scan_hooks(hooks_source)
    parts = hook_parts(hooks_display, inputs.sources)
    for where, error in [(hooks_display, facts.syntax_error),
                         *((part.file, scan_hooks(part.source).syntax_error) for part in parts)]:
        if error:
            line, col, msg = error
            problems.append(Diagnostic(Level.ERROR, Where(where or inputs.overrides_display, line, col),
                                       f"hook module does not parse: {msg}", "fix the Python syntax"))
    builder = Builder(overrides, located, document, facts, hooks_display, hooks_source)
    server = builder.build()
    if server is not None and parts:
        server = dataclasses.replace(server, hook_parts=parts)
    problems.extend(builder.problems)
    lap("build")
    return Prepared(inputs, server, problems, overrides, located, document, hooks_display,
                    hooks_source, timings)


def complete(prepared: Prepared, peers: Sequence[Peer] = ()) -> Result:
    """Lint (across the forge with `peers`), check for breaking changes, render."""
    inputs, server, timings = prepared.inputs, prepared.server, dict(prepared.timings)
    problems = list(prepared.problems)
    if server is None or prepared.overrides is None or prepared.located is None:
        return Result(None, _sorted(problems), server, timings=timings)
    lap = _Laps(timings)
    overrides, located, hooks_display = prepared.overrides, prepared.located, prepared.hooks_display
    problems.extend(lint(server, located, prepared.document, peers))
    breaking, notes = check_breaking(server, overrides, located, inputs.baseline)
    problems.extend(breaking)
    lap("lint")
    if any(p.level is Level.ERROR for p in problems):
        return Result(None, _sorted(problems), server, timings=timings)
    server = explain_fields(publish_renames(server, overrides))
    try:
        files, stats = _render_timed(server, inputs.overrides_display, hooks_display,
                                     inputs.packaging, timings, peers)
    except DiagnosticError as exc:
        return Result(None, _sorted(problems + exc.diagnostics), server, timings=timings)
    missing = _missing_modules(server, hooks_display, prepared.hooks_source, files)
    if missing:
        return Result(None, _sorted(problems + missing), server, timings=timings)
    lap.clock = time.perf_counter()
    files[f"{server.package}/MANIFEST.json"] = manifest(inputs, server, hooks_display,
                                                        prepared.hooks_source, files, overrides.spec_patches)
    lap("render")
    return Result(files, _sorted(problems), server, stats, timings, notes)


def _render_timed(server: IRServer, display: str, hooks_display: str | None, packaging: Packaging,
                  timings: dict[str, float], peers: Sequence[Peer] = ()) -> tuple[FileMap, dict[str, int]]:
    spent = 0.0

    def timed(source: str, template: str) -> str:
        nonlocal spent
        t0 = time.perf_counter()
        try:
            return format_python(source, template)
        finally:
            spent += time.perf_counter() - t0

    t0 = time.perf_counter()
    files, stats = render(server, header_source=display, hooks_display=hooks_display,
                          packaging=packaging, formatter=timed, peers=peers)
    timings["format"] = spent
    timings["render"] = time.perf_counter() - t0 - spent
    return files, stats


def _sorted(problems: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(problems, key=lambda d: (d.where, d.level.value, d.message))


def manifest(inputs: Inputs, server: IRServer, hooks_display: str | None, hooks_source: str,
             files: FileMap, patches: Sequence[SpecPatch] = ()) -> str:
    from generator.build.wire import fingerprint, wire_tool

    data: dict[str, Any] = {
        "black": package_version("black"),
        "budgets": {"description_bytes": server.description_budget_bytes,
                    "tools_list_bytes": server.tools_budget_bytes},  # for `generator review`
        "error_codes": {t.name: list(t.error_codes) for t in server.tools},  # breaking-change baseline
        "fingerprint": fingerprint(server, {"tools": [wire_tool(t) for t in server.tools]}),
        "generator": {"name": NAME, "version": __version__},
        **({"hooks": {"file": hooks_display, "sha256": sha256_text(hooks_source)}} if hooks_display else {}),
        "overrides": {"file": inputs.overrides_display, "sha256": sha256_text(inputs.overrides_text)},
        "review": review_facts(server, patches),  # what `generator review` shows beyond tools.json
        "spec": {"package": inputs.spec.pinned.package, "version": inputs.spec.pinned.version,
                 "sha256": inputs.spec.pinned.sha256},
        "files": {path.split("/", 1)[1]: sha256_text(text) for path, text in sorted(files.items())},
        "tools": len(server.tools),
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
