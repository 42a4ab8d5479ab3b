"""A math reward in the style of DeepScaleR's ``deepscaler_reward_fn`` (written for the tests, not copied)."""

import re


def deepscaler_reward_fn(solution_str, ground_truth, enable_llm=False):
    if "</think>" not in solution_str:
        return False
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", solution_str.split("</think>")[-1])
    truths = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    return bool(boxed) and boxed[-1].strip() in [str(t).strip() for t in truths]
