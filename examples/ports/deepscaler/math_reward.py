"""A math reward in the style of DeepScaleR's ``rewards/math_reward.py`` (written for rewardsmith, not copied).

``RewardMathFn`` reads the answer after the reasoning (the text after
``</think>``; a response without both ``<think>`` and ``</think>`` is a format
error), takes its last ``\\boxed{}`` and compares it with each reference
answer (a string or a list of strings; a boxed reference is unboxed first).
``deepscaler_reward_fn(solution_str, ground_truth, enable_llm=False)`` is the
function a trainer calls: it returns whether the answer is right.
"""

from math_utils import extract_answer, grade_answer
from reward_types import RewardConfig, RewardFn, RewardInput, RewardOutput, RewardType

THOUGHT_DELIMITER_START = "<think>"
THOUGHT_DELIMITER_END = "</think>"


class RewardMathFn(RewardFn):
    """Grades a math response: its final boxed answer against the reference answers."""

    def __call__(self, input: RewardInput) -> RewardOutput:
        if input.problem_type != RewardType.MATH:
            raise ValueError(f"RewardMathFn grades MATH problems, not {input.problem_type}")
        response = input.model_response
        if THOUGHT_DELIMITER_START not in response or THOUGHT_DELIMITER_END not in response:
            return RewardOutput(reward=self.config.format_error_reward, is_correct=False)
        solution = response.split(THOUGHT_DELIMITER_END)[1]
        model_answer = extract_answer(solution)
        if model_answer is None:
            return RewardOutput(reward=self.config.format_error_reward, is_correct=False)

        truths = input.ground_truth.get("answer")
        if truths is None:
            return RewardOutput(reward=self.config.unk_error_reward, is_correct=False)
        if isinstance(truths, (str, int, float)):
            truths = [truths]
        references = []
        for truth in map(str, truths):
            unboxed = extract_answer(truth) if "\\boxed" in truth else truth
            if unboxed is not None:
                references.append(unboxed)
        if not references:
            return RewardOutput(reward=self.config.unk_error_reward, is_correct=False)

        if any(grade_answer(model_answer, reference) for reference in references):
            return RewardOutput(reward=self.config.correct_reward, is_correct=True)
        if self.config.use_math_orm:
            raise NotImplementedError("grading with a language model is not part of this port: enable_llm=False")
        return RewardOutput(reward=self.config.incorrect_reward, is_correct=False)


def deepscaler_reward_fn(solution_str, ground_truth, enable_llm=False):
    config = RewardConfig()
    config.use_math_orm = enable_llm
    reward_fn = RewardMathFn(config)
    output = reward_fn(RewardInput(problem=solution_str, problem_type=RewardType.MATH, model_response=solution_str,
                                   ground_truth={"answer": ground_truth}))  # fmt: skip
    return output.is_correct
