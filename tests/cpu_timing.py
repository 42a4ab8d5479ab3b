"""Time bounds that hold on a busy machine: CPU seconds of the work (best of repeats), and the linear-time rule.

A test that bounds how long scoring takes measures the CPU time of the scoring (this process, the worker
processes and sandboxes it started), never the wall clock: on a loaded CI machine a call that waits for a core
uses none. The bounds stay far below what the defect they guard against cost (seconds to hours).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewardsmith.check.adversarial import Family
from rewardsmith.check.growth import cpu_seconds, measure_growth


def cpu_time(call: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """The fewest CPU seconds ``call()`` took over ``repeats`` calls, and what the last call returned."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = cpu_seconds()
        result = call()
        best = min(best, cpu_seconds() - start)
    return best, result


def assert_linear(call: Callable[[str], Any], build: Callable[[int], str], name: str, repeats: int = 1) -> None:
    """``call(text)`` on ``build(n)`` at 10 KB, 100 KB and 1 MB keeps the fuzz test's linear-time rule.

    A measurement that breaks the rule is taken again and each size keeps its better time (``measure_growth``).
    """
    growth = measure_growth(call, Family(name, build), repeats=repeats, give_up=20.0)
    assert not growth.problems(), growth.describe()
