"""Composability: every identifier a tool requires comes from somewhere an agent can reach.

An *identifier parameter* names an existing thing: it fills a path parameter of an operation the
tool calls (other than `owner`/`repo`, which the agent is given, and a `username`), or a body or
query field named `*_id`/`*_number` — unless the tool also creates something from it (a POST
body reads it). It is satisfied when the tool resolves it itself (`resolve:`), or when another
tool of the same server returns a field of that name — or whose name it ends with
(`sub_issue_number` ← `issue_number`). Rule `composability` refuses an identifier no tool
produces; TOOLS.md lists where each one comes from.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, Protocol

from generator.build.ir import IRServer, IRTool
from ghmcp_runtime.core.refs import references

# what the agent is told (or knows: a login), not an id it looks up
GIVEN = frozenset({"owner", "repo", "org", "username"})


def _id_field(name: str) -> bool:
    return name.endswith(("_id", "_number")) or name in ("id", "number")


def identifier_params(tool: IRTool) -> list[str]:
    """The tool's parameters that name an existing thing, in parameter order."""
    names = {p.name for p in tool.params}
    found: set[str] = set()
    for p in tool.params:
        if p.source and "#path." in p.source and p.source.rsplit(".", 1)[1] not in GIVEN:
            found.add(p.name)
    for step in tool.declaration.steps if tool.declaration else ():
        for key, template in step.path.items():
            if key not in GIVEN:
                found |= {r.path[0] for r in references(template)} & names
        for key, template in {**step.query, **step.body}.items():
            if _id_field(key):
                found |= {r.path[0] for r in references(template) if len(r.path) == 1} & names
    resolved = {r.param for r in tool.resolve}
    # a value the tool creates something from (a POST body) needs no producer: e.g. create-unless-exists
    created = {r.path[0] for step in (tool.declaration.steps if tool.declaration else ())
               if step.operation.method == "POST" for r in references(dict(step.body))}
    return [p.name for p in tool.params if p.name in found - resolved - created - GIVEN and not p.given]


def output_fields(schema: Any) -> Iterator[str]:
    """Every property name of a JSON schema, at any depth."""
    if isinstance(schema, Mapping):
        for name, sub in schema.get("properties", {}).items():
            yield name
            yield from output_fields(sub)
        for key in ("items", "additionalProperties"):
            yield from output_fields(schema.get(key))
        for key in ("oneOf", "anyOf", "allOf"):
            for sub in schema.get(key, []):
                yield from output_fields(sub)


def _fields(tool: IRTool) -> set[str]:
    """output_fields of a tool's success schema, computed once per schema (a forge's files are
    each other's peers: every file's check reads every tool of the forge)."""
    known = _FIELDS.get(id(tool.success_schema))
    if known is None or known[0] is not tool.success_schema:
        known = (tool.success_schema, set(output_fields(tool.success_schema)))
        _FIELDS[id(tool.success_schema)] = known
    return known[1]


_FIELDS: dict[int, tuple[Any, set[str]]] = {}  # id(schema) -> (schema, its fields); held, so ids stay


def produces(field: str, param: str) -> bool:
    """Does a returned `field` give a value for `param` (the same name, or a suffix of it)?"""
    if param == field:
        return True
    # only a qualified field stands for a longer name (issue_number; not number, id or name)
    return "_" in field and _id_field(field) and param.endswith("_" + field)


class Provider(Protocol):
    """A tool of another override file, as its forge part describes it (generator/pipeline/forge_part.py)."""

    @property
    def name(self) -> str: ...

    @property
    def toolset(self) -> str | None: ...

    @property
    def fields(self) -> tuple[str, ...]: ...

    @property
    def wire(self) -> Mapping[str, Any]: ...  # the tool as tools/list publishes it


class Peer(Protocol):
    @property
    def tools(self) -> Sequence[Provider]: ...


def sources(server: IRServer, peers: Sequence[Peer] = ()) -> dict[str, dict[str, list[str]]]:
    """tool -> identifier parameter -> the other tools that return it: the server's own first,
    then those of `peers` (the other override files of its forge); list/search tools first."""
    own = {t.name for t in server.tools}
    fields = {t.name: _fields(t) for t in server.tools}
    for peer in peers:
        fields.update({t.name: set(t.fields) for t in peer.tools if t.name not in own})
    return {tool.name: providers(tool.name, identifier_params(tool), fields, own)
            for tool in server.tools}


def providers(tool: str, params: Sequence[str], fields: Mapping[str, set[str] | Sequence[str]],
              first: Collection[str] = ()) -> dict[str, list[str]]:
    """identifier parameter -> the tools (other than `tool`) whose fields give it: those in
    `first` first, then list/search tools, then by name."""

    def rank(name: str) -> tuple[bool, bool, str]:
        verb = name.removeprefix(name.split("_")[0] + "_").split("_")[0]
        return name not in first, verb not in ("list", "search"), name

    return {param: sorted((other for other, have in fields.items() if other != tool
                           and any(produces(f, param) for f in have)), key=rank)
            for param in params}
