"""A requests-per-minute limit that works across event loops and threads.

TRL runs async rewards on its own event loop thread, while ``explain`` from
synchronous code runs each call on a fresh loop; an ``asyncio`` primitive
belongs to one loop, so the limiter keeps its state in plain numbers behind a
thread lock and only *sleeps* with ``asyncio``.

Requests are spaced evenly, ``60 / requests_per_minute`` seconds apart (no
bursts), so no 60-second window ever holds more than the limit. Retries are
requests too and take their turn.
"""

from __future__ import annotations

import asyncio
import threading
import time

__all__ = ["RateLimiter"]


class RateLimiter:
    """Evenly spaced request slots: at most ``per_minute`` requests in any minute.

    >>> import asyncio, time
    >>> limiter = RateLimiter(per_minute=1200)  # one request every 50 ms
    >>> async def five():
    ...     start = time.monotonic()
    ...     await asyncio.gather(*(limiter.acquire() for _ in range(5)))
    ...     return time.monotonic() - start
    >>> 0.19 <= asyncio.run(five()) < 0.5  # slots at 0, 50, 100, 150, 200 ms
    True
    """

    def __init__(self, per_minute: float) -> None:
        if not per_minute or per_minute <= 0:
            raise ValueError(f"requests per minute must be positive, got {per_minute!r}")
        self.interval = 60.0 / float(per_minute)
        self._next = 0.0
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take the next free slot; return how many seconds to wait for it."""
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
            return slot - now

    async def acquire(self) -> None:
        """Wait for the next free slot."""
        wait = self.reserve()
        if wait > 0:
            await asyncio.sleep(wait)
