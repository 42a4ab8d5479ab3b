"""Ray engines vs local ones, measured in one run on a local Ray of 2 CPUs.

1. Evaluation rows/s, ``evaluate(..., engine="local")`` vs ``engine="ray"``
   (shards of 32 rows as Ray tasks), on 1,024 rows, for a reward doing about
   2 ms of CPU work per sample (where 2 CPUs can help) and for the cheap
   built-in ``gsm8k_accuracy`` (where the cost of shipping shards shows).
   Runs alternate local / Ray, medians of 3; both write the same rows.
2. The ``ray`` reward engine vs the local pool (both 2 workers, already
   started, a call of ``SAMPLES`` samples, medians of interleaved rounds): for
   a reward that does nothing (the engine's own cost per sample), for
   ``gsm8k_accuracy`` (cheap; target: Ray within 1.5x of the local pool's
   time) and for the ~2 ms reward (heavy; target: Ray at least as fast).

The load average is printed at the start and the end: the machine is shared.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import interleaved, verdict

from rewardsmith import Reward, evaluate

ROWS = 1024
SAMPLES = 1024


@dataclass
class BusyWork(Reward):
    """About ``millis`` milliseconds of pure-Python CPU work per sample; scores 1.0 when the answer is in the text."""

    millis: float = 2.0

    def score(self, completion: str, answer: str) -> float:
        end = time.perf_counter() + self.millis / 1000
        x = 0
        while time.perf_counter() < end:
            x += 1
        return float(answer in completion)


@dataclass
class Nothing(Reward):
    """Returns the completion's length: the cost of a call is the engine's alone."""

    def score(self, completion: str) -> float:
        return float(len(completion))


def _rows(folder: Path) -> Path:
    path = folder / "rows.jsonl"
    with open(path, "w") as handle:
        for i in range(ROWS):
            row = {"prompt": f"q{i}", "answer": str(i), "completion": f"so it is {i if i % 4 else i + 1}\n#### {i}"}
            handle.write(json.dumps(row) + "\n")
    return path


def _eval_rate(data: Path, reward: object, out: Path, engine: str) -> tuple[float, list]:
    start = time.perf_counter()
    report = evaluate(
        str(data), [reward], out, completions_column="completion", batch_size=32, progress=False,
        overwrite=True, engine=engine,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    scores = [next(iter(r["rewards"].values()))["score"] for r in report.rows()]
    return ROWS / seconds, scores


def main() -> None:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start (a shared machine)")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        data = _rows(root)
        print(f"evaluation rows/s, {ROWS} rows, shards of 32, Ray with 2 CPUs (median of 3, alternating)")
        for label, reward in (("~2 ms CPU per sample", BusyWork()), ("gsm8k_accuracy", "gsm8k_accuracy")):
            _eval_rate(data, reward, root / "warm", "ray")  # Ray workers started and the rewards imported
            rates: dict[str, list[float]] = {"local": [], "ray": []}
            scores: dict[str, list] = {}
            for _ in range(3):
                for engine in ("local", "ray"):
                    rate, scores[engine] = _eval_rate(data, reward, root / engine, engine)
                    rates[engine].append(rate)
            assert scores["local"] == scores["ray"], "the engines disagree"
            local, on_ray = statistics.median(rates["local"]), statistics.median(rates["ray"])
            print(
                f"  {label:<22} local {local:>7.0f} rows/s  ray {on_ray:>7.0f} rows/s  ray/local {on_ray / local:.2f}x"
            )

        _engines()
    ray.shutdown()
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


def _call(reward: object, batch: dict) -> object:
    return lambda: reward(**batch)


def _engines() -> None:
    """The reward engines, local pool vs Ray actors, on calls of ``SAMPLES`` samples."""
    from rewardsmith import get_reward

    completions = [f"so it is {i}\n#### {i if i % 3 else i + 1}" for i in range(SAMPLES)]
    answers = [str(i) for i in range(SAMPLES)]
    cases = [
        ("a reward that does nothing", lambda **kw: Nothing(**kw), {}, None),
        ("gsm8k_accuracy", lambda **kw: get_reward("gsm8k_accuracy", **kw), {"answer": answers}, 1.5),
        ("~2 ms CPU per sample", lambda **kw: BusyWork(**kw), {"answer": answers}, 1.0),
    ]
    print(f"reward engines, calls of {SAMPLES} samples, 2 workers each, already started (median of 5, interleaved)")
    for label, make, columns, target in cases:
        n = SAMPLES if target != 1.0 else SAMPLES // 4
        pool, actors = make(workers=2), make(workers=2, engine="ray")
        batch = {"completions": completions[:n], **{k: v[:n] for k, v in columns.items()}}
        assert pool(**batch) == actors(**batch), "the engines disagree"
        times = interleaved({"local": _call(pool, batch), "ray": _call(actors, batch)}, rounds=5)
        local, on_ray = times["local"] / n * 1e6, times["ray"] / n * 1e6
        judged = f"  ({verdict(on_ray / local, target, False)})" if target is not None else ""
        print(f"  {label + f' ({n})':<34} local pool {local:>7.1f} us/sample  ray {on_ray:>7.1f} us/sample  "
              f"ray/local {on_ray / local:.2f}x{judged}")  # fmt: skip
        pool.close()
        actors.close()


if __name__ == "__main__":
    main()
