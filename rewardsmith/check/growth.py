"""How a call's CPU time grows with the size of its input: the linear-time rule of the fuzz test.

The rule judges the algorithm, not the machine, so it measures CPU time
(:func:`cpu_seconds`: this process, the processes it started, and theirs),
not wall time: a call that waits for a core on a busy machine uses none, and
a reward that scores in a worker process or a sandbox is charged for the
work done there. Each size is timed several times and the best is kept
(extra work only ever adds), the growth is fitted over every size rather
than one pair, and a verdict that breaks the rule is measured once more
before it stands.

>>> from rewardsmith.check.adversarial import family
>>> growth = measure_growth(lambda text: text.count("a"), family("run:a"), (1000, 10_000), repeats=3)
>>> sorted(growth.seconds), growth.problems()
([1000, 10000], [])
>>> quadratic = {1000: 0.01, 10_000: 1.0, 100_000: 100.0}
>>> for problem in Growth("toy", dict(quadratic)).problems():
...     print(problem)
toy: 100x CPU time per 10x size (fitted over 1 KB .. 100 KB)
toy: 100 s at 100 KB (measured)
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rewardsmith.core.processes import descendants

try:
    import resource
except ImportError:  # not on Windows: only this process is counted there
    resource = None  # type: ignore[assignment]

__all__ = ["MB", "Growth", "TextFamily", "cpu_seconds", "measure_growth"]

KB, MB = 1_000, 1_000_000
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _process_tree_seconds(pid: int) -> float:
    """CPU seconds of ``pid`` and of its children that ended (``/proc/PID/stat``: utime, stime, cutime, cstime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / _TICK


def cpu_seconds(exclude: Collection[int] = ()) -> float:
    """CPU seconds used so far by this process (every thread), its children that ended, and its live descendants.

    The difference over a call is the work the call did, wherever it ran (a
    worker process, a sandbox), and not the time it spent waiting for a core.
    ``exclude`` leaves out live descendants that do other work (a load
    generator, a server shared by many calls).

    >>> before = cpu_seconds()
    >>> _ = sum(range(200_000))
    >>> cpu_seconds() - before > 0
    True
    """
    own = time.process_time()
    if resource is not None:
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        own += ended.ru_utime + ended.ru_stime
    return own + sum(_process_tree_seconds(pid) for pid in descendants(os.getpid()) if pid not in exclude)


class TextFamily(Protocol):
    """Texts of any size: ``text(n)`` is the member of ``n`` characters (see ``rewardsmith.check.adversarial``)."""

    name: str

    def text(self, n: int) -> str: ...


@dataclass
class Growth:
    """How one call's CPU time grew over the sizes of one family.

    ``seconds[size]`` is the best of the repeats, or ``None`` where the size was
    not run because the growth seen so far predicted more than the budget;
    ``estimate[size]`` is then that prediction.
    """

    family: str
    seconds: dict[int, float | None] = field(default_factory=dict)
    estimate: dict[int, float] = field(default_factory=dict)

    def time(self, size: int) -> float | None:
        """The measured time at ``size``, else the estimate, else ``None``."""
        measured = self.seconds.get(size)
        return measured if measured is not None else self.estimate.get(size)

    def _known(self) -> list[int]:
        return sorted(s for s in self.seconds if self.time(s) is not None)

    @property
    def largest(self) -> tuple[int, float]:
        """The largest size reached (measured or estimated) and its time."""
        size = self._known()[-1]
        return size, self.time(size)  # type: ignore[return-value]

    def ratios(self, floor: float = 5e-3) -> list[tuple[int, int, float]]:
        """``(small, large, time ratio scaled to a 10x size step)`` for each step; times below ``floor`` count as it."""
        sizes = self._known()
        out = []
        for small, large in itertools.pairwise(sizes):
            step = math.log10(large / small)
            ratio = max(self.time(large), floor) / max(self.time(small), floor)  # type: ignore[arg-type]
            out.append((small, large, ratio ** (1 / step) if step else ratio))
        return out

    def per_10x(self, floor: float = 5e-3) -> float:
        """The time ratio per 10x size, fitted (least squares, log-log) over every size reached.

        Times below ``floor`` count as ``floor``: timer resolution on sub-millisecond calls is not growth.
        """
        sizes = self._known()
        if len(sizes) < 2:
            return 1.0
        xs = [math.log10(s) for s in sizes]
        ys = [math.log10(max(self.time(s), floor)) for s in sizes]  # type: ignore[type-var]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        return 10**slope

    def problems(self, max_ratio: float = 15.0, seconds_per_mb: float = 3.0, floor: float = 5e-3) -> list[str]:
        """What breaks the rule: fitted growth above ``max_ratio`` per 10x size, or more than ``seconds_per_mb`` per MB.

        The budget is judged at the largest size reached (measured or extrapolated): a fixed cost per call
        (0.1 s to read 25 instructions) is no blow-up, while a super-linear one shows most at the largest size.
        Growth is judged where the largest size takes at least a tenth of its time budget: below that, the
        growth is the memory hierarchy's (lists that leave the CPU caches), not the algorithm's, and whatever
        the growth, the time is far inside the budget.
        """
        found: list[str] = []
        sizes = self._known()
        if not sizes:
            return found
        largest, took = self.largest
        per_10x = self.per_10x(floor)
        if len(sizes) >= 2 and per_10x > max_ratio and took > max(floor, 0.1 * seconds_per_mb * largest / MB):
            fitted = f"fitted over {_size(sizes[0])} .. {_size(largest)}"
            found.append(f"{self.family}: {per_10x:.0f}x CPU time per 10x size ({fitted})")
        if took > max(seconds_per_mb * largest / MB, floor * 10):
            how = "measured" if self.seconds[largest] is not None else "extrapolated"
            found.append(f"{self.family}: {took:.3g} s at {_size(largest)} ({how})")
        return found

    def merged(self, other: Growth) -> Growth:
        """The best of two measurements of the same family, size by size."""
        out = Growth(self.family)
        for size in sorted(set(self.seconds) | set(other.seconds)):
            mine, theirs = self.time(size), other.time(size)
            best = self if theirs is None or (mine is not None and mine <= theirs) else other
            out.seconds[size] = best.seconds.get(size)
            if size in best.estimate:
                out.estimate[size] = best.estimate[size]
        return out

    def describe(self) -> str:
        """The times as ``10 KB 0.001 s, 100 KB ~12 s (extrapolated), ...``."""
        parts = []
        for size in sorted(self.seconds):
            measured = self.seconds[size]
            if measured is not None:
                parts.append(f"{_size(size)} {measured:.4f} s")
            elif size in self.estimate:
                parts.append(f"{_size(size)} ~{self.estimate[size]:.3g} s (extrapolated)")
        return ", ".join(parts)


def _size(n: int) -> str:
    return f"{n // MB} MB" if n >= MB else f"{n // KB} KB"


def _best_of(call: Callable[[str], Any], text: str, repeats: int, clock: Callable[[], float]) -> float:
    best = math.inf
    for _ in range(max(1, repeats)):
        start = clock()
        call(text)
        best = min(best, clock() - start)
    return best


def _exponent(small: tuple[int, float], large: tuple[int, float]) -> float | None:
    """The growth exponent between two measured sizes (at least linear), or ``None`` below timer resolution."""
    if small[1] <= 1e-3 or large[1] <= 1e-3:
        return None
    return max(1.0, math.log(large[1] / small[1]) / math.log(large[0] / small[0]))


def _measure(call, fam, sizes, counts, give_up, clock) -> Growth:
    growth = Growth(fam.name)
    previous: tuple[int, float] | None = None
    exponent: float | None = None
    for size, count in zip(sizes, counts):
        if previous is not None:
            if exponent is None and previous[1] * (size / previous[0]) ** 2 > give_up:
                # No step to go by yet, and a quadratic guess would skip this size: a fixed cost per call
                # (reading the settings) must not pass for growth, so a size twice the last one gives the step.
                probe = (2 * previous[0], _best_of(call, fam.text(2 * previous[0]), count, clock))
                growth.seconds[probe[0]] = probe[1]
                exponent, previous = _exponent(previous, probe), probe
            predicted = max(previous[1], 1e-6) * (size / previous[0]) ** (exponent or 2.0)
            if predicted > give_up:
                growth.seconds[size] = None
                growth.estimate[size] = predicted
                previous = (size, predicted)
                continue
        seconds = _best_of(call, fam.text(size), count, clock)
        growth.seconds[size] = seconds
        if previous is not None:
            exponent = _exponent(previous, (size, seconds)) or exponent
        previous = (size, seconds)
    return growth


def measure_growth(
    call: Callable[[str], Any],
    fam: TextFamily,
    sizes: Sequence[int] = (10 * KB, 100 * KB, MB),
    *,
    repeats: int | Sequence[int] = 1,
    give_up: float = 10.0,
    clock: Callable[[], float] = cpu_seconds,
) -> Growth:
    """The CPU time of ``call(fam.text(size))`` at each size (best of ``repeats``), smallest first.

    A size is not run when the growth seen so far predicts more than
    ``give_up`` seconds for it; its time is then extrapolated, and so are the
    larger sizes'. Before there is a step to go by, a size that a quadratic
    guess would skip is preceded by a probe at twice the last size, so a
    fixed cost per call is not taken for growth. A growth that breaks
    the rule is measured once more, and each size keeps the better time.
    ``clock`` is :func:`cpu_seconds` (pass one that excludes a load generator
    the caller started).
    """
    counts = [repeats] * len(sizes) if isinstance(repeats, int) else list(repeats)
    growth = _measure(call, fam, sizes, counts, give_up, clock)
    if growth.problems():
        growth = growth.merged(_measure(call, fam, sizes, counts, give_up, clock))
    return growth
