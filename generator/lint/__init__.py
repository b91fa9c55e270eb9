"""Contract rules over the IR and its wire form; errors stop generation (docs/lint-rules.md):
the rules (`rules`: `lint()`), what every rule sees (`ctx`), rules on text, behaviour, documented
examples and write answers (`text`, `behaviour`, `examples`, `spec_examples`, `answers`),
composability across a forge (`compose`), and breaking changes against the committed output
(`breaking`, `baseline`).

May import: base, spec, packaging, language, build.
"""
