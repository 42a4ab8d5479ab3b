"""A reward that cannot tell completions apart (for the "nothing to learn" warning test)."""


def always_half(completion):
    return 0.5
