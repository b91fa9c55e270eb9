"""Declared tools: the runner that executes a `Declaration` (steps in dependency waves, recipes, error
mapping, outputs), multi-step writes and their settling re-reads, recovery of lost answers, name
resolution, paging, batches and confirmations. Forge-neutral: it knows operations and shapes, never
a forge's resources. May import: calls, stores, guards, core, cleaning, base.
"""
