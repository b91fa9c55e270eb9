"""The MCP protocol and HTTP around a `ServerSpec`: the low-level server (tools/list, tools/call,
settings, console entry), streamable HTTP with authorization, resources, discovery, the capability
summary, and the container health check. May import: engine, calls, stores, guards, core, cleaning,
base.
"""
