"""Node tools the tests drive (MCP Inspector, Prism): the installer lives in `generator.base.npm`
(`make update-spec` installs its converter the same way); re-exported here for the tests."""

from generator.base.npm import NodeSetupError, ensure_npm_package, node_env, require_node

__all__ = ["NodeSetupError", "ensure_npm_package", "node_env", "require_node"]
