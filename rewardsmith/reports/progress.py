"""Progress of long work (an evaluation job, a reward audit): items done, items per second, the time left.

On a terminal it is a live bar (``rich``); elsewhere (a log file, CI, a
pipe) one line every ``interval`` seconds and one at the end, so logs stay
readable. Items per second count this run only (rows read back from an earlier
run are not "done" now), so the estimate of the time left stays honest.
``rich`` is imported only when a bar is drawn.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

__all__ = ["Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    """``75`` -> ``'1m15s'``, ``4000`` -> ``'1h06m'``.

    >>> format_duration(5.2), format_duration(75), format_duration(4000)
    ('5s', '1m15s', '1h06m')
    """
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """Items done of ``total`` (``None`` when unknown), with items/s and an ETA; ``done`` items were there already.

    ``label`` starts each line and ``unit`` names the items (``eval: 60/100 rows``).

    >>> import io
    >>> out = io.StringIO()
    >>> progress = Progress(total=100, done=20, stream=out, interval=0.0, clock=iter([0.0, 2.0, 4.0]).__next__)
    >>> progress.advance(40)
    >>> progress.finish()
    >>> print(out.getvalue().strip())
    eval: 60/100 rows (60%), 20.0 rows/s, ETA 2s
    eval: 60/100 rows (60%), 10.0 rows/s, stopped after 4s
    """

    def __init__(
        self,
        total: int | None,
        done: int = 0,
        *,
        enabled: bool = True,
        stream: IO[str] | None = None,
        interval: float = 10.0,
        clock: Any = time.monotonic,
        label: str = "eval",
        unit: str = "rows",
    ) -> None:
        self.label = label
        self.unit = unit
        self.total = total
        self.done = done
        self.start_done = done
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self.last_line = self.started
        self._bar: Any = None
        if enabled and stream is None and self.stream.isatty():
            self._start_bar()

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        unit = self.unit

        class PerSecond(ProgressColumn):
            def render(self, task: Any) -> Any:
                from rich.text import Text

                return Text(f"{task.speed or 0:,.1f} {unit}/s")

        self._bar = RichProgress(
            TextColumn(self.label),
            BarColumn(),
            MofNCompleteColumn(),
            PerSecond(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(file=self.stream),
            transient=False,
        )
        self._task = self._bar.add_task(self.label, total=self.total, completed=self.done)
        self._bar.start()

    def rate(self, now: float) -> float:
        """Items per second in this run so far."""
        elapsed = now - self.started
        return (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0

    def advance(self, rows: int) -> None:
        """``rows`` more items are done."""
        self.done += rows
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, advance=rows)
            return
        now = self.clock()
        if now - self.last_line >= self.interval:
            self.last_line = now
            rate = self.rate(now)
            eta = ""
            if self.total is not None and rate > 0:
                eta = f", ETA {format_duration((self.total - self.done) / rate)}"
            self._line(f"{rate:,.1f} {self.unit}/s{eta}")

    def _line(self, tail: str) -> None:
        count = f"{self.done:,}" + (f"/{self.total:,}" if self.total is not None else "")
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        print(f"{self.label}: {count} {self.unit}{share}, {tail}", file=self.stream, flush=True)

    def finish(self, complete: bool = False) -> None:
        """The last word: items, rate, and the time taken."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        now = self.clock()
        ending = "done in" if complete else "stopped after"
        self._line(f"{self.rate(now):,.1f} {self.unit}/s, {ending} {format_duration(now - self.started)}")
