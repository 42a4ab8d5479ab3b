"""Model-based rewards and LLM judges, each registered by name on import.

* ``llm_judge``, ``reference_fidelity``, ``principles``: an OpenAI-compatible
  chat model grades completions (async, bounded concurrency, rate limit,
  retries, persistent cache, token and cost accounting);
* ``reward_model``: a sequence-classification reward model
  (``AutoModelForSequenceClassification``), batched, with normalisation;
* ``perplexity``: fluency from a causal LM's perplexity, mapped to [0, 1].

Importing this package is cheap: ``torch``, ``transformers``, ``httpx`` and
``jinja2`` are imported when a reward first needs them.
"""

from rewardsmith.http.retry import RetryPolicy
from rewardsmith.judges.base import ChatJudge, Judgement, JudgeRequestError, JudgeUsage, JudgeVerdictError
from rewardsmith.judges.cache import JudgeCache
from rewardsmith.judges.llm_judge import LLMJudge, ReferenceFidelity
from rewardsmith.judges.local_model import LocalModelReward
from rewardsmith.judges.perplexity import Perplexity
from rewardsmith.judges.principles import PRINCIPLE_LIBRARY, Principle, Principles
from rewardsmith.judges.reward_model import RewardModel
from rewardsmith.judges.verdict import Verdict, parse_verdict

__all__ = [
    "PRINCIPLE_LIBRARY",
    "ChatJudge",
    "JudgeCache",
    "JudgeRequestError",
    "JudgeUsage",
    "JudgeVerdictError",
    "Judgement",
    "LLMJudge",
    "LocalModelReward",
    "Perplexity",
    "Principle",
    "Principles",
    "ReferenceFidelity",
    "RetryPolicy",
    "RewardModel",
    "Verdict",
    "parse_verdict",
]
