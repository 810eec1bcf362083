"""How many live event streams each user has open through this api-server, capped per user: one
user's hundreds of streams cannot take what everyone's requests need (each is cheap — async, no
thread, no database connection — but not free: an upstream connection and a task each)."""
import threading
import weakref
from collections.abc import Callable
from typing import Any


class StreamLimiter:
    def __init__(self, per_user: int):
        self.per_user = per_user
        self.lock = threading.Lock()  # taken by route threads and by the event loop
        self.open: dict[str, int] = {}

    def try_open(self, username: str, stream: Any) -> bool:
        """Count ``stream`` (a response body iterator) for ``username`` until it is gone — ended,
        cancelled, or never started and dropped: its finalizer gives the place back, whichever way
        it ends. False, counting nothing, when the user is at the cap."""
        release = self.hold(username)
        if release is None:
            return False
        weakref.finalize(stream, release)
        return True

    def hold(self, username: str) -> Callable[[], None] | None:
        """Count one stream of ``username`` until the function returned is called (the first call
        gives the place back, later ones nothing): for a stream that knows when it ends (a
        WebSocket). None, counting nothing, when the user is at the cap."""
        with self.lock:
            if self.open.get(username, 0) >= self.per_user:
                return None
            self.open[username] = self.open.get(username, 0) + 1
        held = [True]

        def release() -> None:
            with self.lock:
                if not held[0]:
                    return
                held[0] = False
            self._close(username)

        return release

    def _close(self, username: str) -> None:
        with self.lock:
            left = self.open.get(username, 0) - 1
            if left > 0:
                self.open[username] = left
            else:
                self.open.pop(username, None)
