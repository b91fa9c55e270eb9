"""Content safety on text: what a reader of the forge's page cannot see (invisible characters, hidden
markup, character references) removed from user-authored text and counted, and the one place
(`outbound`) every returned string passes through. Knows nothing of tools or forges. May import:
base.
"""
