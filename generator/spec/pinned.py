"""Load the pinned OpenAPI description, verify it, index operations, apply asserted patches."""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO_ROOT / "spec"

JSON = Any


class SpecError(Exception):
    """The vendored description is missing, corrupt or not the pinned one."""


@dataclass(frozen=True, slots=True)
class Pinned:
    package: str
    version: str
    sha256: str
    vendored_file: str


@dataclass(frozen=True, slots=True)
class LoadedSpec:
    pinned: Pinned
    document: dict[str, JSON]


@dataclass(frozen=True, slots=True)
class SpecOperation:
    operation_id: str
    method: str
    path: str
    node: Mapping[str, JSON]
    path_item: Mapping[str, JSON]

    @property
    def subcategory(self) -> str:
        """GitHub's `x-github.subcategory` (empty in other descriptions)."""
        github = self.node.get("x-github")
        return str(github.get("subcategory", "")) if isinstance(github, dict) else ""

    @property
    def category(self) -> str:
        """GitHub's `x-github.category`; in other descriptions the operation's first tag."""
        github = self.node.get("x-github")
        if isinstance(github, dict):
            return str(github.get("category", ""))
        tags = self.node.get("tags")
        return str(tags[0]) if isinstance(tags, list) and tags else ""

    @property
    def pointer(self) -> str:
        return f"/paths/{escape_pointer(self.path)}/{self.method}"


def read_pinned(spec_dir: Path = SPEC_DIR) -> Pinned:
    raw = json.loads((spec_dir / "PINNED.json").read_text(encoding="utf-8"))
    return Pinned(raw["package"], raw["version"], raw["sha256"], raw["vendored_file"])


def read_document_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def load_pinned_spec(spec_dir: Path = SPEC_DIR) -> LoadedSpec:
    """Read the vendored description and refuse it unless its sha256 is the pinned one. An
    unchanged one is read from its parsed form, stored after the last full check
    (generator/spec/parsed_specs.py)."""
    from generator.spec import parsed_specs

    pinned = read_pinned(spec_dir)
    vendored = (spec_dir / pinned.vendored_file).read_bytes()
    known = parsed_specs.read(vendored, pinned.sha256)
    if known is not None:
        return LoadedSpec(pinned, known)
    raw = gzip.decompress(vendored) if pinned.vendored_file.endswith(".gz") else vendored
    digest = hashlib.sha256(raw).hexdigest()
    if digest != pinned.sha256:
        raise SpecError(
            f"{spec_dir / pinned.vendored_file}: sha256 {digest} does not match the pinned "
            f"{pinned.sha256} in PINNED.json (re-vendor with `make update-spec`)"
        )
    document = json.loads(raw)
    parsed_specs.store(vendored, pinned.sha256, document)
    return LoadedSpec(pinned, document)


SPEC_NAME = re.compile(r"[a-z][a-z0-9_-]*")  # an override file's `server.spec`
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def spec_dir(name: str | None, root: Path = SPEC_DIR) -> Path:
    """Where a server's description lives: `root/<server.spec>`, or `root` itself (GitHub's)."""
    return root / name if name else root


def declared_spec(override_text: str) -> str | None:
    """`server.spec` of an override file, read before the real parse (which reports whatever is
    wrong with the file; one that does not parse here names no spec)."""
    try:
        data = yaml.load(override_text, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        return None
    server = data.get("server") if isinstance(data, dict) else None
    name = server.get("spec") if isinstance(server, dict) else None
    return name if isinstance(name, str) and SPEC_NAME.fullmatch(name) else None


class SpecCache:
    """The vendored descriptions under one spec root, each loaded (and verified) once per run."""

    def __init__(self, root: Path = SPEC_DIR) -> None:
        self.root = root
        self._loaded: dict[Path, LoadedSpec] = {}

    def load(self, directory: Path) -> LoadedSpec:
        if directory not in self._loaded:
            self._loaded[directory] = load_pinned_spec(directory)
        return self._loaded[directory]


def escape_pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape_pointer(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def split_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer must start with '/': {pointer!r}")
    return [unescape_pointer(t) for t in pointer[1:].split("/")]


def iter_operations(document: Mapping[str, JSON]) -> Iterator[SpecOperation]:
    for path, item in document.get("paths", {}).items():
        for method in HTTP_METHODS:
            node = item.get(method)
            if isinstance(node, dict) and "operationId" in node:
                yield SpecOperation(node["operationId"], method, path, node, item)


def index_operations(document: Mapping[str, JSON]) -> dict[str, SpecOperation]:
    """operationId -> operation. Indexed once per `paths` mapping: spec patches copy whatever
    they change (generator/spec/patches.py), so a patched description has `paths` of its own and an
    unpatched one shares its index; a copy is returned, as callers may add to it."""
    paths = document.get("paths")
    key = id(paths)
    known = _INDEXES.get(key)
    if known is None or known[0] is not paths:
        known = (paths, {op.operation_id: op for op in iter_operations(document)})
        if len(_INDEXES) >= _MAX_INDEXES:
            _INDEXES.pop(next(iter(_INDEXES)))
        _INDEXES[key] = known
    return dict(known[1])


# id(paths) -> (paths, its index); the mapping itself is held so its id cannot be reused
_INDEXES: dict[int, tuple[Any, dict[str, SpecOperation]]] = {}
_MAX_INDEXES = 32


def resolve_ref(document: Mapping[str, JSON], node: JSON) -> JSON:
    """Follow `$ref`s (local only) until a non-reference node is reached."""
    seen: set[str] = set()
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
            raise SpecError(f"unsupported or cyclic $ref {ref!r}")
        seen.add(ref)
        node = document
        for token in split_pointer(ref[1:]):
            node = node[token]
    return node


def deep_copy(document: Mapping[str, JSON]) -> dict[str, JSON]:
    return copy.deepcopy(dict(document))


def success_body(document: JSON, op: SpecOperation) -> JSON | None:
    """The JSON body schema of an operation's first 2xx response that has one."""
    for status, response in sorted(op.node.get("responses", {}).items()):
        if not (status.isdigit() and 200 <= int(status) < 300):
            continue
        content = resolve_ref(document, response).get("content", {})
        schema = content.get("application/json", {}).get("schema")
        if schema is not None:
            return resolve_ref(document, schema)
    return None


def answer_contract(document: JSON, op: SpecOperation) -> tuple[str | None, tuple[str, ...]]:
    """What every success body of `op` is: its JSON type (object or array; None when the
    description does not pin one) and, for an object, the keys it requires (through `allOf`)."""
    node = success_body(document, op)
    if node is None or node.get("nullable") or node.get("oneOf") or node.get("anyOf"):
        return None, ()
    parts = [resolve_ref(document, p) for p in node.get("allOf", [])] or [node]
    kinds = {p.get("type") for p in parts} - {None}
    if len(kinds) != 1 or any(p.get("nullable") for p in parts):
        return None, ()
    kind = kinds.pop()
    if kind not in ("object", "array"):
        return None, ()
    required = sorted({key for p in parts for key in p.get("required", [])}) if kind == "object" else []
    return kind, tuple(required)


def success_schema(document: JSON, op: SpecOperation) -> JSON | None:
    """The JSON body schema of an operation's first 2xx response; list items for an array."""
    node = success_body(document, op)
    if node is None:
        return None
    return resolve_ref(document, node["items"]) if node.get("type") == "array" else node


def listing_row(document: JSON, op: SpecOperation) -> JSON | None:
    """The row schema of a listing (a JSON array success body), None for anything else."""
    node = success_body(document, op)
    return resolve_ref(document, node["items"]) if node is not None and node.get("type") == "array" else None


def request_body_schema(document: JSON, op: SpecOperation) -> JSON:
    """The JSON request body's schema ({} without one); a `$ref`'d requestBody (as converted
    Swagger 2.0 descriptions have them) is followed."""
    body = resolve_ref(document, op.node.get("requestBody", {}))
    return body.get("content", {}).get("application/json", {}).get("schema", {})
