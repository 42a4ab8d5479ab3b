"""Checking rewards before they are trusted: adversarial inputs and time bounds.

:mod:`rewardsmith.check.adversarial` generates the hostile texts a policy
finds under RL (runs of one character, repeated unclosed tags, deep nesting)
at growing sizes and measures how a reward's time grows with them; the fuzz
test runs it on every registered reward.
"""

from rewardsmith.check.adversarial import (
    FAMILIES,
    SAMPLE_VALUES,
    Family,
    FuzzTarget,
    Growth,
    fuzz_targets,
    measure_growth,
    sample_columns,
)

__all__ = [
    "FAMILIES",
    "SAMPLE_VALUES",
    "Family",
    "FuzzTarget",
    "Growth",
    "fuzz_targets",
    "measure_growth",
    "sample_columns",
]
