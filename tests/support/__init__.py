"""Helpers the tests import: paths, processes and the servers they start (fixtures stay in conftest.py).

`tests/` is on sys.path (`pythonpath` in pyproject.toml's pytest table), so test modules import these
as `from support.processes import ...`.
"""
