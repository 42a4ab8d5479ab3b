"""Run by tests/test_openenv.py in a subprocess whose path starts with OpenEnv's folder: OpenEnv rubrics both ways.

Prints one JSON object of what it measured.
"""

from __future__ import annotations

import asyncio
import json

from openenv.core.env_server.types import Action, Observation
from openenv.core.rubrics import Gate, Rubric, WeightedSum

from rewardsmith import get_reward
from rewardsmith.integrations.openenv import openenv_rubric, rubric_reward


class Answer(Action):
    """An action of a text environment: the model's message."""

    message: str


class Exact(Rubric):
    """An OpenEnv rubric: 1 when the message is the metadata's answer exactly."""

    def forward(self, action, observation) -> float:
        return float(action.message.strip() == observation.metadata["answer"])


class Later(Rubric):
    """An async OpenEnv rubric (what an LLM judge is)."""

    async def forward(self, action, observation) -> float:
        await asyncio.sleep(0)
        return 0.5 if "18" in action.message else 0.0


def main() -> None:
    out = {}
    right = Observation(done=True, metadata={"answer": "18"})
    # a rewardsmith reward as an OpenEnv rubric, composed with OpenEnv's own containers
    accuracy = openenv_rubric("gsm8k_accuracy")
    out["is_rubric"] = isinstance(accuracy, Rubric)
    out["accuracy"] = [accuracy(Answer(message=m), right) for m in ["so #### 18", "#### 17", "no number"]]
    out["reason"] = accuracy.last_result.reason
    both = WeightedSum(
        [openenv_rubric([{"name": "gsm8k_accuracy", "weight": 2.0}, "think_format"]), Exact()], weights=[0.5, 0.5]
    )
    out["weighted"] = both(Answer(message="<think>9*2</think><answer>18</answer>"), right)
    out["gated"] = Gate(openenv_rubric("think_format"), threshold=1.0)(Answer(message="18"), right)
    out["children"] = [name for name, _ in both.named_children()]
    # an OpenEnv rubric as a rewardsmith reward
    exact = rubric_reward(Exact(), action=lambda text: Answer(message=text))
    out["exact_name"] = exact.name
    out["exact"] = exact(completions=["18", " 18 ", "17"], answer=["18", "18", "18"])
    later = rubric_reward(Later(), action=lambda text: Answer(message=text))
    out["async"] = later(completions=["18", "17"], answer=["18", "18"])
    out["explain"] = [r.score for r in get_reward(exact).explain(completions=["18"], answer=["18"])]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
