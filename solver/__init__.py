"""Rules, positions and solvers of (R, C, k) games. Knows nothing of storage or the CLI."""

__version__ = "0.1.0"
SOLVER_VERSION = __version__
"""Stored with every solved game; bump when the solver's results could change."""
