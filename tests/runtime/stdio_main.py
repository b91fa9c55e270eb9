"""`run(SPEC)` of the demo spec, launched as a subprocess by test_stdio.py."""

from app_spec import SPEC

from ghmcp_runtime import run

if __name__ == "__main__":
    run(SPEC)
