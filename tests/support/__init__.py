"""Helpers shared by several test suites (importable as `tests.support.*` with the repository root
on sys.path; the root conftest puts it there). Standard library only at import time, so scripts
run by a bare `python3` (CI setup) can use them too."""
