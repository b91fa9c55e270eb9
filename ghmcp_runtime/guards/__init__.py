"""What may pass, decided before or around a call: who is calling, Host/Origin checks, the exposed
surface, the repository allowlist, argument sizes, schema validation and cross-field rules,
lockdown of untrusted authors' text. May import: core, cleaning, base.
"""
