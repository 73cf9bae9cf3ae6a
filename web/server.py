"""Running the application under uvicorn, on a socket already listening, until a signal.

On Ctrl-C (or SIGTERM) the worker processes are ended at once, before uvicorn's own stop: the
requests waiting for them are answered (503) and the stop does not wait for a search, an agent
move or an audit; answers still being sent after :data:`STOP_SECONDS` are dropped.
"""

from __future__ import annotations

import socket
from types import FrameType

import uvicorn
from starlette.applications import Starlette

STOP_SECONDS = 1
"""How long, once stopped, the server waits for answers being sent before it drops them."""


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self.app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        for pool in getattr(self.app.state, "workers", ()):
            pool.kill()
        super().handle_exit(sig, frame)


def run(app: Starlette, listener: socket.socket, *, access_log: bool) -> None:
    """Serve ``app`` on ``listener`` until Ctrl-C or SIGTERM (which return normally)."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=access_log,
        timeout_graceful_shutdown=STOP_SECONDS,
    )
    try:
        _Server(config, app).run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # the signal that stopped the server, raised again by uvicorn once it has stopped
