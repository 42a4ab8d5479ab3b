"""Summary statistics computed as rows stream by, never holding all rows.

Every number in ``summary.json`` is computed here, one row at a time, in
memory that does not grow with the number of rows:

* mean and standard deviation by Welford's update (population standard
  deviation, ``ddof=0``, as NumPy's default), minimum and maximum;
* a histogram: exact counts per value while a reward has given at most
  :data:`EXACT_VALUES` distinct scores (binary and few-level rewards), then a
  fixed number of equal bins over the reward's ``score_range`` (or the range
  seen so far) that double their width when a score falls outside;
* pass@k with the unbiased estimator of Chen et al. (2021) per prompt,
  averaged over prompts; a prompt's group is complete when its last sample
  arrives (results come in prompt order, so one group is open at a time);
* the lowest- and highest-scoring samples (a few each) in bounded heaps.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

__all__ = ["EXACT_VALUES", "Histogram", "PassAtK", "RunningStats", "pass_at_k", "pass_ks"]

#: Distinct scores counted exactly before a histogram switches to bins.
EXACT_VALUES = 12
#: Number of bins of a binned histogram.
BINS = 20


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from ``n`` samples of which ``c`` passed: ``1 - C(n-c, k) / C(n, k)``.

    Computed as a product, which stays exact where the binomials overflow.

    >>> pass_at_k(4, 1, 1), pass_at_k(4, 1, 4), pass_at_k(4, 0, 2), round(pass_at_k(10, 3, 2), 4)
    (0.25, 1.0, 0.0, 0.5333)
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def pass_ks(n: int) -> list[int]:
    """The k reported for ``n`` samples per prompt: 1, the powers of two below ``n``, and ``n``.

    >>> pass_ks(1), pass_ks(5), pass_ks(8)
    ([], [1, 2, 4, 5], [1, 2, 4, 8])
    """
    if n < 2:
        return []
    ks = [1]
    while ks[-1] * 2 < n:
        ks.append(ks[-1] * 2)
    return [*ks, n]


@dataclass
class RunningStats:
    """Count, mean, standard deviation, minimum and maximum, updated one value at a time (Welford).

    >>> stats = RunningStats()
    >>> for x in (1.0, 2.0, 3.0, 4.0):
    ...     stats.add(x)
    >>> stats.count, stats.mean, round(stats.std, 4), stats.min, stats.max
    (4, 2.5, 1.118, 1.0, 4.0)
    """

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    min: float = math.inf
    max: float = -math.inf

    def add(self, x: float) -> None:
        """Take one value into account."""
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (x - self.mean)
        if x < self.min:
            self.min = x
        if x > self.max:
            self.max = x

    @property
    def std(self) -> float:
        """Population standard deviation (0 for fewer than two values)."""
        return math.sqrt(self.m2 / self.count) if self.count > 1 else 0.0

    def as_dict(self) -> dict[str, float | None]:
        """``mean``, ``std``, ``min``, ``max`` (``None`` when nothing was counted)."""
        if not self.count:
            return {"mean": None, "std": None, "min": None, "max": None}
        return {"mean": self.mean, "std": self.std, "min": self.min, "max": self.max}


@dataclass
class Histogram:
    """Counts of scores: exact per value while there are few distinct values, then equal bins that widen as needed.

    >>> h = Histogram(score_range=(0.0, 1.0))
    >>> for x in (0.0, 1.0, 1.0):
    ...     h.add(x)
    >>> h.as_dict()
    {'kind': 'values', 'values': [[0.0, 1], [1.0, 2]]}
    >>> for i in range(40):
    ...     h.add(i / 40)
    >>> d = h.as_dict()
    >>> d["kind"], len(d["counts"]), sum(d["counts"]), d["edges"][0], d["edges"][-1]
    ('bins', 20, 43, 0.0, 1.0)
    """

    score_range: tuple[float, float] | None = None
    values: dict[float, int] | None = field(default_factory=dict)
    # bins: exact rational low edge and width, and the float edges every score is placed by;
    # widening merges pairs of bins and the merged edges are a subset of the old ones, so a
    # score never ends up outside the edges that are reported for its bin
    lo: Fraction = Fraction(0)
    width: Fraction = Fraction(0)
    edges: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    at_top: int = 0  # scores on the top edge, counted in the last bin until the bins widen upward

    def add(self, x: float) -> None:
        """Count one score."""
        if self.values is not None:
            self.values[x] = self.values.get(x, 0) + 1
            if len(self.values) > EXACT_VALUES:
                self._to_bins()
            return
        self._bin_add(x, 1)

    def _to_bins(self) -> None:
        assert self.values is not None
        values, self.values = self.values, None
        low, high = min(values), max(values)
        if self.score_range is not None and self.score_range[0] <= low and high <= self.score_range[1]:
            low, high = self.score_range
        self.lo = Fraction(low)
        self.width = (Fraction(high) - self.lo) / BINS or Fraction(1)
        self._set_edges()
        self.counts = [0] * BINS
        for value, count in values.items():
            self._bin_add(value, count)

    def _set_edges(self) -> None:
        self.edges = [float(self.lo + i * self.width) for i in range(BINS + 1)]

    def _bin_add(self, x: float, count: int) -> None:
        while x < self.edges[0]:
            self._widen(downward=True)
        while x > self.edges[-1]:  # the top edge belongs to the last bin
            self._widen(downward=False)
        self.counts[min(bisect_right(self.edges, x) - 1, BINS - 1)] += count
        if x == self.edges[-1]:
            self.at_top += count

    def _widen(self, downward: bool) -> None:
        merged = [0] * BINS
        for i, count in enumerate(self.counts):
            merged[(BINS + i) // 2 if downward else i // 2] += count
        if downward:
            self.lo -= BINS * self.width
        else:  # the old top edge is now the lower edge of the middle bin
            merged[BINS // 2 - 1] -= self.at_top
            merged[BINS // 2] += self.at_top
            self.at_top = 0
        self.width *= 2
        self.counts = merged
        self._set_edges()

    def as_dict(self) -> dict[str, Any]:
        """``{"kind": "values", "values": [[score, count], ...]}`` or ``{"kind": "bins", "edges", "counts"}``."""
        if self.values is not None:
            return {"kind": "values", "values": [[value, self.values[value]] for value in sorted(self.values)]}
        return {"kind": "bins", "edges": list(self.edges), "counts": list(self.counts)}


@dataclass
class PassAtK:
    """pass@k averaged over prompts, from each prompt's sample count and passes.

    >>> p = PassAtK(n=4)
    >>> p.add_group(4, 1)
    >>> p.add_group(4, 0)
    >>> p.as_dict()
    {'prompts': 2, 'pass@1': 0.125, 'pass@2': 0.25, 'pass@4': 0.5}
    """

    n: int
    prompts: int = 0
    sums: dict[int, float] = field(default_factory=dict)
    counted: dict[int, int] = field(default_factory=dict)

    def add_group(self, scored: int, passed: int) -> None:
        """One prompt: ``scored`` samples had a score, ``passed`` of them passed (k larger than ``scored`` skipped)."""
        if scored == 0:
            return
        self.prompts += 1
        for k in pass_ks(self.n):
            if k <= scored:
                self.sums[k] = self.sums.get(k, 0.0) + pass_at_k(scored, passed, k)
                self.counted[k] = self.counted.get(k, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        """The number of prompts and ``pass@k`` for each k."""
        out: dict[str, Any] = {"prompts": self.prompts}
        for k in pass_ks(self.n):
            out[f"pass@{k}"] = self.sums[k] / self.counted[k] if self.counted.get(k) else None
        return out


class Extremes:
    """The ``keep`` lowest- and highest-scoring samples seen (earliest rows first among equal scores)."""

    def __init__(self, keep: int = 5) -> None:
        self.keep = keep
        self._low: list[tuple[Any, ...]] = []  # max-heap by (score, position): negated keys
        self._high: list[tuple[Any, ...]] = []  # min-heap by (score, -position)

    def add(self, score: float, position: int, make: Any) -> None:
        """Consider one sample; ``make()`` builds its record only if it is kept."""
        low_key = (-score, -position)
        if len(self._low) < self.keep:
            heapq.heappush(self._low, (*low_key, make()))
        elif low_key > self._low[0][:2]:
            heapq.heapreplace(self._low, (*low_key, make()))
        high_key = (score, -position)
        if len(self._high) < self.keep:
            heapq.heappush(self._high, (*high_key, make()))
        elif high_key > self._high[0][:2]:
            heapq.heapreplace(self._high, (*high_key, make()))

    def lowest(self) -> list[Any]:
        """Kept records, lowest score first."""
        return [item[2] for item in sorted(self._low, key=lambda t: (-t[0], -t[1]))]

    def highest(self) -> list[Any]:
        """Kept records, highest score first."""
        return [item[2] for item in sorted(self._high, key=lambda t: (-t[0], -t[1]))]
