"""Run by tests/test_openenv.py in a subprocess whose path starts with OpenEnv's folder: OpenEnv rubrics both ways.

Prints one JSON object of what it measured. OpenEnv is imported inside :func:`main` only, so that collecting
this file (pytest reads every module under tests/ for doctests) needs no OpenEnv.
"""

from __future__ import annotations

import asyncio
import json


def main() -> None:
    from openenv.core.env_server.types import Action, Observation
    from openenv.core.rubrics import Gate, Rubric, WeightedSum

    from rewardsmith import get_reward
    from rewardsmith.core.turns import Turn, turn_reward
    from rewardsmith.integrations.openenv import openenv_rubric, openenv_trajectory_rubric, rubric_reward

    class Answer(Action):
        """An action of a text environment: the model's message."""

        message: str

    class Said(Observation):
        """An observation of a text environment: what it answered."""

        text: str = ""

    class Exact(Rubric):
        """An OpenEnv rubric: 1 when the message is the metadata's answer exactly."""

        def forward(self, action, observation) -> float:
            return float(action.message.strip() == observation.metadata["answer"])

    class Later(Rubric):
        """An async OpenEnv rubric (what an LLM judge is)."""

        async def forward(self, action, observation) -> float:
            await asyncio.sleep(0)
            return 0.5 if "18" in action.message else 0.0

    @turn_reward(aggregate="sum")
    def polite(turn: Turn) -> float:
        """1 for each turn that says please."""
        return float("please" in turn.content)

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
    # a whole episode scored as a rollout: a reward on its last answer, discounted back; a per-turn reward per step
    episode = [
        (Answer(message="let me think, please"), Said(text="go on")),
        (Answer(message="9 * 2 ..."), Said(text="and?")),
        (Answer(message="#### 18, please"), Said(done=True, metadata={"answer": "18"})),
    ]
    final = openenv_trajectory_rubric("gsm8k_accuracy", gamma=0.5)
    out["steps"] = [final(a, o) for a, o in episode]
    out["discounted"] = final.compute_step_rewards()
    per_turn = openenv_trajectory_rubric(polite)
    out["per_turn_steps"] = [per_turn(a, o) for a, o in episode]
    out["per_turn"] = per_turn.compute_step_rewards()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
