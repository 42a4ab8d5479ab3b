"""Our rewards inside the real TRL trainers, on the offline tiny model.

Four authoring forms go into one ``GRPOTrainer`` together (a per-sample
``@reward`` reading a dataset column, a plain TRL batch function, an async
reward and a reward-kit style reward, with ``reward_weights``), for plain and
conversational prompts. The test then checks what TRL logged against what the
rewards give on the completions TRL logged.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from trl_helpers import TINY_RUN, tiny_grpo_config

from rewardsmith import EvaluateResult, MetricResult, reward, reward_function, to_trl
from rewardsmith.core.inputs import completion_text, prompt_text

pytestmark = pytest.mark.slow

TARGETS = {f"Write the digit {d} a few times.": d for d in range(10)}


@reward
def target_density(completion: str, target: int) -> float:
    """Share of characters that are the target digit (reads the ``target`` column)."""
    return completion.count(str(target)) / len(completion) if completion else 0.0


def length_fraction(completions, **kwargs):
    """A plain TRL reward function: completion length over 8 characters, capped at 1."""
    texts = [c if isinstance(c, str) else c[0]["content"] for c in completions]
    return [min(len(t) / 8, 1.0) for t in texts]


@reward(max_concurrency=4)
async def vowel_share(completion: str) -> float | None:
    """An async per-sample reward; None for an empty completion."""
    await asyncio.sleep(0.001)
    if not completion:
        return None
    return sum(ch in "aeiouAEIOU" for ch in completion) / len(completion)


@reward_function(ground_truth_column="target")
def mentions_target(messages, ground_truth=None, **kwargs) -> EvaluateResult:
    """A reward-kit style reward: 1 when the reply mentions the target digit."""
    said = str(ground_truth) in messages[-1]["content"]
    return EvaluateResult(
        score=float(said), reason="mentioned" if said else "not mentioned", metrics={"hit": MetricResult(float(said))}
    )


REWARDS = [target_density, length_fraction, vowel_share, mentions_target]
WEIGHTS = [1.0, 0.5, 0.25, 2.0]
NAMES = ["target_density", "length_fraction", "vowel_share", "mentions_target"]


def _dataset(conversational: bool):
    from datasets import Dataset

    rows = []
    for text, digit in list(TARGETS.items()) * 2:
        prompt = [{"role": "user", "content": text}] if conversational else text
        rows.append({"prompt": prompt, "target": digit})
    return Dataset.from_list(rows)


def _grpo_config(output_dir: Path):
    return tiny_grpo_config(output_dir, log_completions=True, reward_weights=WEIGHTS)


def _as_python(value):
    """Parquet gives numpy arrays of dicts back; turn them into lists of dicts."""
    if isinstance(value, np.ndarray):
        return [_as_python(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_python(v) for k, v in value.items()}
    return value


def _recompute(frame: pd.DataFrame) -> dict[str, list[float | None]]:
    prompts = [_as_python(p) for p in frame["prompt"]]
    completions = [_as_python(c) for c in frame["completion"]]
    targets = [TARGETS[prompt_text(p)] for p in prompts]
    out = {}
    for fn, name in zip(REWARDS, NAMES):
        values = fn(prompts=prompts, completions=completions, target=targets)
        if asyncio.iscoroutine(values):
            values = asyncio.run(values)
        out[name] = values
    return out


@pytest.mark.parametrize("conversational", [False, True], ids=["plain", "conversational"])
def test_grpo_logs_match_our_rewards(tiny_model, tmp_path, conversational):
    from trl import GRPOTrainer

    trainer = GRPOTrainer(
        model=str(tiny_model),
        reward_funcs=to_trl(REWARDS),
        args=_grpo_config(tmp_path),
        train_dataset=_dataset(conversational),
    )
    assert trainer.reward_func_names == NAMES
    trainer.train()

    logged = [entry for entry in trainer.state.log_history if f"rewards/{NAMES[0]}/mean" in entry]
    assert [entry["step"] for entry in logged] == [1, 2]
    for entry in logged:
        frame = pd.read_parquet(tmp_path / "completions" / f"completions_{entry['step']:05d}.parquet")
        assert len(frame) == 8
        first = _as_python(frame["completion"].iloc[0])
        assert isinstance(first, list) if conversational else isinstance(first, str)
        recomputed = _recompute(frame)
        for name in NAMES:
            ours = np.array([math.nan if v is None else v for v in recomputed[name]], dtype=float)
            # what TRL stored per completion is what the reward gives on that completion
            np.testing.assert_allclose(frame[name].to_numpy(dtype=float), ours, rtol=1e-6, equal_nan=True)
            # and the logged mean is the mean over the completions the reward applies to
            assert entry[f"rewards/{name}/mean"] == pytest.approx(float(np.nanmean(ours)), rel=1e-5)
        texts = [completion_text(_as_python(c)) for c in frame["completion"]]
        assert any(texts), "the tiny model should produce some text"
        # the weighted total TRL logs combines the four rewards with reward_weights
        per_row = np.nansum(np.stack([frame[n].to_numpy(dtype=float) * w for n, w in zip(NAMES, WEIGHTS)]), axis=0)
        assert entry["reward"] == pytest.approx(float(per_row.mean()), rel=1e-5)
    # our error counters went through TRL's log_metric
    assert logged[0]["target_density/errors"] == 0.0


def test_rloo_trainer_takes_our_rewards(tiny_model, tmp_path):
    from trl import RLOOConfig, RLOOTrainer

    args = RLOOConfig(output_dir=str(tmp_path), **{**TINY_RUN, "max_steps": 1, "reward_weights": WEIGHTS})
    trainer = RLOOTrainer(model=str(tiny_model), reward_funcs=to_trl(REWARDS), args=args, train_dataset=_dataset(False))
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "rewards/target_density/mean" in entry]
    assert len(logged) == 1
    for name in NAMES:
        value = logged[0][f"rewards/{name}/mean"]
        assert value is not None and 0.0 <= value <= 1.0
