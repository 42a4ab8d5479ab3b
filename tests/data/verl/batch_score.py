"""A custom reward for verl's batch reward manager: lists in, one dict per sample out."""


def compute_score(data_sources, solution_strs, ground_truths, extra_infos=None, bonus=0.0):
    out = []
    for source, text, truth in zip(data_sources, solution_strs, ground_truths):
        right = source == "openai/gsm8k" and text.strip().endswith(f"#### {truth}")
        out.append({"score": float(right) + bonus, "acc": right})
    return out
