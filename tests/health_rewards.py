"""Rewards for the reward-health tests, in a module so that configs and worker processes can name them."""

from __future__ import annotations


def seed_style(prompts, responses):
    """A reward written for another script's signature: it never sees ``completions`` (refused when made)."""
    return [float(len(r) > 3) for r in responses]


def always_fails(completions, **kwargs):
    """Raises on every batch."""
    raise ValueError("the scoring service is not configured")


def never_applies(completion):
    """Scores nothing (every sample ``None``)."""
    return None


def long_is_good(completion):
    """A big spread: ten points a character."""
    return 10.0 * len(completion)


def has_a_digit(completion):
    """A small spread: 0 or 1."""
    return float(any(ch.isdigit() for ch in completion))
