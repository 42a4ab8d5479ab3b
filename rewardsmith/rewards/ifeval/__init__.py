"""Verifiable instruction following: IFEval's 25 constraint types, and the ``ifeval`` reward.

The constraints follow the reference checker of "Instruction-Following
Evaluation for Large Language Models" (Zhou et al., 2023) definition by
definition, so that verdicts agree with it in both its ``strict`` and
``loose`` modes. One module per family registers its constraints in
:data:`~rewardsmith.rewards.ifeval.registry.CONSTRAINTS`:

* :mod:`.keywords`: ``keywords:*``
* :mod:`.length`: ``length_constraints:*``
* :mod:`.detectable`: ``detectable_content:*``, ``detectable_format:*``
* :mod:`.startend`: ``startend:*``, ``combination:*``, ``punctuation:*``
* :mod:`.case`: ``change_case:*``, ``language:*``

How words, sentences and word tokens are counted is in :mod:`.text`; what
the reward reads and scores is in :mod:`.reward`. See ``docs/ifeval.md``.

>>> len(CONSTRAINTS)
25
"""

import rewardsmith.rewards.ifeval.case as case
import rewardsmith.rewards.ifeval.detectable as detectable
import rewardsmith.rewards.ifeval.keywords as keywords
import rewardsmith.rewards.ifeval.length as length
import rewardsmith.rewards.ifeval.startend as startend
from rewardsmith.rewards.ifeval.registry import (
    CONSTRAINTS,
    Arg,
    Constraint,
    ConstraintError,
    constraint,
    get_constraint,
)
from rewardsmith.rewards.ifeval.reward import IFEval, follows, ifeval_verdicts, loose_variants, row_constraints
from rewardsmith.rewards.ifeval.spec import Bound, parse_constraints, parse_ground_truth

__all__ = [
    "CONSTRAINTS",
    "Arg",
    "Bound",
    "Constraint",
    "ConstraintError",
    "IFEval",
    "case",
    "constraint",
    "detectable",
    "follows",
    "get_constraint",
    "ifeval_verdicts",
    "keywords",
    "length",
    "loose_variants",
    "parse_constraints",
    "parse_ground_truth",
    "row_constraints",
    "startend",
]
