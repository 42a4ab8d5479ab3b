"""Evaluation jobs: score a dataset with rewards, from a column or generated completions; resumable, with reports.

>>> from rewardsmith.evaluate import evaluate, GenerationConfig
>>> GenerationConfig(model="my-model", base_url="http://127.0.0.1:8000/v1", n=4).n
4

``rewardsmith.evaluate`` (the attribute of the top-level package) is the
:func:`evaluate` function; import this package's other names with
``from rewardsmith.evaluate import ...``.
"""

from rewardsmith.evaluate.config import load_eval_config
from rewardsmith.evaluate.generate import GenerationConfig, GenerationError
from rewardsmith.evaluate.job import EvalReport, evaluate
from rewardsmith.evaluate.results import EvaluationError, iter_results
from rewardsmith.evaluate.stats import pass_at_k

__all__ = [
    "EvalReport",
    "EvaluationError",
    "GenerationConfig",
    "GenerationError",
    "evaluate",
    "iter_results",
    "load_eval_config",
    "pass_at_k",
]
