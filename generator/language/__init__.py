"""What the hand-written inputs say: the override file's strict schema and its located
errors (`overrides`), the forge file of a forge's one server (`forge_file`), and the static facts
of a hook module, read without importing it (`hookscan`).

May import: base, spec, packaging.
"""
