"""What a change does: to the published tool surfaces (`python -m generator review`:
`sides` reads the base and the head, `report` writes the Markdown, `contract` what a schema diff
does not show), and upstream's change to the operations we use (`drift`, and `update_spec`:
`make update-spec`).

May import: base, spec, packaging, language, build, lint, render, pipeline.
"""
