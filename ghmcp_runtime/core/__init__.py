"""The vocabulary every layer shares: the declarations a generated server hands to the runtime
(`model`, `declared`), the error envelope (`errors`), upstream operations and answers, forge
profiles, version tokens, reference templates and value transforms, shape projection, logging.
Values and pure functions; no I/O besides logging. May import: cleaning, base.
"""
