"""A real GRPOTrainer trains two steps on data from each built-in converter (offline tiny model).

Each run uses a reward that reads the converter's columns and records what TRL
passed it, so the test proves that the columns reach the rewards with the right
values for the right prompts, not only that training does not crash.
"""

from __future__ import annotations

import pytest
from trl_helpers import tiny_grpo_config

from rewardsmith import reward, to_trl
from rewardsmith.core.inputs import prompt_text
from rewardsmith.data import prepare_dataset

pytestmark = pytest.mark.slow

SYSTEM = "Think inside <think></think>, answer inside <answer></answer>."
SEEN: list[dict] = []


@reward
def reads_answer(prompt_messages: list, answer: str, solution: str) -> float:
    SEEN.append({"prompt": prompt_messages, "answer": answer, "solution": solution})
    return 0.0


@reward
def reads_math(prompt_messages: list, answer: str, level: int) -> float:
    SEEN.append({"prompt": prompt_messages, "answer": answer, "level": level})
    return 0.0


@reward
def reads_countdown(prompt_messages: list, nums: list, target: int) -> float:
    SEEN.append({"prompt": prompt_messages, "nums": nums, "target": target})
    return 0.0


@reward
def reads_generic(prompt_messages: list, answer: str, task: str) -> float:
    SEEN.append({"prompt": prompt_messages, "answer": answer, "task": task})
    return 0.0


@reward
def reads_chat(prompt_messages: list, task: str, **columns) -> float:
    SEEN.append({"prompt": prompt_messages, "task": task, "columns": sorted(columns)})
    return 0.0


COUNTDOWN = [{"nums": [n, n + 1, 2], "target": 2 * n + 1 + 2} for n in range(1, 9)]
GENERIC = [{"instruction": f"Repeat {w!r}.", "output": w, "task": "echo"} for w in "abcdefgh"]
CHAT = [
    {
        "messages": [
            {"role": "system", "content": "old system"},
            {"role": "user", "content": f"Count to {n}."},
            {"role": "assistant", "content": " ".join(map(str, range(1, n + 1)))},
        ],
        "task": "count",
    }
    for n in range(1, 9)
]


def _dataset(name: str, shared_data):
    common = {"system_prompt": SYSTEM, "max_samples": 8}
    if name == "gsm8k":
        return prepare_dataset(shared_data / "gsm8k_test.jsonl", split="test", converter="gsm8k", **common)
    if name == "math":
        return prepare_dataset(shared_data / "math500_test.jsonl", converter="math", **common)
    if name == "countdown":
        return prepare_dataset(COUNTDOWN, converter="countdown", **common)
    if name == "generic":
        return prepare_dataset(GENERIC, prompt_key="instruction", answer_key="output", **common)
    return prepare_dataset(CHAT, converter="chat", **common)


REWARDS = {
    "gsm8k": (reads_answer, ("answer", "solution")),
    "math": (reads_math, ("answer", "level")),
    "countdown": (reads_countdown, ("nums", "target")),
    "generic": (reads_generic, ("answer", "task")),
    "chat": (reads_chat, ("task",)),
}


@pytest.mark.parametrize("name", list(REWARDS))
def test_grpo_trains_on_each_converter_and_rewards_get_its_columns(name, tiny_model, shared_data, tmp_path):
    from trl import GRPOTrainer

    dataset = _dataset(name, shared_data)
    fn, columns = REWARDS[name]
    args = tiny_grpo_config(tmp_path, per_device_train_batch_size=4, num_generations=2)
    SEEN.clear()
    trainer = GRPOTrainer(model=str(tiny_model), reward_funcs=to_trl([fn]), args=args, train_dataset=dataset)
    trainer.train()

    logged = [entry for entry in trainer.state.log_history if f"rewards/{fn.name}/mean" in entry]
    assert [entry["step"] for entry in logged] == [1, 2]
    assert len(SEEN) == 2 * 4  # two steps of four completions, each scored with the columns of its own row

    by_user_text = {prompt_text(row["prompt"]): row for row in dataset}
    assert len(by_user_text) == len(dataset) == 8
    for seen in SEEN:
        prompt = seen["prompt"]
        assert prompt[0] == {"role": "system", "content": SYSTEM}  # conversational, the system prompt once
        assert sum(m["role"] == "system" for m in prompt) == 1
        row = by_user_text[prompt_text(prompt)]
        for column in columns:
            assert seen[column] == row[column], (name, column)
    if name == "gsm8k":
        assert all(s["solution"].rsplit("####", 1)[1].strip().replace(",", "") == s["answer"] for s in SEEN)
    if name == "countdown":
        assert all(isinstance(s["target"], int) and all(isinstance(n, int) for n in s["nums"]) for s in SEEN)
    if name == "chat":
        # the reference completion is for evaluation: TRL keeps a `completion` column away from rewards
        assert all("completion" not in s["columns"] for s in SEEN)
