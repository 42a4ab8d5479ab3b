"""``perplexity``: fluency as a causal language model's perplexity on the completion, mapped to [0, 1].

The completion's tokens are scored given the prompt (``condition_on_prompt``,
chat-templated like ``reward_model``), batched. Perplexity ``ppl`` is
``exp(mean negative log-likelihood)`` over the completion's tokens; it becomes
a score by ``mapping``:

* ``"log_range"`` (default): 1 at or below ``good``, 0 at or above ``bad``,
  linear in ``log(ppl)`` between (so 10 -> 1, 100 -> 0.5, 1000 -> 0 by default);
* ``"inverse"``: ``1 / ppl``, the geometric-mean probability of a token.

Perplexity alone is easy to game: repeating a phrase drives it towards 1,
because a language model copies from its context. So by default the score is
multiplied by the share of distinct token n-grams in the completion
(``distinct_ngrams=3``): natural text keeps nearly all of its score,
"the the the the" keeps a fraction. Set ``distinct_ngrams=None`` to turn
that off. An empty completion has no perplexity and scores ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch, as_messages
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.judges.local_model import LocalModelReward, length_sorted_batches

__all__ = ["Perplexity", "distinct_ratio"]

_MAPPINGS = ("log_range", "inverse")


def distinct_ratio(ids: list[int], n: int) -> float:
    """Distinct n-grams over all n-grams of ``ids`` (1.0 when there are none).

    >>> distinct_ratio([1, 2, 3, 4, 5], 3), distinct_ratio([7, 7, 7, 7, 7, 7], 3)
    (1.0, 0.25)
    """
    grams = [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0


@register_reward("perplexity")
@dataclass(kw_only=True, eq=False)
class Perplexity(LocalModelReward):
    """Fluency: a causal LM's perplexity on the completion (given the prompt), mapped to [0, 1], batched.

    Settings: ``model`` (a causal LM, Hub id or folder), ``condition_on_prompt``,
    ``mapping`` (``"log_range"`` with ``good`` and ``bad`` perplexities, or
    ``"inverse"``), ``distinct_ngrams`` (the repetition guard; ``None`` turns it
    off), and the loading, device, dtype, batching and chat-template settings
    of :class:`~rewardsmith.judges.local_model.LocalModelReward`. ``explain``
    gives the perplexity, the token count and the distinct-n-gram share.

    >>> import tempfile
    >>> from rewardsmith.train.tiny_model import build_tiny_model
    >>> fluency = Perplexity(model=str(build_tiny_model(tempfile.mkdtemp())), device="cpu", good=10, bad=200)
    >>> result = fluency.check("The cat sat on the mat.", prompt="Tell me about the cat.")
    >>> 0.0 <= result.score <= 1.0, sorted(result.metrics)
    (True, ['distinct_ratio', 'perplexity', 'tokens'])
    >>> fluency.check("", prompt="Say nothing.").score is None
    True
    """

    default_name = "perplexity"
    score_range = (0.0, 1.0)

    condition_on_prompt: bool = True
    mapping: str = "log_range"
    good: float = 10.0
    bad: float = 1000.0
    distinct_ngrams: int | None = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        name = self.name
        if self.mapping not in _MAPPINGS:
            raise RewardConfigError(f"reward {name!r}: mapping must be one of {', '.join(_MAPPINGS)}")
        if not 1 <= self.good < self.bad:
            raise RewardConfigError(f"reward {name!r}: need 1 <= good < bad, got good={self.good}, bad={self.bad}")
        if self.distinct_ngrams is not None and (not isinstance(self.distinct_ngrams, int) or self.distinct_ngrams < 1):
            raise RewardConfigError(f"reward {name!r}: distinct_ngrams must be a whole number >= 1 or None")

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or "perplexity"

    def model_class(self) -> Any:
        from transformers import AutoModelForCausalLM

        return AutoModelForCausalLM

    def _prefix(self, batch: Batch, i: int, tokenizer: Any) -> tuple[str, bool]:
        """The text before the completion, and whether it came from a chat template."""
        if not self.condition_on_prompt or batch.prompts is None:
            return "", False
        prompt = batch.prompts[i]
        conversational = not isinstance(batch.completions[i], str)
        if self.chat_template == "always" or (self.chat_template == "auto" and conversational):
            messages = as_messages(prompt, "user")
            text = tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True, **self.chat_template_kwargs
            )
            return text, True
        return batch.prompt_texts[i], False

    def _token_ids(self, batch: Batch, tokenizer: Any) -> list[tuple[list[int], int]]:
        """Per sample: the ids (prefix then completion) and where the completion starts."""
        limit = self.input_limit(tokenizer)
        out = []
        for i, completion in enumerate(batch.texts):
            prefix, templated = self._prefix(batch, i, tokenizer)
            prefix_ids = tokenizer(prefix, add_special_tokens=not templated)["input_ids"] if prefix else []
            if not prefix_ids and tokenizer.bos_token_id is not None:
                prefix_ids = [tokenizer.bos_token_id]
            completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"] if completion else []
            ids = prefix_ids + completion_ids
            start = len(prefix_ids)
            if limit is not None and len(ids) > limit:  # keep the end: drop the prefix's start first
                cut = len(ids) - limit
                ids, start = ids[cut:], max(0, start - cut)
            out.append((ids, start))
        return out

    def nll(self, batch: Batch) -> list[tuple[float | None, int, list[int]]]:
        """Per sample: mean negative log-likelihood of the completion's tokens (``None`` if it has none),
        the number of tokens scored, and the completion's token ids."""
        import torch
        import torch.nn.functional as F

        model, tokenizer, device = self.loaded()
        encoded = self._token_ids(batch, tokenizer)
        results: list[tuple[float | None, int, list[int]]] = [(None, 0, [])] * len(encoded)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        for indices in length_sorted_batches([len(ids) for ids, _ in encoded], self.batch_size):
            width = max(len(encoded[i][0]) for i in indices)
            if width == 0:
                continue
            input_ids = torch.full((len(indices), width), pad, dtype=torch.long)
            mask = torch.zeros((len(indices), width), dtype=torch.long)
            for row, i in enumerate(indices):
                ids = encoded[i][0]
                input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
                mask[row, : len(ids)] = 1
            with torch.inference_mode():
                logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device)).logits
                for row, i in enumerate(indices):
                    ids, start = encoded[i]
                    first = max(start, 1)  # the first token of the sequence has nothing to be predicted from
                    if first >= len(ids):
                        results[i] = (None, 0, ids[start:])
                        continue
                    targets = torch.tensor(ids[first:], dtype=torch.long, device=logits.device)
                    losses = F.cross_entropy(logits[row, first - 1 : len(ids) - 1].float(), targets, reduction="none")
                    results[i] = (float(losses.mean()), len(ids) - first, ids[start:])
        return results

    def _map(self, ppl: float) -> float:
        if self.mapping == "inverse":
            return 1.0 / ppl
        span = math.log(self.bad) - math.log(self.good)
        return min(1.0, max(0.0, (math.log(self.bad) - math.log(ppl)) / span))

    def score_batch(self, batch: Batch) -> list[RewardResult]:
        out = []
        for mean_nll, count, ids in self.nll(batch):
            if mean_nll is None:
                out.append(RewardResult(None, "the completion has no tokens to score"))
                continue
            ppl = math.exp(mean_nll)
            distinct = distinct_ratio(ids, self.distinct_ngrams) if self.distinct_ngrams else 1.0
            metrics = {"perplexity": ppl, "tokens": float(count), "distinct_ratio": distinct}
            out.append(RewardResult(self._map(ppl) * distinct, f"perplexity {ppl:.1f} over {count} tokens", metrics))
        return out
