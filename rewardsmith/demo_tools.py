"""``rewardsmith demo tools``: GRPO with a tool-using environment through TRL's real tool loop, offline, on CPU.

The task: "What is the code for k2?", with the key drawn per row. Each rollout
gets a :class:`KeyValueStore` environment (TRL's ``environment_factory``) whose
``reset`` stores the row's codes for ``k0``, ``k1`` and ``k2`` (three different
digits, drawn per row); its ``lookup`` method is the model's tool. A good
rollout calls ``lookup(key="k2")`` (the key named in its prompt), reads the
code in the tool's result, and answers with it: ``<answer>7</answer>``. Neither
a memorised key nor a memorised code pays: both change from row to row.

The model is the offline tiny model (:func:`~rewardsmith.train.tiny_model.build_tiny_model`)
with Qwen2.5's chat template (so TRL renders the tools and parses the
model's ``<tool_call>`` blocks as it does for Qwen), and a tokenizer that
holds the fixed text (the tools preamble, the system prompt, the question, the
call's JSON around the key, the keys, the roles) as single tokens and knows no
characters but the digits, ``?`` and the line break (33 tokens in all). Its
random weights have std 0.1, about ``1 / sqrt(64)``, so a token can be copied to
a later position. It is first taught only the call and answer FORMAT (a few
seconds of supervised steps on conversations whose key, tool result and answer
are random), then trained with GRPO from a
``rewardsmith train`` config holding ``environment:``, so the run goes through
the same checks and trainer set-up as any other.

Rewards (all read the rollout as a trajectory): ``tool_success`` (the call
ran without an error), ``environment_reward`` (:func:`found_key` of the store:
the key the prompt names was looked up; a function, not a ``get_reward`` method, which TRL
would add as a second reward of its own) and :func:`code_answer` (the final message states the row's code,
which a lookup returned; a code only in the tool's result, an answer with no lookup behind it, or another
key's code copied from its lookup does not count).
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

#: Few keys, each one token: the prompt names one, drawn per row; copying it into the call is what GRPO learns
#: first (chance 1/3 after the warm start).
KEYS = ("k0", "k1", "k2")
#: Codes are single digits (one token each): each row gives its keys three different ones, so looking up the
#: wrong key gives the wrong code. Copying the code from the tool's result into the answer is learned second.
CODES = tuple("0123456789")
SYSTEM = "Use the lookup tool, then answer."
#: Supervised steps of the warm start (the call and answer FORMAT only) and GRPO steps of the demo.
TEACH_STEPS = 300
MAX_STEPS = 500
#: The JSON of a call up to the key's value: one token in the demo tokenizer.
CALL_PREFIX = '{"name": "lookup", "arguments": {"key": "'
CALL_SUFFIX = '"}}'
#: The chat template's fixed words, single tokens so that a call, its result and the answer stay short.
TEMPLATE_WORDS = ("<tool_response>", "</tool_response>", "system", "user", "assistant")
#: The question's fixed words (one token) and the only characters the tokenizer knows besides its words: the
#: codes, the question mark and the template's line breaks. A vocabulary of a few dozen tokens leaves the
#: sampler few wrong tokens to wander into.
QUESTION = "What is the code for "
CHARS = "0123456789?\n"


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
def code_answer(final_message: str, tool_calls: list, code: str) -> RewardResult:
    """The final message answers with the row's code, which a lookup returned: ``<answer>47</answer>``.

    A code only in the tool's result does not count, nor does an answer with no successful lookup
    of it behind it (a guess, a memorised code), nor the code of another key copied from its
    lookup: what pays is looking up the key asked for and copying what came back.

    >>> rollout = [{"role": "assistant", "content": "", "tool_calls": [
    ...     {"type": "function", "function": {"name": "lookup", "arguments": {"key": "k2"}}}]},
    ...     {"role": "tool", "name": "lookup", "content": "47"},
    ...     {"role": "assistant", "content": "<answer>47</answer>"}]
    >>> guess = [{"role": "assistant", "content": "<answer>47</answer>"}]
    >>> code_answer(completions=[rollout, rollout[:2], guess, rollout], code=["47", "47", "47", "12"])
    [1.0, 0.0, 0.0, 0.0]
    """
    returned = [call.result.strip() for call in tool_calls if call.ok]
    if code not in returned:
        return RewardResult(0.0, f"no lookup returned the code asked for ({code})")
    said = final_message.strip()
    if said == f"<answer>{code}</answer>":
        return RewardResult(1.0, "states the code the lookup returned")
    return RewardResult(0.0, f"expected <answer>{code}</answer>, got {said[:40]!r}")


def tool_rows(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Rows of the task: the question, the key it asks for (drawn per row), every key's code (JSON; three
    different digits, drawn per row) and the answer's code.

    >>> row = tool_rows(1)[0]
    >>> sorted(row), row["prompt"][-1]["content"] == f"What is the code for {row['key']}?"
    (['code', 'codes', 'key', 'prompt'], True)
    """
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        codes = dict(zip(KEYS, rng.sample(CODES, len(KEYS))))
        key = rng.choice(KEYS)
        prompt = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{QUESTION}{key}?"}]
        rows.append({"prompt": prompt, "key": key, "codes": json.dumps(codes), "code": codes[key]})
    return rows


def _format_example(row: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """A conversation in the right FORMAT whose key, tool result and answer are drawn at random.

    The warm start learns from these where the call and the answer go, never which key
    or code is right: that is left for GRPO to learn from the rewards.
    """
    call = {"type": "function", "function": {"name": "lookup", "arguments": {"key": rng.choice(KEYS)}}}
    return [
        *row["prompt"],
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "lookup", "content": rng.choice(CODES)},
        {"role": "assistant", "content": f"<answer>{rng.choice(CODES)}</answer>"},
    ]


def _preamble(tokenizer: Any) -> str:
    """The fixed text the chat template writes for the tools (after the system prompt): one token in the demo."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "?"}]
    with_tools = tokenizer.apply_chat_template(messages, tools=[KeyValueStore().lookup], tokenize=False)
    start = with_tools.index(SYSTEM) + len(SYSTEM)
    return with_tools[start : with_tools.index("<|im_end|>", start)]


def _labelled(tokenizer: Any, row: dict[str, Any], rng: random.Random) -> tuple[list[int], list[int]]:
    """Token ids of a format example and its labels: only the model's own turns are learned, as under GRPO.

    The prompt and the tool's turn (its result and the template around it) are masked, as TRL's
    tool loop masks tool results from the loss.
    """
    tools = [KeyValueStore().lookup]
    messages = _format_example(row, rng)

    def length(upto: int, generation_prompt: bool) -> int:
        text = tokenizer.apply_chat_template(
            messages[:upto], tools=tools, tokenize=False, add_generation_prompt=generation_prompt
        )
        return len(tokenizer(text)["input_ids"])

    ids = tokenizer(tokenizer.apply_chat_template(messages, tools=tools, tokenize=False))["input_ids"]
    prompt, call, tool = len(row["prompt"]), len(row["prompt"]) + 1, len(row["prompt"]) + 2
    masked = [(0, length(prompt, True)), (length(call, False), length(tool, True))]
    labels = [-100 if any(a <= i < b for a, b in masked) else t for i, t in enumerate(ids)]
    return ids, labels


def _teach_format(path: Path, tokenizer: Any, steps: int, seed: int) -> None:
    """A few supervised steps on example conversations, so the model starts out emitting tool calls sometimes."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small runs fastest on one thread; more only contend for the CPUs
    model = AutoModelForCausalLM.from_pretrained(path)
    rng = random.Random(seed)
    examples = [_labelled(tokenizer, row, rng) for row in tool_rows(256, seed=seed + 1)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        ids, labels = rng.choice(examples)
        out = model(input_ids=torch.tensor([ids]), labels=torch.tensor([labels]))
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.set_num_threads(threads)
    model.save_pretrained(path)


def build_tool_model(path: str | Path, teach_steps: int = TEACH_STEPS, seed: int = 0) -> Path:
    """The tiny model with Qwen2.5's chat template and the call format briefly taught; returns its folder."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    from rewardsmith.train.tiny_model import build_tiny_model, build_tiny_tokenizer

    path = Path(path)
    marker = path / "rewardsmith_tools_demo.json"
    recipe = {"teach_steps": teach_steps, "seed": seed, "init_std": INIT_STD, "chars": CHARS, "version": 5}
    if marker.exists() and json.loads(marker.read_text()) == recipe:
        return path
    probe = build_tiny_tokenizer()
    probe.chat_template = qwen2_5_chat_template
    words = (
        _preamble(probe),
        CALL_PREFIX,
        CALL_SUFFIX,
        *KEYS,
        QUESTION,
        SYSTEM,
        *TEMPLATE_WORDS,
    )
    tags = ("<tool_call>", "</tool_call>", "<answer>", "</answer>")
    build_tiny_model(path, tags=tags, words=words, chars=CHARS, hidden_size=64, seed=seed, initializer_range=INIT_STD)
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.save_pretrained(path)
    _teach_format(path, tokenizer, teach_steps, seed)
    marker.write_text(json.dumps(recipe))
    return path


def demo_config(
    model: str | Path, output_dir: str | Path, max_steps: int = MAX_STEPS, rows: int = 200, seed: int = 0
) -> dict[str, Any]:
    """The ``rewardsmith train`` config of the demo (``environment:`` names :class:`KeyValueStore`)."""
    return {
        "model": {"name_or_path": str(model)},
        "dataset": {"source": tool_rows(rows, seed=seed), "conversational": True},
        "environment": "rewardsmith.demo_tools:KeyValueStore",
        "rewards": [
            {"name": "tool_success", "weight": 0.5},
            {"name": "environment_reward", "weight": 1.0, "kwargs": {"state": "rewardsmith.demo_tools:found_key"}},
            {"name": "rewardsmith.demo_tools:code_answer", "weight": 2.0},
        ],
        "trainer": {
            "learning_rate": LEARNING_RATE,
            # A small entropy bonus: it kept the answer's digit sampled while the key was learned (with the first
            # code_answer, docs/agents.md); at 0.03 (the format demo's) it spread the answer over the vocabulary.
            "entropy_coef": 0.01,
            # A fresh Adam's first step moves every weight by the full learning rate whatever its
            # gradient; on this tiny model that one step at 1e-3 wiped out the taught call format.
            # Warming up from 0 over 5 steps lets its moments form first.
            "lr_scheduler_type": "constant_with_warmup",
            "warmup_steps": 5,
            "max_steps": max_steps,
            "per_device_train_batch_size": 64,  # 8 prompts x 8 completions
            "num_generations": 8,
            "max_completion_length": 64,
            "max_tool_calling_iterations": 1,
            "mask_truncated_completions": True,
            "temperature": 1.0,
            "logging_steps": 1,
            "gradient_checkpointing": False,
            "save_strategy": "no",
            "report_to": "none",
            "seed": seed,
            "output_dir": str(output_dir),
        },
    }


LEARNING_RATE = 1e-3
#: The random weights' standard deviation, about ``1 / sqrt(64)`` (Llama's 0.02 is sized for models a hundred
#: times wider): with it a prompt's token reaches a later position, so the copies can be learned from reward
#: (the same lever as the format demo's, docs/training.md).
INIT_STD = 0.1


def reward_rise(log_history: list[dict[str, Any]], window: int = 20) -> dict[str, tuple[float, float]]:
    """Each logged reward's mean over the first and the last ``window`` steps: ``{name: (start, end)}``.

    >>> steps = [{"rewards/a/mean": v, "reward": v} for v in (0.1, 0.2, 0.3, 0.7, 0.8, 0.9)]
    >>> {k: tuple(round(x, 2) for x in v) for k, v in reward_rise(steps, window=3).items()}
    {'a': (0.2, 0.8), 'total': (0.2, 0.8)}
    """
    import math

    names = {
        k[len("rewards/") : -len("/mean")]: k
        for e in log_history
        for k in e
        if k.startswith("rewards/") and k.endswith("/mean")
    }
    names["total"] = "reward"
    rise = {}
    for name, key in names.items():
        values = [e[key] for e in log_history if isinstance(e.get(key), float) and math.isfinite(e[key])]
        if values:
            head, tail = values[:window], values[-window:]
            rise[name] = (sum(head) / len(head), sum(tail) / len(tail))
    return rise


def train_tools_demo(
    output_dir: str | Path = "runs/demo_tools",
    max_steps: int = MAX_STEPS,
    teach_steps: int = TEACH_STEPS,
    console: Any = None,
    seed: int = 0,
) -> Any:
    """Build and teach the model, then train it with GRPO through TRL's tool loop; returns the ``TrainResult``."""
    import os

    from rewardsmith.train.plan import cache_dir
    from rewardsmith.train.recipe import run

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    model = build_tool_model(cache_dir() / f"tools-demo-{teach_steps}-{seed}", teach_steps=teach_steps, seed=seed)
    result = run(demo_config(model, output_dir, max_steps, seed=seed), console=console)
    if console is not None:
        for name, (start, end) in reward_rise(result.trainer.state.log_history).items():
            console.print(f"{name:>20}: {start:.3f} -> {end:.3f} (first vs last 20 steps)")
    return result
