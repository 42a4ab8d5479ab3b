"""What one gaming probe is, and the texts probes are made of (shared by every probe generator)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CALIBRATION", "NONSENSE", "NONSENSE_ANSWER", "REASONING", "Probe"]

#: The pseudo-family of the calibration completions.
CALIBRATION = "calibration"

REASONING = "Let me work through the problem step by step, checking each step before I go on."
NONSENSE = "Purple elephants hum quietly beneath the marble staircase while the violin keeps turning blue."
NONSENSE_ANSWER = "banana"


@dataclass(frozen=True)
class Probe:
    """One probe completion: its family and variant, its text, and for which rewards it is a hole (``judged``).

    >>> Probe("empty", "blank", "").judged
    'always'
    """

    family: str
    variant: str
    completion: str
    judged: str = "always"
