"""Every override file of a directory generated together, forge by forge: each file is built into
its IR (each forge's description parsed once: spec.SpecCache), what spans a forge's files is
checked (generator/pipeline/forge_server.py), each file is linted and rendered with the other files of its
forge as composability peers, and every forge with a forge file gets its one server's package.

`only` narrows what is completed and rendered to one override file (`--overrides FILE`); its
forge's other files in the same directory are still built, as the peers its checks need.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from generator.base.diagnostics import Diagnostic, DiagnosticError, Level
from generator.language.forge_file import forge_files, parse_forge_file
from generator.lint.baseline import read_baseline
from generator.packaging.requirements import current_packaging
from generator.pipeline.forge_part import Part, part_of
from generator.pipeline.forge_server import ForgeDecl, forge_checks, render_forge
from generator.pipeline.generate import (
    Prepared,
    Result,
    complete,
    display_path,
    load_inputs,
    override_files,
    prepare,
)
from generator.pipeline.report import server_summary
from generator.pipeline.result_cache import Cached, ResultCache
from generator.render.files import FileMap
from generator.spec.pinned import REPO_ROOT, SpecCache


@dataclass(slots=True)
class Run:
    results: list[Result]  # the override files completed, in file order
    forge_problems: list[Diagnostic] = field(default_factory=list)
    forge_files: FileMap = field(default_factory=dict)
    forges: list[tuple[ForgeDecl, list[Part]]] = field(default_factory=list)  # rendered ones

    @property
    def ok(self) -> bool:
        return (all(r.files is not None for r in self.results)
                and not any(d.level is Level.ERROR for d in self.forge_problems))


def load_decls(directory: Path, root: Path) -> tuple[dict[str, ForgeDecl], list[Diagnostic]]:
    decls: dict[str, ForgeDecl] = {}
    problems: list[Diagnostic] = []
    for path in forge_files(directory):
        text = path.read_text(encoding="utf-8")
        display = display_path(path, root)
        try:
            file, located = parse_forge_file(text, display)
        except DiagnosticError as exc:
            problems += exc.diagnostics
            continue
        if file.server.forge in decls:
            problems.append(Diagnostic(Level.ERROR, located.where(("server", "forge")),
                                       f"{decls[file.server.forge].display} already declares the "
                                       f"{file.server.forge} server", "one forge file per forge"))
            continue
        decls[file.server.forge] = ForgeDecl(file, located, display, text)
    return decls, problems


def _specs_identity(spec_root: Path) -> str:
    """Every description under the spec root, as a cache key reads it: each pin and the sha256 of
    its vendored bytes (a file's key changes with any of them: no YAML read to tell which)."""
    parts = []
    for pinned_file in sorted(spec_root.rglob("PINNED.json")):
        try:
            pinned = pinned_file.read_text(encoding="utf-8")
            vendored = pinned_file.parent / json.loads(pinned)["vendored_file"]
            parts.append(f"{pinned_file}\0{pinned}\0{hashlib.sha256(vendored.read_bytes()).hexdigest()}")
        except (OSError, ValueError, KeyError):
            parts.append(f"{pinned_file}\0unreadable")  # loading it reports what is wrong
    return "\0".join(parts)


def generate_all(directory: Path, *, specs: SpecCache, baseline_dir: Path | None = None,
                 only: Path | None = None, root: Path = REPO_ROOT,
                 cache: ResultCache | None = None) -> Run:
    """`cache`: reuse what an unchanged file generated last time (generator/pipeline/result_cache.py)."""
    paths = override_files(directory)
    if only is not None and only.resolve() not in {p.resolve() for p in paths}:
        paths = [*paths, only]
    cache = cache if cache is not None and cache.on else None
    baseline = read_baseline(baseline_dir) if baseline_dir else {}  # git asked once per run
    keys: dict[int, str] = {}
    if cache is not None:
        sources = {display_path(p, root): p.read_text(encoding="utf-8") for p in sorted(directory.glob("*.py"))}
        specs_identity = _specs_identity(specs.root)
        for i, path in enumerate(paths):
            keys[i] = cache.file_key(display_path(path, root), path.read_text(encoding="utf-8"),
                                     sources, specs_identity, baseline)
    prepared: dict[int, Prepared] = {}

    def prepared_at(i: int) -> Prepared:
        if i not in prepared:
            prepared[i] = prepare(load_inputs(paths[i], root=root, specs=specs, baseline=baseline))
        return prepared[i]

    parts: dict[int, Part] = {}  # by the index of its file
    for i in range(len(paths)):
        known = cache.part(keys[i]) if cache is not None else None
        if known is None:
            p = prepared_at(i)
            if p.server is not None and p.overrides is not None and p.located is not None:
                known = part_of(p.server, p.overrides, p.located)
                if cache is not None and p.ok:
                    cache.put_part(keys[i], known)
        if known is not None:
            parts[i] = known
    by_forge: dict[str, list[int]] = {}
    for i, part in sorted(parts.items()):
        by_forge.setdefault(part.forge, []).append(i)
    decls, problems = load_decls(directory, root)
    for forge, members in by_forge.items():
        problems += forge_checks(forge, [parts[i] for i in members], decls.get(forge))
    for forge, decl in decls.items():
        if forge not in by_forge:
            problems.append(Diagnostic(Level.WARNING, decl.located.where(("server", "forge")),
                                       f"no override file in {directory.name}/ is a {forge} server",
                                       f"{decl.file.server.name} is not generated"))

    def peers(i: int) -> list[Part]:
        forge = parts[i].forge if i in parts else ""
        return [parts[j] for j in by_forge.get(forge, []) if j != i]

    results = []
    for i, path in enumerate(paths):
        if only is not None and path.resolve() != only.resolve():
            continue
        result_key = cache.result_key(keys[i], peers(i)) if cache is not None else ""
        reused = cache.result(result_key) if cache is not None else None
        if reused is not None:
            results.append(Result(reused.files, reused.diagnostics, report=reused.report))
            continue
        result = complete(prepared_at(i), peers(i))
        if result.server is not None and result.files is not None:
            result.report = server_summary(result)
            if cache is not None and not any(d.level is Level.ERROR for d in result.diagnostics):
                cache.put_result(result_key, Cached(result.files, result.diagnostics,
                                                    server_summary(result, timings=False)))
        results.append(result)
    run = Run(results, sorted(problems, key=lambda d: (d.where, d.message)))
    if not run.ok or only is not None:
        return run
    packaging = current_packaging()
    for forge, decl in decls.items():
        own = [parts[i] for i in by_forge.get(forge, [])]
        if not own:
            continue
        forge_key = cache.forge_key(decl.text, own) if cache is not None else ""
        files = cache.forge(forge_key) if cache is not None else None
        if files is None:
            files = render_forge(decl, own, packaging)
            if cache is not None:
                cache.put_forge(forge_key, files)
        run.forge_files.update(files)
        run.forges.append((decl, own))
    return run
