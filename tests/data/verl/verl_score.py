"""A verl custom reward file (``custom_reward_function.path``): it imports the scorer beside it."""

import gsm8k


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if data_source != "openai/gsm8k":
        raise NotImplementedError(f"no scorer for {data_source}")
    value = gsm8k.compute_score(solution_str, ground_truth)
    return {"score": value, "acc": value == 1.0}
