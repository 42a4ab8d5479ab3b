"""The real built-in model on the CPU: torch threads (1 vs 2) and attention (eager vs SDPA), measured in one run.

builtin:smollm2-135m-instruct (converted once into the cache if needed) is
loaded twice, once per attention implementation. Each case (threads x
attention) is timed round-robin, so that the machine's other work hits all
cases alike:

* generation: 4 chat prompts, 16 new tokens each (greedy, no early stop),
  as tokens per second;
* a GRPO step: TRL's GRPOTrainer with LoRA (r=16, all linear layers), 2
  prompts x 2 completions of up to 16 tokens, one optimizer step, as seconds
  per step (wall and CPU).

``--rounds N`` (default 2) rounds of generation, ``--step-rounds N`` (default
1) of GRPO steps, ``--skip generation|step`` to leave one out.

Each measurement is printed as it is taken (two threads on a busy machine
can be very slow), then the table.

Printed: medians, and ratios against 1 thread + eager measured in the same
run. The CPU defaults (one torch thread in the demos and the tests, eager
attention in the real model's config) follow the faster cases here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch

from rewardsmith.train.builtin_models import resolve_model

THREADS = (1, 2)
ATTENTION = ("eager", "sdpa")
PROMPTS = [f"What is {a} + {b}? Answer with just the number." for a, b in [(3, 4), (12, 30), (5, 8), (41, 7)]]


def _chat(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


def _generation(model, tokenizer):
    tokenizer.padding_side = "left"
    batch = tokenizer.apply_chat_template(
        [_chat(p) for p in PROMPTS], add_generation_prompt=True, padding=True, return_dict=True, return_tensors="pt"
    )

    def once(tokens: int = 16) -> int:
        with torch.no_grad():
            model.generate(**batch, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False)
        return len(PROMPTS) * tokens

    return once


def _grpo_step(model, tokenizer):
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    def length_reward(completions, **kwargs):
        return [len(c[0]["content"]) % 5 / 5 for c in completions]

    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(),
        use_cpu=True,
        report_to="none",
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=16,
        max_steps=1,
        learning_rate=1e-4,
        logging_steps=1,
        save_strategy="no",
        gradient_checkpointing=False,
        bf16=False,
        disable_tqdm=True,
    )
    train = Dataset.from_list([{"prompt": _chat(p)} for p in PROMPTS[:2]] * 2)
    lora = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[length_reward],
        args=args,
        train_dataset=train,
        processing_class=tokenizer,
        peft_config=lora,
    )

    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # the per-step log lines; the timings are printed below

    def once(tokens: int = 16) -> int:
        trainer.train()
        return 1

    return once


def _measure(title: str, cases: dict, rounds: int) -> dict:
    wall: dict = {key: [] for key in cases}
    cpu: dict = {key: [] for key in cases}
    work: dict = {}
    warmed = set()
    for fn in cases.values():  # warm up each function once (lazy initialisation, the first step's setup)
        if id(fn) not in warmed:
            torch.set_num_threads(1)
            fn(2)
            warmed.add(id(fn))
    for round_ in range(rounds):
        for key, fn in cases.items():
            torch.set_num_threads(key[0])
            started, cpu_started = time.perf_counter(), time.process_time()
            work[key] = fn()
            wall[key].append(time.perf_counter() - started)
            cpu[key].append(time.process_time() - cpu_started)
            print(
                f"  {title}, round {round_ + 1}, {key[0]} thread(s), {key[1]}: {wall[key][-1]:.1f} s wall, "
                f"{cpu[key][-1]:.1f} CPU-s",
                flush=True,
            )
    return {key: (work[key], statistics.median(wall[key]), statistics.median(cpu[key])) for key in cases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--step-rounds", type=int, default=1)
    parser.add_argument("--skip", choices=["generation", "step"])
    options = parser.parse_args()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_model("builtin:smollm2-135m-instruct")
    print(f"model: {path}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    models = {a: AutoModelForCausalLM.from_pretrained(path, attn_implementation=a) for a in ATTENTION}
    tokenizers = {a: AutoTokenizer.from_pretrained(path) for a in ATTENTION}
    baseline = (1, "eager")
    parts = {
        "generation": ("generation", _generation, "tokens/s", options.rounds),
        "step": ("GRPO step", _grpo_step, "s/step", options.step_rounds),
    }
    for title, build, unit, rounds in (part for name, part in parts.items() if name != options.skip):
        built = {a: build(models[a], tokenizers[a]) for a in ATTENTION}  # one trainer per model: LoRA wraps it
        cases = {(t, a): built[a] for t in THREADS for a in ATTENTION}
        results = _measure(title, cases, rounds)
        print(f"\n{title} (median of {rounds}; ratio: speed against {baseline[0]} thread + {baseline[1]})")
        print(f"{'threads':>7} {'attention':>9} {unit:>10} {'CPU-s':>7} {'speed ratio':>11}")
        base_work, base_wall, _ = results[baseline]
        for (threads, attention), (work, wall, cpu) in results.items():
            value = work / wall if unit == "tokens/s" else wall
            ratio = (work / wall) / (base_work / base_wall)
            print(f"{threads:>7} {attention:>9} {value:>10.2f} {cpu:>7.1f} {ratio:>10.2f}x", flush=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
