"""GRPO built by hand with rewardsmith rewards, in the style of TRL's cookbook.

Everything `rewardsmith train` does from a config, written out: a dataset
prepared for TRL, rewards with settings (a gate, a custom per-sample
reward), and TRL's own GRPOConfig and GRPOTrainer.

    python examples/grpo_by_hand.py                      # Qwen2.5-0.5B-Instruct on GSM8K (GPU, Hub access)
    python examples/grpo_by_hand.py --tiny --data ../shared/data/gsm8k_train.jsonl --max-steps 2   # offline check
"""

from __future__ import annotations

import argparse

from trl import GRPOConfig, GRPOTrainer

from rewardsmith import get_reward, reward
from rewardsmith.compose import gate
from rewardsmith.data import prepare_dataset


@reward
def concise(completion: str, max_words: int = 200) -> float:
    """1.0 up to max_words words, then falling off: long rambling answers cost reward."""
    words = len(completion.split())
    return 1.0 if words <= max_words else max_words / words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="use the offline tiny model (for a quick check)")
    parser.add_argument("--data", default="openai/gsm8k", help="Hub name or local GSM8K file")
    parser.add_argument("--max-steps", type=int, default=-1)
    parser.add_argument("--output-dir", default="runs/grpo_by_hand")
    args = parser.parse_args()

    dataset = prepare_dataset(
        args.data,
        "train",
        config="main" if args.data == "openai/gsm8k" else None,
        converter="gsm8k",
        system_prompt="Think inside <think> </think>, then give the final number inside <answer> </answer>.",
        max_samples=64 if args.tiny else None,
    )

    rewards = [
        get_reward("think_format"),  # reasoning then answer, each exactly once
        gate("think_format", "gsm8k_accuracy"),  # accuracy only counts in the right format
        concise.configure(max_words=150),
    ]

    if args.tiny:
        from rewardsmith.train.tiny_model import build_tiny_model

        model = str(build_tiny_model("runs/tiny-model"))
        sizes = dict(per_device_train_batch_size=8, num_generations=4, max_completion_length=16, learning_rate=1e-3)
    else:
        model = "Qwen/Qwen2.5-0.5B-Instruct"
        sizes = dict(per_device_train_batch_size=16, num_generations=8, max_completion_length=512, learning_rate=1e-5)

    config = GRPOConfig(
        output_dir=args.output_dir,
        max_steps=args.max_steps,
        reward_weights=[0.2, 1.0, 0.1],
        logging_steps=1,
        save_strategy="no",
        gradient_checkpointing=not args.tiny,
        bf16=not args.tiny,
        report_to="none",
        **sizes,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=rewards, args=config, train_dataset=dataset)
    trainer.train()
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
