"""The runs: one override file through every stage (`generate`: pure, timed by stage), what
one file is to its forge (`forge_part`), a forge's one server (`forge_server`), every file of a
directory forge by forge with the result cache (`run_all`, `result_cache`), what `make generate`
prints (`report`), and the shells that write, check and diff a file map (`io`).

May import: base, spec, packaging, language, build, lint, render.
"""
