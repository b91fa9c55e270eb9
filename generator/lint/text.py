"""Contract rules on agent-visible text and names: metadata, enums, omission, hedges, references."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.base.diagnostics import Where
from generator.lint.ctx import Ctx

VERBS = frozenset({
    "add", "approve", "archive", "assign", "cancel", "check", "close", "comment", "create",
    "delete", "dismiss", "download", "edit", "fetch", "find", "get", "list", "lock", "merge",
    "move", "open", "pin", "read", "remove", "rename", "reopen", "restore", "retrieve", "run",
    "search", "send", "set", "start", "stop", "transfer", "unassign", "unlock", "unpin", "update",
    "upload",
})
# Verbs that must not mean the same thing on two tools of one server. `create` (a new standalone
# object) and `add` (append to a parent's collection) are deliberately distinct and allowed together.
SYNONYMS = (frozenset({"get", "fetch", "retrieve", "read"}), frozenset({"delete", "remove"}))
HEDGES = ("generally", "try to", "usually", "be careful", "typically", "probably", "perhaps",
          "maybe", "might want", "if possible", "ideally", "in most cases", "tends to")
_HEDGE = re.compile(r"\b(" + "|".join(re.escape(h) for h in HEDGES) + r")\b", re.IGNORECASE)


def check(ctx: Ctx) -> None:
    prefix = _prefix(ctx)
    _metadata(ctx)
    _enums_and_omission(ctx)
    for where, owner, text in _texts(ctx):
        hedge = _HEDGE.search(text)
        if hedge:
            ctx.error(where, "hedge-words", f"{owner}: hedge {hedge.group(1)!r} in agent-visible text",
                      "state the rule and its strength (a default and its override), or drop it")
        if prefix:
            _references(ctx, where, owner, text, prefix)
    if prefix:
        _names(ctx, prefix)


def _prefix(ctx: Ctx) -> str:
    names = [t.name for t in ctx.server.tools]
    return names[0].split("_")[0] + "_" if names and "_" in names[0] else ""


def _metadata(ctx: Ctx) -> None:
    for tool in ctx.server.tools:
        wire = ctx.wire[tool.name]
        for key in ("title", "description"):
            if not str(wire.get(key, "")).strip():
                ctx.error(ctx.where(tool, key), "metadata", f"{tool.name}: empty {key}",
                          f"every tool needs a {key} (clients show the title; agents read the description)")
        if wire.get("title", "").strip().lower().replace(" ", "_") == tool.name:
            ctx.error(ctx.where(tool, "title"), "metadata", f"{tool.name}: title repeats the name",
                      "write a short human title, e.g. 'Read an issue'")


def _enums_and_omission(ctx: Ctx) -> None:
    for tool in ctx.server.tools:
        schema = ctx.wire[tool.name]["inputSchema"]
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            text = str(prop.get("description", ""))
            values = [*prop.get("enum", []), *prop.get("items", {}).get("enum", [])]
            missing = [v for v in values if v is not None and not _mentions(text, str(v))]
            if missing:
                ctx.error(ctx.param_where(tool, name, "description"), "enum-explained",
                          f"{tool.name}: parameter {name} does not explain enum value(s) "
                          f"{', '.join(map(str, missing))}",
                          "name every value in the description and say what it does")
            if name not in required and not re.search(r"\bomit", text, re.IGNORECASE):
                ctx.error(ctx.param_where(tool, name, "omitted"), "omission",
                          f"{tool.name}: optional parameter {name} does not say what omitting it means",
                          "write `omitted: Omit to ...` with the effect of leaving it out")


def _mentions(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text) is not None


def _texts(ctx: Ctx) -> Iterator[tuple[Where, str, str]]:
    yield ctx.at(("server", "summary")), "server summary", ctx.server.summary
    for code in ctx.server.error_codes:
        for key in ("description", "repair"):
            yield ctx.at(("error_codes", code.code, key)), f"error code {code.code}", getattr(code, key)
    for tool in ctx.server.tools:
        wire = ctx.wire[tool.name]
        yield ctx.where(tool, "title"), tool.name, wire["title"]
        yield ctx.where(tool, "description"), tool.name, wire["description"]
        for name, prop in wire["inputSchema"].get("properties", {}).items():
            yield ctx.param_where(tool, name, "description"), f"{tool.name}.{name}", \
                str(prop.get("description", ""))
        for text in _descriptions(tool.success_schema):
            yield ctx.where(tool, "output"), f"{tool.name} output", text


def _descriptions(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        if isinstance(schema.get("description"), str):
            yield schema["description"]
        for key, value in schema.items():
            if key != "description":
                yield from _descriptions(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _descriptions(value)


def _references(ctx: Ctx, where: Where, owner: str, text: str, prefix: str) -> None:
    known = set(ctx.wire)
    pattern = rf"(?<![\w.]){re.escape(prefix)}[a-z0-9_]*[a-z0-9]"
    for name in sorted(set(re.findall(pattern, text)) - known):
        ctx.error(where, "tool-references", f"{owner}: mentions {name!r}, which is not a tool",
                  "name an existing tool (after a rename, update every reference in the same change)")


def _names(ctx: Ctx, prefix: str) -> None:
    verbs: dict[str, list[str]] = {}
    normalized: dict[str, str] = {}
    for tool in ctx.server.tools:
        rest = tool.name.removeprefix(prefix).split("_")
        verb = rest[0]
        verbs.setdefault(verb, []).append(tool.name)
        if verb not in VERBS or len(rest) < 2:
            ctx.error(ctx.where(tool, "name"), "name-verb",
                      f"{tool.name}: not {prefix}<verb>_<noun> with a known verb ({verb!r})",
                      "start with a verb such as list, get, search, create, update, delete, add")
        key = tool.name.removeprefix(prefix).replace("_", "").lower()
        if key in normalized:
            ctx.error(ctx.where(tool, "name"), "name-collision",
                      f"{tool.name}: collides with {normalized[key]} once flattened ({key!r})",
                      "pick names that stay distinct without underscores or case")
        normalized.setdefault(key, tool.name)
    for group in SYNONYMS:
        used = sorted(v for v in group if v in verbs)
        if len(used) > 1:
            tools = sorted(t for v in used for t in verbs[v])
            first = next(t for t in ctx.server.tools if t.name == tools[0])
            ctx.error(ctx.where(first, "name"), "name-verb",
                      f"synonym verbs {' and '.join(used)} used side by side ({', '.join(tools)})",
                      "one verb per meaning across the server")
