"""Hooks and scripts written against the flat runtime (before the layer split) keep importing the
old module names, and get the layer's own module object."""

from __future__ import annotations

import importlib

import pytest

import ghmcp_runtime.serving.app
import ghmcp_runtime.stores.idempotency
from ghmcp_runtime.base.moved import new_name


def test_old_flat_names_are_the_layers_modules() -> None:
    assert importlib.import_module("ghmcp_runtime.app") is ghmcp_runtime.serving.app
    from ghmcp_runtime.idempotency import IdempotencyRunner, MemoryStore  # type: ignore[import-not-found]

    assert IdempotencyRunner is ghmcp_runtime.stores.idempotency.IdempotencyRunner
    assert MemoryStore is ghmcp_runtime.stores.idempotency.MemoryStore


@pytest.mark.parametrize("name", ["ghmcp_runtime.no_such_module", "ghmcp_runtime.serving",
                                  "ghmcp_runtime.app.sub", "other.app"])
def test_unknown_names_are_not_aliased(name: str) -> None:
    assert new_name(name) is None
    if name.startswith("ghmcp_runtime.") and name.count(".") == 1 and name != "ghmcp_runtime.serving":
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)
