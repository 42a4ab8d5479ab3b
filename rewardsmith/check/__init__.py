"""Reward audit: can this reward be gamed, does it score right answers right, does it carry signal?

``rewardsmith.check`` is this package, and calling it runs an audit
(:func:`check`): ``rewardsmith.check("gsm8k_accuracy", "data/gsm8k_test.jsonl",
converter="gsm8k")``. The parts:

* :mod:`~rewardsmith.check.probes`: gaming probes generated from each row;
* :mod:`~rewardsmith.check.rows`: what a row tells (reference answer, reference solution, a wrong attempt);
* :mod:`~rewardsmith.check.formats`: the formats completions state answers in, given or found;
* :mod:`~rewardsmith.check.tasks`: number puzzles (solved) and the example calls code prompts show;
* :mod:`~rewardsmith.check.scoring`: one sample at a time, timed, under a hard timeout;
* :mod:`~rewardsmith.check.findings` and :mod:`~rewardsmith.check.checks`: the numbers and the thresholds;
* :mod:`~rewardsmith.check.audit`: the audit, ``check.json`` and ``check.html``
  (:mod:`~rewardsmith.check.page`); :mod:`~rewardsmith.check.terminal`: the terminal summary;
* :mod:`~rewardsmith.check.adversarial`: hostile texts at growing sizes and how a reward's time grows
  with them (the linear-time rule every registered reward is fuzzed against).

"""

from __future__ import annotations

import sys
import types
from typing import Any

from rewardsmith.check.audit import CheckReport, Sampler, check
from rewardsmith.check.findings import Finding, Thresholds
from rewardsmith.check.probes import FAMILIES, Probe, make_probes

__all__ = ["FAMILIES", "CheckReport", "Finding", "Probe", "Sampler", "Thresholds", "check", "make_probes"]


class _CallableModule(types.ModuleType):
    """This package, callable: ``rewardsmith.check(...)`` runs :func:`check`; its modules stay reachable."""

    def __call__(self, *args: Any, **kwargs: Any) -> CheckReport:
        return check(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
