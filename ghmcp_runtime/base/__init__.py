"""Plain Python helpers any layer may use, knowing nothing of MCP, forges, tools or text: modules
loaded on first use (`lazy`). May import: nothing else of the runtime.
"""
