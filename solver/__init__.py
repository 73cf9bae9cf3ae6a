"""Rules, positions and solvers of (R, C, k) games. Knows nothing of storage or the CLI."""

from ttt_solve import __version__

SOLVER_VERSION = __version__
"""Stored with every solved game: the version of the code that solved it."""
