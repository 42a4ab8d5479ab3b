"""``rewardsmith demo tools``: GRPO with a tool-using environment through TRL's real tool loop, offline, on CPU.

The task: "What is the code for k3?". Each rollout gets a :class:`KeyValueStore`
environment (TRL's ``environment_factory``) whose ``reset`` stores the row's
codes; its ``lookup`` method is the model's tool. A good rollout calls
``lookup(key="k3")``, reads the code in the tool's result, and answers
``<answer>47</answer>``.

The model is the offline tiny model (:func:`~rewardsmith.train.tiny_model.build_tiny_model`)
with Qwen2.5's chat template (so TRL renders the tools and parses the
model's ``<tool_call>`` blocks as it does for Qwen), and a tokenizer that
holds the fixed text (the tools preamble, the call's JSON up to the key) as
single tokens. It is first taught the call format briefly (a few seconds of
supervised steps on example conversations), then trained with GRPO from a
``rewardsmith train`` config holding ``environment:``, so the run goes through
the same checks and trainer set-up as any other.

Rewards (all read the rollout as a trajectory): ``tool_success`` (the call
ran without an error), ``environment_reward`` (:func:`found_key` of the store:
the right key was looked up; a function, not a ``get_reward`` method, which TRL
would add as a second reward of its own) and :func:`code_answer` (the final message states the code; a
code only in the tool's result does not count).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from rewardsmith.core.functions import reward
from rewardsmith.core.result import RewardResult

__all__ = [
    "KEYS",
    "KeyValueStore",
    "build_tool_model",
    "code_answer",
    "demo_config",
    "found_key",
    "tool_rows",
    "train_tools_demo",
]

KEYS = tuple(f"k{i}" for i in range(10))
SYSTEM = "Use the lookup tool, then answer."
#: The JSON of a call up to the key's value: one token in the demo tokenizer.
CALL_PREFIX = '{"name": "lookup", "arguments": {"key": "'


class KeyValueStore:
    """A key-value store the model reads with its ``lookup`` tool; one per rollout (TRL's environment contract)."""

    def __init__(self) -> None:
        self.codes: dict[str, str] = {}
        self.looked_up: list[str] = []
        self.wanted: str | None = None

    def reset(self, key: str | None = None, codes: str | None = None, **row: Any) -> None:
        """Start a rollout: store the row's codes and remember which key the question asks for."""
        self.codes = json.loads(codes) if codes else {}
        self.looked_up = []
        self.wanted = key

    def lookup(self, key: str) -> str:
        """Look up the code stored under a key.

        Args:
            key: the key, such as k3
        """
        self.looked_up.append(key)
        if key not in self.codes:
            raise KeyError(f"no key {key!r}")
        return self.codes[key]


def found_key(store: KeyValueStore) -> float:
    """1.0 when the store was asked for the key the question names, else 0.0 (what ``environment_reward`` reads).

    A function of the environment rather than a method: TRL offers every public method to the model as a tool.
    """
    return float(store.wanted in store.looked_up)


@reward
def code_answer(final_message: str, code: str) -> RewardResult:
    """The final message answers with the code: ``<answer>47</answer>``; a code only in a tool result does not count.

    >>> rollout = [{"role": "assistant", "content": "", "tool_calls": [
    ...     {"type": "function", "function": {"name": "lookup", "arguments": {"key": "k3"}}}]},
    ...     {"role": "tool", "name": "lookup", "content": "47"},
    ...     {"role": "assistant", "content": "<answer>47</answer>"}]
    >>> code_answer(completions=[rollout, rollout[:2]], code=["47", "47"])
    [1.0, 0.0]
    """
    said = final_message.strip()
    if said == f"<answer>{code}</answer>":
        return RewardResult(1.0, "states the code")
    return RewardResult(0.0, f"expected <answer>{code}</answer>, got {said[:40]!r}")


def tool_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Rows of the task: the question, the key it asks for, every key's code (JSON) and the answer's code.

    >>> row = tool_rows(1)[0]
    >>> sorted(row), row["prompt"][-1]["content"].startswith("What is the code for k")
    (['code', 'codes', 'key', 'prompt'], True)
    """
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        codes = {k: str(rng.randint(10, 99)) for k in KEYS}
        key = rng.choice(KEYS)
        prompt = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"What is the code for {key}?"}]
        rows.append({"prompt": prompt, "key": key, "codes": json.dumps(codes), "code": codes[key]})
    return rows


def _conversation(row: dict[str, Any]) -> list[dict[str, Any]]:
    call = {"type": "function", "function": {"name": "lookup", "arguments": {"key": row["key"]}}}
    return [
        *row["prompt"],
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "lookup", "content": row["code"]},
        {"role": "assistant", "content": f"<answer>{row['code']}</answer>"},
    ]


def _preamble(tokenizer: Any) -> str:
    """The fixed text the chat template writes for the tools (after the system prompt): one token in the demo."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "?"}]
    with_tools = tokenizer.apply_chat_template(messages, tools=[KeyValueStore().lookup], tokenize=False)
    start = with_tools.index(SYSTEM) + len(SYSTEM)
    return with_tools[start : with_tools.index("<|im_end|>", start)]


def _teach_format(path: Path, tokenizer: Any, steps: int, seed: int) -> None:
    """A few supervised steps on example conversations, so the model starts out emitting tool calls sometimes."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small runs fastest on one thread; more only contend for the CPUs
    model = AutoModelForCausalLM.from_pretrained(path)
    tools = [KeyValueStore().lookup]
    texts = []
    for row in tool_rows(64, seed=seed + 1):
        full = tokenizer.apply_chat_template(_conversation(row), tools=tools, tokenize=False)
        prompt = tokenizer.apply_chat_template(row["prompt"], tools=tools, tokenize=False, add_generation_prompt=True)
        texts.append((tokenizer(prompt)["input_ids"], tokenizer(full)["input_ids"]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    rng = random.Random(seed)
    for _ in range(steps):
        prompt_ids, ids = rng.choice(texts)
        labels = [-100] * len(prompt_ids) + ids[len(prompt_ids) :]
        out = model(input_ids=torch.tensor([ids]), labels=torch.tensor([labels]))
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.set_num_threads(threads)
    model.save_pretrained(path)


def build_tool_model(path: str | Path, teach_steps: int = 150, seed: int = 0) -> Path:
    """The tiny model with Qwen2.5's chat template and the call format briefly taught; returns its folder."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    from rewardsmith.train.tiny_model import build_tiny_model, build_tiny_tokenizer

    path = Path(path)
    marker = path / "rewardsmith_tools_demo.json"
    recipe = {"teach_steps": teach_steps, "seed": seed, "version": 2}
    if marker.exists() and json.loads(marker.read_text()) == recipe:
        return path
    probe = build_tiny_tokenizer()
    probe.chat_template = qwen2_5_chat_template
    words = (_preamble(probe), CALL_PREFIX, "What is the code for ", "<tool_response>", "</tool_response>")
    tags = ("<tool_call>", "</tool_call>", "<answer>", "</answer>")
    build_tiny_model(path, tags=tags, words=words, hidden_size=64, seed=seed)
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.save_pretrained(path)
    _teach_format(path, tokenizer, teach_steps, seed)
    marker.write_text(json.dumps(recipe))
    return path


def demo_config(model: str | Path, output_dir: str | Path, max_steps: int = 40, rows: int = 200) -> dict[str, Any]:
    """The ``rewardsmith train`` config of the demo (``environment:`` names :class:`KeyValueStore`)."""
    return {
        "model": {"name_or_path": str(model)},
        "dataset": {"source": tool_rows(rows), "conversational": True},
        "environment": "rewardsmith.demo_tools:KeyValueStore",
        "rewards": [
            {"name": "tool_success", "weight": 0.5},
            {"name": "environment_reward", "weight": 0.5, "kwargs": {"state": "rewardsmith.demo_tools:found_key"}},
            {"name": "rewardsmith.demo_tools:code_answer", "weight": 1.0},
        ],
        "trainer": {
            "learning_rate": 5e-4,
            "lr_scheduler_type": "constant",
            "max_steps": max_steps,
            "per_device_train_batch_size": 16,
            "num_generations": 8,
            "max_completion_length": 64,
            "max_tool_calling_iterations": 1,
            "temperature": 1.0,
            "logging_steps": 1,
            "gradient_checkpointing": False,
            "save_strategy": "no",
            "report_to": "none",
            "seed": 0,
            "output_dir": str(output_dir),
        },
    }


def train_tools_demo(
    output_dir: str | Path = "runs/demo_tools", max_steps: int = 40, teach_steps: int = 150, console: Any = None
) -> Any:
    """Build and teach the model, then train it with GRPO through TRL's tool loop; returns the ``TrainResult``."""
    import os

    from rewardsmith.train.plan import cache_dir
    from rewardsmith.train.recipe import run

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    model = build_tool_model(cache_dir() / f"tools-demo-{teach_steps}", teach_steps=teach_steps)
    return run(demo_config(model, output_dir, max_steps), console=console)
