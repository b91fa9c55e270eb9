"""Override file + patched spec → IR: the frozen intermediate representation (`ir`), the
builder that checks every tool against the spec (`builder`), the recipes it declares (`declare`,
`update_plan`, `batch`, `resolvers`, `recipe_base`), the checks that need the built tools
(`param_values`, `error_reach`, `lockdown_check`), what each tool needs of a token (`scopes`),
the built-in error codes (`catalog`), the summary line of each answer field present only when
something happened (`field_notes`), and the IR's wire form, exactly what `tools/list` publishes
(`wire`).

May import: base, spec, packaging, language.
"""
