"""What a server needs only once it is used, loaded on first use (issue 24, cold start): modules
on first attribute access (importlib.util.LazyLoader), a callable on its first call, a sequence on
its first read. A server answers `initialize` and `tools/list` before any of them loads."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar, overload

T = TypeVar("T")


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


def attribute(module: str, name: str) -> Any:
    """`module.name`, importing `module` if it is not yet."""
    return getattr(importlib.import_module(module), name)


class LazyCallable:
    """The async callable `module.table[key]`, imported on the first call (then called directly)."""

    __slots__ = ("_target", "key", "module", "table")

    def __init__(self, module: str, table: str, key: str) -> None:
        self.module = module
        self.table = table
        self.key = key
        self._target: Callable[..., Any] | None = None

    @property
    def target(self) -> Callable[..., Any]:
        if self._target is None:
            found: Callable[..., Any] = attribute(self.module, self.table)[self.key]
            self._target = found
        return self._target

    @property
    def __name__(self) -> str:
        return str(getattr(self.target, "__name__", self.key))

    async def __call__(self, *args: Any) -> Any:
        return await self.target(*args)

    def __repr__(self) -> str:
        return f"<{self.module}.{self.table}[{self.key!r}], loaded on first call>"


class LazySequence(Sequence[T]):
    """The sequence `module.name`, imported on the first read."""

    __slots__ = ("_items", "module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        self._items: tuple[T, ...] | None = None

    @property
    def items(self) -> tuple[T, ...]:
        if self._items is None:
            self._items = tuple(attribute(self.module, self.name))
        return self._items

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __eq__(self, other: object) -> bool:
        return self.items == (other.items if isinstance(other, LazySequence) else other)

    def __hash__(self) -> int:
        return hash(self.items)

    def __repr__(self) -> str:
        return f"<{self.module}.{self.name}, loaded on first read>"
