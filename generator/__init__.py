"""Generator of task-level MCP servers from GitHub's OpenAPI description and an override file."""

__version__ = "0.1.0"
NAME = "ghmcp-gen"
