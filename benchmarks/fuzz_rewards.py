"""Adversarial time growth of every registered reward and of the judge verdict parser.

For each fuzz target (see ``rewardsmith.check.adversarial``): every family is
screened at 10 KB and 100 KB; the slowest ones are then timed at 10 KB,
100 KB and 1 MB (best of repeats), and the worst family is printed with its
CPU times (what the rule judges), its growth per 10x size (each step, and
fitted over all sizes), and its wall-clock time at the largest size (what a
training step waits for, on this machine as loaded as it is now). A size
whose predicted time exceeds ``--give-up`` seconds is not run but
extrapolated from the growth seen so far.

The rule: CPU time fitted over the sizes grows at most 15x per 10x size, and
1 MB takes at most 3 CPU seconds.

    python benchmarks/fuzz_rewards.py [--only NAME ...] [--top 3] [--give-up 60]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rewardsmith.check.adversarial import FAMILIES, SIZES, Growth, family, fuzz_targets, measure_growth


def screen(call, give_up: float) -> tuple[list[Growth], list[str]]:
    """Every family at 10 KB and 100 KB, and the families on which the call raised."""
    screened, crashes = [], []
    for fam in FAMILIES:
        try:
            screened.append(measure_growth(call, fam, SIZES[:2], give_up=give_up))
        except Exception as exc:
            crashes.append(f"{fam.name}: raises {type(exc).__name__}: {str(exc)[:80]}")
    return screened, crashes


def worst_growth(screened: list[Growth], call, top: int, give_up: float) -> tuple[Growth, list[Growth]]:
    """The worst family's full growth, and the full growths of the ``top`` slowest screened families."""
    screened.sort(key=lambda g: g.largest[1], reverse=True)
    by_name = {f.name: f for f in FAMILIES}
    full = [measure_growth(call, by_name[g.family], SIZES, repeats=(3, 2, 2), give_up=give_up) for g in screened[:top]]
    full.sort(key=lambda g: (g.largest[0], g.largest[1]), reverse=True)
    return full[0], full


def wall_seconds(call, growth: Growth) -> str:
    """The wall-clock time of one call at the largest measured size of ``growth``'s family."""
    measured = [size for size, seconds in growth.seconds.items() if seconds is not None]
    if not measured:
        return "not run"
    size = max(measured)
    text = family(growth.family).text(size)
    started = time.perf_counter()
    call(text)
    return f"{time.perf_counter() - started:.4f} s at {size // 1000} KB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="fuzz only these targets")
    parser.add_argument("--top", type=int, default=3, help="families timed up to 1 MB per target")
    parser.add_argument("--give-up", type=float, default=60.0, help="seconds above which a size is extrapolated")
    args = parser.parse_args()
    targets = fuzz_targets()
    if args.only:
        targets = [t for t in targets if t.name in args.only]
    print(f"{len(FAMILIES)} families; sizes 10 KB, 100 KB, 1 MB; rule (CPU time): <= 15x per 10x size, <= 3 s per MB")
    failing = []
    started = time.perf_counter()
    for target in targets:
        if target.call is None:
            print(f"{target.name:<24} skipped: {target.skip}")
            continue
        target.call("warm up")  # worker processes start here, not inside a timing
        screened, crashes = screen(target.call, args.give_up)
        worst, full = worst_growth(screened, target.call, args.top, args.give_up)
        ratios = ", ".join(f"{r:.1f}x" for _, _, r in worst.ratios())
        problems = crashes + [p for g in full for p in g.problems()]
        status = "ok" if not problems else "FAILS"
        wall = wall_seconds(target.call, worst)
        print(
            f"{target.name:<24} {status:<5} worst {worst.family!r}: CPU {worst.describe()}; growth per 10x: {ratios} "
            f"(fitted {worst.per_10x():.1f}x); wall {wall}"
        )
        for problem in problems:
            print(f"{'':<30}{problem}")
        if problems:
            failing.append(target.name)
        if target.reward is not None:
            target.reward.close()
    print(f"done in {time.perf_counter() - started:.0f} s; failing: {', '.join(failing) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
