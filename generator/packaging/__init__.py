"""The distributions: what the runtime and each generated server require, derived from
imports and pinned by constraints.txt (`requirements`), a server's MCP Registry entry
(`registry_entry`), its MCP Bundle (`bundle`, `python -m generator.packaging.bundle`), and the
development venv's editable installs (`venv_sync`, `python -m generator.packaging.venv_sync`).

May import: base, spec.
"""
