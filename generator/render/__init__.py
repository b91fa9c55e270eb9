"""IR → file map: Jinja2 templates and black (`files`), the facts a reviewer must judge kept
in the manifest (`review_facts`), and the sections of docs/overrides.md the code decides
(`doc_sections`). Nothing here writes to disk.

May import: base, spec, packaging, language, build, lint.
"""
