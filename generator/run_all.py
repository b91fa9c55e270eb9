"""Every override file of a directory generated together, forge by forge: each file is built into
its IR (each forge's description parsed once: spec.SpecCache), what spans a forge's files is
checked (generator/forge_server.py), each file is linted and rendered with the other files of its
forge as composability peers, and every forge with a forge file gets its one server's package.

`only` narrows what is completed and rendered to one override file (`--overrides FILE`); its
forge's other files in the same directory are still built, as the peers its checks need.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from generator.diagnostics import Diagnostic, DiagnosticError, Level
from generator.forge_file import forge_files, parse_forge_file
from generator.forge_server import ForgeDecl, forge_checks, peers_of, render_forge
from generator.packaging import current_packaging
from generator.pipeline import (
    Prepared,
    Result,
    complete,
    display_path,
    load_inputs,
    override_files,
    prepare,
)
from generator.render import FileMap
from generator.spec import REPO_ROOT, SpecCache


@dataclass(slots=True)
class Run:
    results: list[Result]  # the override files completed, in file order
    forge_problems: list[Diagnostic] = field(default_factory=list)
    forge_files: FileMap = field(default_factory=dict)
    forges: list[tuple[ForgeDecl, list[Result]]] = field(default_factory=list)  # rendered ones

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


def generate_all(directory: Path, *, specs: SpecCache, baseline_dir: Path | None = None,
                 only: Path | None = None, root: Path = REPO_ROOT) -> Run:
    paths = override_files(directory)
    if only is not None and only.resolve() not in {p.resolve() for p in paths}:
        paths = [*paths, only]
    prepared = [prepare(load_inputs(path, root=root, specs=specs, baseline_dir=baseline_dir))
                for path in paths]
    decls, problems = load_decls(directory, root)
    by_forge: dict[str, list[Prepared]] = {}
    for p in prepared:
        if p.forge is not None:
            by_forge.setdefault(p.forge, []).append(p)
    for forge, members in by_forge.items():
        problems += forge_checks(forge, members, decls.get(forge))
    for forge, decl in decls.items():
        if forge not in by_forge:
            problems.append(Diagnostic(Level.WARNING, decl.located.where(("server", "forge")),
                                       f"no override file in {directory.name}/ is a {forge} server",
                                       f"{decl.file.server.name} is not generated"))
    chosen = [p for p, path in zip(prepared, paths, strict=True)
              if only is None or path.resolve() == only.resolve()]
    results = [complete(p, peers_of(p, by_forge.get(p.forge or "", []))) for p in chosen]
    run = Run(results, sorted(problems, key=lambda d: (d.where, d.message)))
    if not run.ok or only is not None:
        return run
    packaging = current_packaging()
    for forge, decl in decls.items():
        done = [r for r in results if r.server is not None and r.server.forge == forge]
        if done:
            run.forge_files.update(render_forge(decl, done, packaging))
            run.forges.append((decl, done))
    return run
