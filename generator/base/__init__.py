"""Plain helpers every stage uses, knowing nothing of OpenAPI, override files or the IR:
diagnostics as data (`diagnostics`), YAML with a location for every key and item (`yamlsrc`), the
caches kept outside the tree (`format_cache`), the Node tools the project drives (`npm`).

May import: nothing else of the generator.
"""
