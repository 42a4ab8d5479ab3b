"""Evaluation jobs: score a dataset with rewards, from a column or generated completions; resumable, with reports.

The job itself is :func:`evaluate` (also ``rewardsmith.evaluate``); this
package holds it and its parts (generation backends, results files,
statistics, the report).

>>> from rewardsmith.evaluation import evaluate, GenerationConfig
>>> GenerationConfig(model="my-model", base_url="http://127.0.0.1:8000/v1", n=4).n
4
"""

from rewardsmith.evaluation.config import evaluate_config, load_eval_config
from rewardsmith.evaluation.generation import GenerationConfig, GenerationError
from rewardsmith.evaluation.job import EvalReport, evaluate
from rewardsmith.evaluation.results import EvaluationError, iter_results
from rewardsmith.evaluation.stats import pass_at_k

__all__ = [
    "EvalReport",
    "EvaluationError",
    "GenerationConfig",
    "GenerationError",
    "evaluate",
    "evaluate_config",
    "iter_results",
    "load_eval_config",
    "pass_at_k",
]
