"""The pinned API descriptions: loaded, verified and indexed by operation (`pinned`), parsed
once and kept outside the tree (`parsed_specs`), patched with asserted JSON-pointer edits
(`patches`), their schemas as compact JSON Schema (`schemas`), and what an operation's answer can
be (`answers`).

May import: base.
"""
