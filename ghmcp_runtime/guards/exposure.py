"""Exposure controls: which tools (and repositories) a server, or one HTTP request, exposes.

The operator's flags set the server's surface: `--toolsets` (declared in the override files;
`all` = every toolset, `default` = a forge server's default set) and `--tools` select tools
(together: their union; neither: a forge server's default toolsets, a per-file server's every tool),
`--exclude-tools` removes tools, `--read-only` removes every tool that writes, whatever selected
it, and `--repos` sets the repository allowlist. Over HTTP a request may narrow that surface for
itself with the same vocabulary in headers (`X-MCP-Readonly`, `X-MCP-Toolsets`, `X-MCP-Tools`,
`X-MCP-Exclude-Tools`, `X-MCP-Repos`): the result is always inside the server's surface, so a
header can only narrow it. Names the server does not declare are refused, so a typo never
silently empties a surface.

A tool that runs other tools for the caller (a batch: its item tool and its listing,
`ToolSpec.runs`) is exposed only with all of them: hiding `github_update_issue` hides
`github_update_issues` too, whatever hid it, so no call reaches a hidden tool through another.
Naming such a tool in `--tools`/`X-MCP-Tools` while its tools stay hidden is refused.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from ghmcp_runtime.core.model import ToolSpec
from ghmcp_runtime.guards.allowlist import RepoAllowlist, parse_entries

ALL = "all"
DEFAULT = "default"  # a forge server's documented default toolsets
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")
MAX_HEADER_CHARS = 4096
MAX_NAMES = 64
_SHOWN = re.compile(r"[A-Za-z0-9_.*/-]{1,100}")
HEADERS = {  # request header -> the flag it narrows
    "x-mcp-readonly": "--read-only",
    "x-mcp-toolsets": "--toolsets",
    "x-mcp-tools": "--tools",
    "x-mcp-exclude-tools": "--exclude-tools",
    "x-mcp-repos": "--repos",
}


class ExposureError(ValueError):
    """A flag or header value this server cannot apply (unknown name, malformed value)."""


def _shown(name: str) -> str:
    """A caller-supplied name, quoted only when it is tame enough to print."""
    return repr(name) if _SHOWN.fullmatch(name) else "a name"


def _flag(value: str | None, what: str) -> bool:
    text = (value or "").strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ExposureError(f"{what} takes true or false")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExposureFlags:
    """The operator's exposure flags (command line, else environment)."""

    read_only: bool = False
    toolsets: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    exclude_tools: tuple[str, ...] = ()
    repos: tuple[str, ...] = ()
    dynamic: bool = False  # --dynamic-toolsets

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ExposureFlags:
        env = os.environ if env is None else env
        return cls(
            read_only=_flag(env.get("GHMCP_READ_ONLY"), "GHMCP_READ_ONLY"),
            toolsets=parse_entries(env.get("GHMCP_TOOLSETS")),
            tools=parse_entries(env.get("GHMCP_TOOLS")),
            exclude_tools=parse_entries(env.get("GHMCP_EXCLUDE_TOOLS")),
            repos=parse_entries(env.get("GHMCP_REPOS")),
            dynamic=_flag(env.get("GHMCP_DYNAMIC_TOOLSETS"), "GHMCP_DYNAMIC_TOOLSETS"),
        )


@dataclass(frozen=True, slots=True)
class Surface:
    """What one request may use: tool names and the repository allowlist (None: any)."""

    tools: frozenset[str]
    repos: RepoAllowlist | None = None
    # HTTP: surfaces may differ between requests, so lists built from one are cacheScope private
    per_request: bool = field(default=False, compare=False)


class ExposurePolicy:
    """The server's surface from its flags, and each HTTP request's surface within it."""

    def __init__(self, tools: Sequence[ToolSpec], toolsets: Mapping[str, str],
                 flags: ExposureFlags, default_toolsets: Sequence[str] | None = None,
                 meta: Sequence[str] = ()) -> None:
        self.names = frozenset(t.name for t in tools)
        self.meta = frozenset(meta)  # --dynamic-toolsets: the tools that list and enable toolsets
        self.members = {name: frozenset(t.name for t in tools if t.toolset == name)
                        for name in toolsets}
        # what no selection means: the default toolsets' tools (a forge server), else every tool
        self.default = self.names if default_toolsets is None else frozenset().union(
            *(self.members[name] for name in default_toolsets))
        self.writes = frozenset(t.name for t in tools if not t.annotations.read_only)
        self.runs = {t.name: frozenset(t.runs) for t in tools if t.runs}
        self.full = Surface(self.names)
        try:
            repos = RepoAllowlist.parse(flags.repos) if flags.repos else None
        except ValueError as exc:
            raise ExposureError(f"--repos: {exc}") from None
        source = ("--toolsets", "--tools", "--exclude-tools")
        if flags.dynamic:
            self.bounds = self._select(flags.read_only, [ALL], [], flags.exclude_tools,
                                       within=self.names, unselected=frozenset(), source=source)
            chosen = self.meta | self._select(flags.read_only, flags.toolsets, flags.tools,
                                              flags.exclude_tools, within=self.bounds,
                                              unselected=frozenset(), source=source)
        else:
            chosen = self._select(flags.read_only, flags.toolsets, flags.tools, flags.exclude_tools,
                                  within=self.names, unselected=self.default, source=source)
            self.bounds = chosen
        if not chosen:
            raise ExposureError("the exposure flags leave no tool: check --read-only, --toolsets, "
                                "--tools and --exclude-tools")
        self.base = Surface(chosen, repos)
        self._request = lru_cache(maxsize=256)(self._narrowed)

    def _names(self, names: Iterable[str], known: Iterable[str], what: str) -> list[str]:
        out = list(names)
        if len(out) > MAX_NAMES:
            raise ExposureError(f"{what} lists more than {MAX_NAMES} names")
        unknown = [n for n in out if n not in known]
        if unknown:
            raise ExposureError(f"{what}: unknown name {_shown(unknown[0])}; this server has "
                                f"{', '.join(sorted(known))}")
        return out

    def _select(self, read_only: bool, toolsets: Sequence[str], tools: Sequence[str],
                exclude: Sequence[str], *, within: frozenset[str], unselected: frozenset[str],
                source: tuple[str, str, str]) -> frozenset[str]:
        sets = self._names(toolsets, [ALL, DEFAULT, *self.members], source[0])
        picked = self._names(tools, self.names, source[1])
        dropped = self._names(exclude, self.names, source[2])
        chosen = set(unselected) if not sets and not picked else set(picked)
        for name in sets:
            chosen |= (self.names if name == ALL else self.default if name == DEFAULT
                       else self.members[name])
        chosen -= set(dropped)
        if read_only:
            chosen -= self.writes
        chosen &= within
        closed = self._with_what_they_run(chosen)
        if lost := [n for n in picked if n in chosen - closed]:
            hidden = sorted(self.runs[lost[0]] - closed)
            raise ExposureError(f"{source[1]}: {lost[0]} runs {', '.join(hidden)}, which this "
                                f"selection hides: expose {'them' if len(hidden) > 1 else 'it'} "
                                f"too, or leave {lost[0]} out")
        return frozenset(closed)

    def _with_what_they_run(self, chosen: set[str]) -> set[str]:
        """`chosen` without every tool that runs a tool outside it (to a fixed point: a
        composite of composites goes with its innermost tool)."""
        closed = set(chosen)
        while hidden := {n for n in closed if not self.runs.get(n, frozenset()) <= closed}:
            closed -= hidden
        return closed

    def enable(self, surface: Surface, toolsets: Sequence[str]) -> Surface:
        """`surface` with the tools of `toolsets` the flags allow (--dynamic-toolsets)."""
        added = frozenset().union(*(self.members[name] for name in toolsets)) & self.bounds
        grown = self._with_what_they_run(set(surface.tools | added))
        return Surface(frozenset(grown), surface.repos, per_request=surface.per_request)

    def for_request(self, headers: Mapping[str, str]) -> Surface:
        """The surface of an HTTP request: the server's, narrowed by its X-MCP-* headers."""
        values = tuple(headers.get(name, "") for name in HEADERS)
        if any(len(v) > MAX_HEADER_CHARS for v in values):
            raise ExposureError(f"an X-MCP-* exposure header is longer than {MAX_HEADER_CHARS} characters")
        surface: Surface = self._request(values)
        return surface

    def _narrowed(self, values: tuple[str, ...]) -> Surface:
        read_only, toolsets, tools, exclude, repos = values
        chosen = self._select(
            _flag(read_only, "X-MCP-Readonly"), parse_entries(toolsets), parse_entries(tools),
            parse_entries(exclude), within=self.bounds, unselected=self.base.tools,
            source=("X-MCP-Toolsets", "X-MCP-Tools", "X-MCP-Exclude-Tools")) | self.meta
        allowlist = self.base.repos
        if parse_entries(repos):
            try:
                asked = RepoAllowlist.parse(parse_entries(repos))
            except ValueError as exc:
                raise ExposureError(f"X-MCP-Repos: {exc}") from None
            allowlist = asked if allowlist is None else allowlist.intersect(asked)
        return Surface(chosen, allowlist, per_request=True)


def add_exposure_arguments(parser: argparse.ArgumentParser, toolsets: Mapping[str, str],
                           forge: str = "the forge",
                           default_toolsets: Sequence[str] | None = None) -> None:
    """The exposure flags of the console script (each also read from the environment)."""
    names = ", ".join(f"{n} ({d})" for n, d in toolsets.items()) or "none declared"
    default = ("every toolset" if default_toolsets is None
               else "'default' = " + ",".join(default_toolsets))
    parser.add_argument("--read-only", action="store_true", default=None,
                        help=f"hide every tool that writes to {forge}, whatever selects it "
                             "(env GHMCP_READ_ONLY=1)")
    parser.add_argument("--toolsets", metavar="NAME,...",
                        help=f"expose only these toolsets, 'all' or 'default' (env "
                             f"GHMCP_TOOLSETS; without it and --tools: {default}); "
                             f"this server's toolsets: {names}")
    parser.add_argument("--tools", metavar="TOOL,...",
                        help="expose these tools, on top of --toolsets; alone: only these "
                             "(env GHMCP_TOOLS)")
    parser.add_argument("--exclude-tools", metavar="TOOL,...",
                        help="hide these tools, whatever selects them (env GHMCP_EXCLUDE_TOOLS)")
    parser.add_argument("--dynamic-toolsets", action="store_true", default=None,
                        help="start with only the tools that list, show and enable toolsets; the "
                             "model enables what it needs (stdio: tools/list grows and the client "
                             "is notified; HTTP: each request names its toolsets in X-MCP-Toolsets). "
                             "--toolsets and --tools then say what starts enabled; --read-only and "
                             "--exclude-tools still bound it (env GHMCP_DYNAMIC_TOOLSETS=1)")
    parser.add_argument("--repos", metavar="OWNER/REPO,OWNER/*,...",
                        help="repository allowlist: calls, resources, completions and searches "
                             "reach only these repositories (env GHMCP_REPOS)")


def exposure_flags(args: argparse.Namespace, env: ExposureFlags) -> ExposureFlags:
    """The command line's exposure flags; the environment's where the command line is silent."""
    given = {"toolsets": args.toolsets, "tools": args.tools,
             "exclude_tools": args.exclude_tools, "repos": args.repos}
    return replace(env, read_only=bool(args.read_only) or env.read_only,
                   dynamic=bool(args.dynamic_toolsets) or env.dynamic,
                   **{k: parse_entries(v) for k, v in given.items() if v is not None})
