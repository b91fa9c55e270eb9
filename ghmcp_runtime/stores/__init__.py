"""State that outlives a call: idempotency keys (in memory or Redis) that replay a finished write and
recover an unknown outcome. May import: guards, core, cleaning, base.
"""
