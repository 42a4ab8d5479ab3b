"""A requests-per-minute limit that works across event loops and threads.

TRL runs async rewards on its own event loop thread, while ``explain`` from
synchronous code runs each call on a fresh loop; an ``asyncio`` primitive
belongs to one loop, so the limiter keeps its state in plain numbers behind a
thread lock and only *sleeps* with ``asyncio``.

Requests are spaced evenly, at least ``60 / requests_per_minute`` seconds
apart (no bursts), so no 60-second window ever holds more than the limit.
Retries are requests too and take their turn. The limit holds per process:
with several training processes, give each its share.
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
    >>> asyncio.run(five()) >= 0.19  # slots at 0, 50, 100, 150, 200 ms (or later on a busy machine, never sooner)
    True
    """

    def __init__(self, per_minute: float) -> None:
        if not per_minute or per_minute <= 0:
            raise ValueError(f"requests per minute must be positive, got {per_minute!r}")
        self.interval = 60.0 / float(per_minute)
        self._next = 0.0
        self._lock = threading.Lock()

    def try_acquire(self) -> float:
        """Take the slot if it is free now (return 0.0), else return how many seconds until it is."""
        with self._lock:
            now = time.monotonic()
            if now >= self._next:
                self._next = now + self.interval
                return 0.0
            return self._next - now

    async def acquire(self) -> None:
        """Wait until a slot is free, and take it.

        Slots are granted at the moment they are taken, not reserved in
        advance, so a caller that wakes late does not squeeze the next
        request closer to its own.
        """
        while True:
            wait = self.try_acquire()
            if wait <= 0:
                return
            await asyncio.sleep(wait)
