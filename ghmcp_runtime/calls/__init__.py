"""One tool call and its reach outside the process: `ToolContext` (what a handler gets), the
server-wide `on_error` rules every upstream failure passes, the forge client behind `ctx.call`
(URLs, headers, retries, status mapping), conditional-read caching, and opaque cursors. May import:
stores, guards, core, cleaning, base.
"""
