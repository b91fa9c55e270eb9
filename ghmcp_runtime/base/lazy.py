"""Modules loaded on first attribute access (importlib.util.LazyLoader): what a server needs only
once it makes an upstream request stays out of its start-up (issue 24, cold start)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """`name` as imported, or (not imported yet) a module that executes on first attribute use."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:  # as an import would: `package.child` names it
        setattr(sys.modules[parent], child, module)
    return module
