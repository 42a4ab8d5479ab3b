"""A rewardsmith reward with TRL's RLOOTrainer: the same reward interface as GRPO.

python examples/rloo_basic.py --tiny --max-steps 1    # offline, on the tiny model and the bundled task
python examples/rloo_basic.py --model Qwen/Qwen2.5-0.5B-Instruct
"""

from __future__ import annotations

import argparse
from importlib import resources

from trl import RLOOConfig, RLOOTrainer

from rewardsmith import reward
from rewardsmith.data import prepare_dataset


@reward
def says_the_digit(completion: str, answer: str) -> float:
    """1.0 when the completion contains the digit the prompt asks for, and little else."""
    if answer not in completion:
        return 0.0
    return 1.0 / max(1, len(completion.strip()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="use the offline tiny model")
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct")
    parser.add_argument("--max-steps", type=int, default=100)
    parser.add_argument("--output-dir", default="runs/rloo_basic")
    args = parser.parse_args()

    task = resources.files("rewardsmith.data").joinpath("samples/copy_digits.jsonl")
    dataset = prepare_dataset(str(task), conversational=not args.tiny, max_samples=64)
    model = args.model
    if args.tiny:
        from rewardsmith.train.tiny_model import build_tiny_model

        model = str(build_tiny_model("runs/tiny-model"))

    config = RLOOConfig(
        output_dir=args.output_dir,
        max_steps=args.max_steps,
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=8,
        learning_rate=1e-3 if args.tiny else 1e-5,
        logging_steps=1,
        save_strategy="no",
        gradient_checkpointing=False,
        bf16=False,
        report_to="none",
    )
    trainer = RLOOTrainer(model=model, reward_funcs=[says_the_digit], args=config, train_dataset=dataset)
    trainer.train()
    print("rewards/says_the_digit/mean:", trainer.state.log_history[-2].get("rewards/says_the_digit/mean"))


if __name__ == "__main__":
    main()
