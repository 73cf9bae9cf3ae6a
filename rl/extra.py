"""The ``rl`` extra: Gymnasium and PettingZoo, checked once with a one-line error."""

from __future__ import annotations

from ttt_solve.errors import TttError, install_hint

INSTALL = install_hint("rl")


class RlExtraMissingError(TttError, ImportError):
    """Gymnasium or PettingZoo is not installed."""


def require() -> None:
    """Import Gymnasium and PettingZoo, or say in one line which extra installs them."""
    try:
        import gymnasium  # noqa: F401
        import pettingzoo  # noqa: F401
    except ImportError as error:
        raise RlExtraMissingError(
            f"ttt_solve.rl needs Gymnasium and PettingZoo ({error.name} is missing); "
            f"install the extra: {INSTALL}"
        ) from None
