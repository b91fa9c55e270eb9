"""The runtime's modules before the layer split (`ghmcp_runtime.app`, `ghmcp_runtime.idempotency`,
…) stay importable under those names: hooks and scripts written against the flat layout keep
working. Each old name is the very module object of its layer (`ghmcp_runtime.serving.app`), found
only when something asks for it, so nothing is loaded twice and a server pays nothing at start."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

PACKAGE = "ghmcp_runtime"
LAYERS = ("base", "cleaning", "core", "guards", "stores", "calls", "engine", "serving")


def new_name(old: str) -> str | None:
    """`ghmcp_runtime.<layer>.<module>` for a flat `ghmcp_runtime.<module>`, or None."""
    prefix, _, module = old.partition(".")
    if prefix != PACKAGE or not module or "." in module or module in LAYERS:
        return None
    for layer in LAYERS:
        if importlib.util.find_spec(f"{PACKAGE}.{layer}.{module}") is not None:
            return f"{PACKAGE}.{layer}.{module}"
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Already executed under its layer's name."""


class MovedModules(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())
