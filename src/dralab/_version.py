"""The version of dralab, in a module of its own so that any layer may name it
without importing the public facade (``dralab/__init__.py`` imports every layer)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
