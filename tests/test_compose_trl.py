"""Composed rewards inside a real ``GRPOTrainer`` on the offline tiny model, with a two-task dataset.

Each task has its own reward (one of them async, so TRL's async path runs
too) and both share a format reward. The same rewards go into one trainer in
the two forms ``route`` offers: one combined reward (a route plus the format
reward) and, trained on, the route split into one reward per task plus the
format reward. The test then checks what TRL logged (per-completion scores,
reward means, the component metrics sent through ``log_metric``) against the
rewards recomputed on the completions TRL logged, and that no row was left
unscored.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from trl_helpers import tiny_grpo_config

from rewardsmith import reward
from rewardsmith.compose import combine, coverage, route
from rewardsmith.core.functions import is_async_callable

pytestmark = pytest.mark.slow

DIGITS = {f"Write the digit {d} a few times.": d for d in range(5)}
LETTERS = {f"Write the letter {c} a few times.": c for c in "abcde"}


@reward
def digit_share(completion: str, target: int) -> float:
    """Share of characters that are the target digit (the ``digit`` task)."""
    return completion.count(str(target)) / len(completion) if completion else 0.0


@reward
async def letter_share(completion: str, letter: str) -> float:
    """Share of characters that are the letter (the ``letter`` task); async, like a remote judge."""
    await asyncio.sleep(0)
    return completion.lower().count(letter) / len(completion) if completion else 0.0


ROUTED = route({"digit": digit_share, "letter": letter_share})
TOTAL = combine([ROUTED, "tag_count"], weights=[1.0, 0.2]).named("total")
REWARD_FUNCS = [TOTAL, *ROUTED.split(), TOTAL.rewards[1]]
NAMES = ["total", "digit_share", "letter_share", "tag_count"]
WEIGHTS = [0.0, 1.0, 1.0, 0.2]  # "total" is watched, the split form is trained on


def _dataset():
    from datasets import Dataset

    rows = []
    for (digit_prompt, d), (letter_prompt, c) in zip(DIGITS.items(), LETTERS.items()):
        rows.append({"prompt": digit_prompt, "task": "digit", "target": d, "letter": None})
        rows.append({"prompt": letter_prompt, "task": "letter", "target": None, "letter": c})
    return Dataset.from_list(rows)


def _columns_for(prompts: list[str]) -> dict[str, list]:
    tasks = ["digit" if p in DIGITS else "letter" for p in prompts]
    return {"task": tasks, "target": [DIGITS.get(p) for p in prompts], "letter": [LETTERS.get(p) for p in prompts]}


def _call(fn, **kwargs):
    out = fn(**kwargs)
    return asyncio.run(out) if asyncio.iscoroutine(out) else out


def _nan(values):
    return np.array([math.nan if v is None else v for v in values], dtype=float)


def test_grpo_trains_on_a_routed_multi_task_dataset(tiny_model, tmp_path: Path):
    from trl import GRPOTrainer

    dataset = _dataset()
    report = coverage(dataset, REWARD_FUNCS)  # the check to run before training: every row is scored
    assert report.scored_by == {"total": 10, "digit_share": 5, "letter_share": 5, "tag_count": 10}
    assert [is_async_callable(f) for f in REWARD_FUNCS] == [True, False, True, False]

    # without shuffling, each batch holds one prompt of each task
    args = tiny_grpo_config(tmp_path, reward_weights=WEIGHTS, shuffle_dataset=False, log_completions=True)
    trainer = GRPOTrainer(model=str(tiny_model), reward_funcs=REWARD_FUNCS, args=args, train_dataset=dataset)
    assert trainer.reward_func_names == NAMES
    trainer.train()

    logged = [entry for entry in trainer.state.log_history if "rewards/total/mean" in entry]
    assert [entry["step"] for entry in logged] == [1, 2]
    route_name = "digit_share|letter_share"
    for entry in logged:
        frame = pd.read_parquet(tmp_path / "completions" / f"completions_{entry['step']:05d}.parquet")
        prompts, completions = list(frame["prompt"]), list(frame["completion"])
        columns = _columns_for(prompts)
        assert sorted(set(columns["task"])) == ["digit", "letter"] and len(frame) == 8

        # no row is left unscored: "total" scores every row, and exactly one task reward does
        stored = {name: frame[name].to_numpy(dtype=float) for name in NAMES}
        assert not np.isnan(stored["total"]).any() and not np.isnan(stored["tag_count"]).any()
        assert (np.isnan(stored["digit_share"]) != np.isnan(stored["letter_share"])).all()
        assert list(np.isnan(stored["letter_share"])) == [t == "digit" for t in columns["task"]]

        # what TRL stored per completion is what our rewards give on those completions
        for fn, name in zip(REWARD_FUNCS, NAMES):
            ours = _nan(_call(fn, prompts=prompts, completions=completions, **columns))
            np.testing.assert_allclose(stored[name], ours, rtol=1e-6, equal_nan=True)
            assert entry[f"rewards/{name}/mean"] == pytest.approx(float(np.nanmean(ours)), rel=1e-5, abs=1e-7)

        # "total" is the format-weighted sum of the two forms, row by row
        split_sum = np.nansum([stored["digit_share"], stored["letter_share"]], axis=0) + 0.2 * stored["tag_count"]
        np.testing.assert_allclose(stored["total"], split_sum, rtol=1e-5, atol=1e-7)
        # TRL's reward is the weighted sum of the split form (total has weight 0)
        assert entry["reward"] == pytest.approx(float(split_sum.mean()), rel=1e-5, abs=1e-7)

        # the component metrics logged through log_metric
        digit_rows = np.array([t == "digit" for t in columns["task"]])
        routed = np.where(digit_rows, stored["digit_share"], stored["letter_share"])
        assert entry[f"total/{route_name}"] == pytest.approx(float(routed.mean()), rel=1e-5, abs=1e-7)
        assert entry[f"total/{route_name}/applicable"] == 1.0
        assert entry["total/tag_count"] == pytest.approx(float(stored["tag_count"].mean()), rel=1e-5, abs=1e-7)
        assert entry["total/tag_count/applicable"] == 1.0
        assert entry[f"{route_name}/digit"] == pytest.approx(float(routed[digit_rows].mean()), rel=1e-5, abs=1e-7)
        assert entry[f"{route_name}/digit/applicable"] == 0.5
        assert entry[f"{route_name}/letter"] == pytest.approx(float(routed[~digit_rows].mean()), rel=1e-5, abs=1e-7)
        assert entry[f"{route_name}/letter/applicable"] == 0.5
        assert entry[f"{route_name}/unrouted"] == 0.0
        assert entry["digit_share/errors"] == 0.0 and entry["letter_share/errors"] == 0.0
