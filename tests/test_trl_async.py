"""rewardsmith rewards under TRL's AsyncGRPOTrainer, scored by TRL's own async scoring code on CPU.

``_AsyncRolloutLoop._score_group`` is what the trainer's rollout worker runs on
each group of rollouts; it needs no vLLM (only generation does). The trainer
itself cannot be built here: ``AsyncRolloutWorker`` refuses to start without
vLLM, which needs a GPU machine.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing as mp
import pickle
import queue

import pytest

pytest.importorskip("trl.experimental.async_grpo")

from trl.experimental.async_grpo.async_grpo_trainer import _reduce_metric
from trl.experimental.async_grpo.async_rollout_worker import (
    AsyncRolloutWorker,
    RolloutGroup,
    TrainingSequence,
    _AsyncRolloutLoop,
)

from rewardsmith import get_reward
from rewardsmith.integrations import trl_async
from rewardsmith.integrations.trl_async import async_reward_funcs, async_warnings, keep_reward_metrics
from rewardsmith.train.tiny_model import build_tiny_tokenizer

CONFIG = [{"name": "think_format", "weight": 0.5}, {"name": "gsm8k_accuracy", "weight": 2.0}]
RIGHT = "<think>9*2</think><answer>18</answer>"
COMPLETIONS = [RIGHT, "<answer>18</answer>", "<think>hm</think><answer>17</answer>", "no idea"]


@pytest.fixture(autouse=True, scope="module")
def _accelerate_state():
    """The worker's child process sets up accelerate's single-process state before its loop logs; so does this."""
    from accelerate import PartialState

    PartialState(cpu=True)


def _loop(cls: type, reward_funcs: list) -> _AsyncRolloutLoop:
    from datasets import Dataset
    from trl.chat_template_utils import qwen2_5_chat_template

    tokenizer = build_tiny_tokenizer()
    tokenizer.chat_template = qwen2_5_chat_template  # a template TRL knows how to parse calls from
    ctx = mp.get_context("spawn")
    return cls(
        model_name="tiny",
        dataset=Dataset.from_list([{"prompt": [{"role": "user", "content": "9*2?"}], "answer": "18"}]),
        reward_funcs=reward_funcs,
        processing_class=tokenizer,
        eos_token_ids=[3],
        rollout_buffer=queue.Queue(),
        model_version_value=ctx.Value("i", 0),
        heartbeat_value=ctx.Value("d", 0.0),
        failed_event=ctx.Event(),
        exception_info_queue=queue.Queue(maxsize=1),
        metrics_queue=queue.Queue(),
        num_generations=len(COMPLETIONS),
    )


def _group(completions: list, answers: list) -> RolloutGroup:
    n = len(completions)
    return RolloutGroup(
        prompts=[[{"role": "user", "content": "9*2?"}]] * n,
        reward_kwargs={"answer": answers},
        completions=[[{"role": "assistant", "content": c}] for c in completions],
        completions_ids=[[5, 6]] * n,
        completions_sequences=[[TrainingSequence([1, 5, 6], [0, 1, 1], [0.0, -0.1, -0.2], f"r{i}")] for i in range(n)],
        tool_call_counts=[0] * n,
        tool_failure_counts=[0] * n,
        model_version=0,
        group_id=1,
        env_rewards=[None] * n,
        rollout_rewards=[None] * n,
    )


def _drain(loop: _AsyncRolloutLoop) -> dict[str, list]:
    """What the trainer's log() appends to its metrics from the worker's queue."""
    out: dict[str, list] = {}
    while True:
        try:
            item = loop._metrics_queue.get_nowait()
        except queue.Empty:
            return out
        for key, value in item.items():
            out.setdefault(key, []).append(value)


def test_trls_own_scoring_applies_the_configs_weights_through_one_combined_reward():
    funcs = async_reward_funcs(CONFIG)
    assert [f.name for f in funcs] == ["think_format+gsm8k_accuracy"]
    loop = _loop(trl_async.RewardsmithRolloutLoop, funcs)
    samples = asyncio.run(loop._score_group(_group(COMPLETIONS, ["18"] * 4)))
    assert [s.metrics["reward"] for s in samples] == [2.5, 2.0, 0.5, 0.0]  # 0.5*format + 2*accuracy
    assert samples[0].metrics["rewards/think_format+gsm8k_accuracy"] == 2.5
    # What the plain async trainer does with the same two rewards: each has weight 1
    plain = _loop(_AsyncRolloutLoop, [get_reward("think_format"), get_reward("gsm8k_accuracy")])
    unweighted = asyncio.run(plain._score_group(_group(COMPLETIONS, ["18"] * 4)))
    assert [s.metrics["reward"] for s in unweighted] == [2.0, 1.0, 1.0, 0.0]


def test_each_components_mean_reaches_the_trainers_logs_through_the_metrics_queue():
    loop = _loop(trl_async.RewardsmithRolloutLoop, async_reward_funcs(CONFIG))
    asyncio.run(loop._score_group(_group(COMPLETIONS, ["18"] * 4)))
    asyncio.run(loop._score_group(_group(COMPLETIONS[:2], ["18"] * 2)))
    logged = _drain(loop)
    fmt = _reduce_metric("think_format+gsm8k_accuracy/think_format", logged["think_format+gsm8k_accuracy/think_format"])
    acc = logged["think_format+gsm8k_accuracy/gsm8k_accuracy"]
    assert fmt == pytest.approx((2 / 4 + 1 / 2) / 2)  # each group's mean, averaged as the trainer reduces it
    assert _reduce_metric("x", acc) == pytest.approx((2 / 4 + 2 / 2) / 2)
    assert logged["think_format+gsm8k_accuracy/gsm8k_accuracy/applicable"] == [(1.0, 1.0), (1.0, 1.0)]
    plain = _loop(_AsyncRolloutLoop, async_reward_funcs(CONFIG))
    asyncio.run(plain._score_group(_group(COMPLETIONS, ["18"] * 4)))
    assert not any("think_format" in k for k in _drain(plain))  # TRL's loop passes no log_metric


def test_none_is_handled_as_trl_does_a_rollout_no_component_scores_gets_no_advantage():
    funcs = async_reward_funcs(["gsm8k_accuracy", {"name": "tool_success", "weight": 3.0}])
    loop = _loop(trl_async.RewardsmithRolloutLoop, funcs)
    samples = asyncio.run(loop._score_group(_group(COMPLETIONS, ["18", "18", "not a number", "not a number"])))
    rewards = [s.metrics["reward"] for s in samples]
    assert rewards[:2] == [1.0, 1.0]  # tool_success is None (no calls): it adds 0, as TRL's nansum
    assert all(math.isnan(r) for r in rewards[2:])  # nothing scored these: NaN, advantage 0 in TRL
    assert [s.advantage for s in samples[2:]] == [0.0, 0.0]


def test_one_reward_of_weight_one_is_passed_as_it_is_and_everything_pickles_for_the_spawned_worker():
    (only,) = async_reward_funcs("gsm8k_accuracy")
    assert only.name == "gsm8k_accuracy"
    funcs = async_reward_funcs(CONFIG)
    assert pickle.loads(pickle.dumps(funcs))[0](completions=[RIGHT], answer=["18"]) == [2.5]
    assert pickle.loads(pickle.dumps(trl_async.RewardsmithRolloutLoop)) is trl_async.RewardsmithRolloutLoop


def test_what_cannot_be_kept_is_warned_about_before_training():
    notes = async_warnings(
        ["gsm8k_accuracy", "environment_reward"],
        args={"multi_objective_aggregation": "normalize_then_sum", "reward_weights": [1.0, 2.0]},
    )
    assert len(notes) == 3
    assert notes[0].startswith("reward environment_reward reads environment: TRL's async trainer does not pass it")
    assert "multi_objective_aggregation='normalize_then_sum'" in notes[1] and "reward_weights" in notes[2]
    with pytest.warns(UserWarning, match="environment_reward reads environment"):
        async_reward_funcs(["gsm8k_accuracy", "environment_reward"])
    assert async_warnings(CONFIG) == []
    with pytest.raises(Exception, match="one weight per reward"):
        async_reward_funcs(["gsm8k_accuracy"], weights=[1.0, 2.0])


def test_keep_reward_metrics_sets_the_class_the_worker_spawns():
    # AsyncRolloutWorker() refuses to start without vLLM, so its object is made without __init__ here; the
    # attributes read are the two the worker's start() uses (the class it spawns, and whether it runs).
    worker = AsyncRolloutWorker.__new__(AsyncRolloutWorker)
    worker._process = None

    class Trainer:
        rollout_worker = worker

    keep_reward_metrics(Trainer())
    assert worker._loop_cls is trl_async.RewardsmithRolloutLoop
    assert AsyncRolloutWorker._loop_cls is _AsyncRolloutLoop  # the class itself is left alone
