"""Baton's version, in one place below every layer: the package exports it (`baton.__version__`) and telemetry
names its instrumentation scope with it; pyproject.toml reads it for the build."""

__version__ = "0.1.0"
