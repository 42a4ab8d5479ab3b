"""A function whose parameters name no completion: a factory needing settings, or a mistake."""


def make_threshold(threshold, bonus):
    return lambda completion: float(len(completion) > threshold) + bonus
