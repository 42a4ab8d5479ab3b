"""DeepScaleR's math reward against ``math_accuracy(reasoning_delimiters=["</think>"])`` on real model solutions.

Each ProcessBench solution (``../shared/data/processbench_dev.jsonl``: real model output to MATH and
OlympiadBench problems, its final answer in ``\\boxed{}``) is given a reasoning block first, as a
reasoning model writes it (``<think>\\n...\\n</think>\\n\\n`` then the solution), and scored against its own
reference answer and against the next row's (a wrong reference), with the problem as the prompt, by

* the DeepScaleR-style port ``examples/ports/deepscaler/math_reward.py:deepscaler_reward_fn``,
* the built-in ``math_accuracy`` with ``reasoning_delimiters: ["</think>"]``,
* with ``--deepscaler DIR`` (a checkout of agentica-project/deepscaler whose ``deepscaler.rewards`` imports:
  pylatexenc and sympy installed), DeepScaleR's own ``deepscaler_reward_fn``, called directly and named by
  path as a rewardsmith reward (its file unchanged).

It prints how often each pair agrees (``None``, a reference that does not parse, counts as a
disagreement) and the first disagreements of each kind.

    python benchmarks/deepscaler_rows.py [--limit N] [--deepscaler DIR] [--show K]
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "processbench_dev.jsonl"
PORT = f"{ROOT / 'examples' / 'ports' / 'deepscaler' / 'math_reward.py'}:deepscaler_reward_fn"
THINK = "<think>\nI work through the problem, then write the solution out.\n</think>\n\n"


def samples(limit: int | None = None) -> list[dict[str, Any]]:
    """Each solution with a reasoning block, against its own reference and against the next row's."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines()][:limit]
    out = []
    for i, row in enumerate(rows):
        text = THINK + row["completion"]
        out.append(
            {"id": row["id"], "text": text, "reference": row["reference_answer"], "own": True, "prompt": row["problem"]}
        )
        other = rows[(i + 1) % len(rows)]["reference_answer"]
        if other.strip() != row["reference_answer"].strip():
            out.append({"id": row["id"], "text": text, "reference": other, "own": False, "prompt": row["problem"]})
    return out


def _scores(reward: Any, column: str, batch: list[dict[str, Any]]) -> list[Any]:
    columns = {column: [s["reference"] for s in batch]}
    return reward(prompts=[s["prompt"] for s in batch], completions=[s["text"] for s in batch], **columns)


def _deepscaler(folder: str) -> Callable[[str, str], Any]:
    sys.path.insert(0, folder)
    from deepscaler.rewards.math_reward import deepscaler_reward_fn  # type: ignore[import-not-found]

    def score(text: str, reference: str) -> Any:
        def stop(*_: Any) -> None:
            raise TimeoutError

        signal.signal(signal.SIGALRM, stop)
        signal.alarm(10)
        try:
            return float(deepscaler_reward_fn(text, reference))
        except TimeoutError:
            return "timeout"
        finally:
            signal.alarm(0)

    return score


def agreement(first: list[Any], second: list[Any]) -> tuple[int, Counter]:
    """How many pairs agree, and the disagreements by kind (``"1.0/0.0"``: the first says 1, the second 0)."""
    kinds = Counter(f"{a}/{b}" for a, b in zip(first, second) if a != b)
    return sum(a == b for a, b in zip(first, second)), kinds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N ProcessBench rows")
    parser.add_argument("--deepscaler", default=None, help="a checkout of agentica-project/deepscaler")
    parser.add_argument("--show", type=int, default=3, help="disagreements to print of each kind")
    args = parser.parse_args()
    if not DATA.is_file():
        print(f"no data at {DATA}")
        return 1
    from rewardsmith import get_reward

    batch = samples(args.limit)
    results = {
        "port": [float(s) for s in _scores(get_reward(PORT), "ground_truth", batch)],
        "math_accuracy": _scores(
            get_reward("math_accuracy", reasoning_delimiters=["</think>"], workers=1), "answer", batch
        ),
    }
    if args.deepscaler:
        own = _deepscaler(args.deepscaler)
        results["deepscaler"] = [own(s["text"], s["reference"]) for s in batch]
        named = get_reward(
            f"{Path(args.deepscaler) / 'deepscaler' / 'rewards' / 'math_reward.py'}:deepscaler_reward_fn"
        )
        results["deepscaler named by path"] = _scores(named, "ground_truth", batch)
    print(f"{len(batch)} samples ({sum(s['own'] for s in batch)} against their own reference)")
    for name, scores in results.items():
        print(f"  {name}: {sum(1 for s in scores if s == 1.0)} scored 1, {scores.count(None)} None")
    names = list(results)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            same, kinds = agreement(results[first], results[second])
            print(f"{first} = {second}: {same}/{len(batch)} ({same / len(batch):.1%}); differ {dict(kinds)}")
            for kind in kinds:
                shown = [s for s, a, b in zip(batch, results[first], results[second]) if f"{a}/{b}" == kind]
                for s in shown[: args.show]:
                    print(f"    {kind} {s['id']} ref={s['reference']!r} tail={s['text'][-120:]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
