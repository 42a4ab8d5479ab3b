"""``reward_model``: a sequence-classification reward model as a reward, batched, with normalisation.

What TRL does with a model id in ``reward_funcs``, as a rewardsmith reward:
the same text (chat template for conversational data, ``prompt + completion``
otherwise) and the same score (the model's logit at the last non-padding
token), plus what TRL lacks:

* batching sorted by length (``batch_size``), ``device`` and ``dtype``;
* ``chat_template="always"`` for reward models trained on chat-formatted
  text when the prompts are plain strings;
* normalisation: ``"sigmoid"`` (a probability-like score in (0, 1)), or
  ``"standardize"`` (``(x - mean) / std``, with the mean and standard
  deviation given, computed by :meth:`RewardModel.calibrate`, or read from a
  ``calibration_data`` file on first use), so that a reward model's scale
  does not silently swamp or vanish beside 0/1 rewards when they are weighted;
* a clear error when the checkpoint has no trained score head (a base
  language model loaded as a classifier gets a random head, which
  ``transformers`` only warns about);
* ``explain`` shows the raw score beside the normalised one;
* it pickles as its settings and loads the model where it scores.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.judges.local_model import LocalModelReward, length_sorted_batches

__all__ = ["RewardModel"]

_NORMALIZE = ("none", "sigmoid", "standardize")


@register_reward("reward_model")
@dataclass(kw_only=True, eq=False)
class RewardModel(LocalModelReward):
    """A sequence-classification reward model (``AutoModelForSequenceClassification``, Hub id or folder).

    The score is the model's logit number ``label`` (0 by default) for the
    prompt and completion, normalised as ``normalize`` says: ``"none"``,
    ``"sigmoid"`` or ``"standardize"`` (with ``mean`` and ``std``, set by
    hand, by :meth:`calibrate`, or from ``calibration_data``: a ``.jsonl`` file
    of ``{"prompt": ..., "completion": ...}`` rows, strings or messages). The
    reward is named after the model's last path component, as TRL names
    reward models. Loading, device, dtype, batching and chat-template settings
    are those of :class:`~rewardsmith.judges.local_model.LocalModelReward`.

    >>> import tempfile
    >>> from rewardsmith.train.tiny_model import build_tiny_reward_model
    >>> path = build_tiny_reward_model(tempfile.mkdtemp() + "/tiny-rm")
    >>> rm = RewardModel(model=str(path), normalize="sigmoid", device="cpu")
    >>> scores = rm(prompts=["2+2?", "2+2?"], completions=["4", "five"])
    >>> rm.name, len(scores), all(0.0 < s < 1.0 for s in scores)
    ('tiny-rm', 2, True)
    """

    default_name = "reward_model"

    normalize: str = "none"
    mean: float | None = None
    std: float | None = None
    calibration_data: str | None = None
    label: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.normalize not in _NORMALIZE:
            raise RewardConfigError(
                f"reward {self.name!r}: normalize must be one of {', '.join(_NORMALIZE)}, got {self.normalize!r}"
            )
        if self.std is not None and not self.std > 0:
            raise RewardConfigError(f"reward {self.name!r}: std must be positive, got {self.std!r}")
        if self.normalize == "standardize" and (self.mean is None or self.std is None) and not self.calibration_data:
            raise RewardConfigError(
                f"reward {self.name!r}: normalize='standardize' needs mean and std: set both, set calibration_data "
                "to a .jsonl file of prompt/completion rows, or call .calibrate(prompts, completions) on the reward"
            )

    @property
    def score_range(self) -> tuple[float, float] | None:  # type: ignore[override]
        """(0, 1) with ``normalize="sigmoid"``; unbounded (``None``) otherwise."""
        return (0.0, 1.0) if self.normalize == "sigmoid" else None

    def model_class(self) -> Any:
        from transformers import AutoModelForSequenceClassification

        return AutoModelForSequenceClassification

    def check_loaded(self, model: Any, info: dict[str, Any]) -> None:
        head = [k for k in info.get("missing_keys", ()) if k.split(".")[0] in ("score", "classifier", "v_head")]
        if head:
            raise RewardConfigError(
                f"reward {self.name!r}: {self.model!r} is not a reward model: its score head ({', '.join(head)}) "
                "is not in the checkpoint, so it would be random. Point model= at a trained reward model "
                "(e.g. one saved by TRL's RewardTrainer)"
            )
        labels = model.config.num_labels
        if not 0 <= self.label < labels:
            raise RewardConfigError(f"reward {self.name!r}: label={self.label} but the model has {labels} outputs")

    # -- scoring ----------------------------------------------------------------------------------------

    def raw_scores(self, texts: list[str]) -> list[float]:
        """The model's logit ``label`` for each text (already chat-templated), batched by length."""
        import torch

        model, tokenizer, device = self.loaded()
        max_length = self.input_limit(tokenizer)
        out: list[float] = [0.0] * len(texts)
        for indices in length_sorted_batches([len(t) for t in texts], self.batch_size):
            inputs = tokenizer(
                [texts[i] for i in indices],
                return_tensors="pt",
                padding=True,
                padding_side="right",
                truncation=max_length is not None,
                max_length=max_length,
                add_special_tokens=False,
            ).to(device)
            with torch.inference_mode():
                logits = model(**inputs).logits[:, self.label].float().cpu().tolist()
            for i, value in zip(indices, logits):
                out[i] = value
        return out

    def _stats(self) -> tuple[float, float]:
        """The mean and std to standardise with: the settings, or computed once from ``calibration_data``."""
        if self.mean is not None and self.std is not None:
            return self.mean, self.std
        held = self.__dict__.get("_calibrated")
        if held is not None:
            return held
        prompts, completions = _read_calibration(str(self.calibration_data), self.name)
        held = self.__dict__["_calibrated"] = _mean_std(self._raw_for(prompts, completions), self.name)
        return held

    def _raw_for(self, prompts: list[Any], completions: list[Any]) -> list[float]:
        return self.raw_scores(self.texts(Batch.from_call(prompts, completions, None, {}, self.name)))

    def _normalise(self, raw: float) -> float:
        if self.normalize == "sigmoid":
            return 1.0 / (1.0 + math.exp(-raw)) if raw >= 0 else math.exp(raw) / (1.0 + math.exp(raw))
        if self.normalize == "standardize":
            mean, std = self._stats()
            return (raw - mean) / std
        return raw

    def score_batch(self, batch: Batch) -> list[RewardResult]:
        raw = self.raw_scores(self.texts(batch))
        return [RewardResult(self._normalise(x), metrics={"raw_score": x}) for x in raw]

    def calibrate(self, prompts: list[Any], completions: list[Any]) -> RewardModel:
        """A copy that standardises with the mean and standard deviation of the raw scores on these samples.

        Use completions like the ones training will produce (samples from the
        starting policy), so that 0 means "typical for this policy at the start".
        The copy's ``mean`` and ``std`` are ordinary settings: put them in a config to skip calibrating again.
        """
        mean, std = _mean_std(self._raw_for(list(prompts), list(completions)), self.name)
        clone = self.configure(normalize="standardize", mean=mean, std=std)
        if "_loaded" in self.__dict__:
            clone.__dict__["_loaded"] = self.__dict__["_loaded"]  # share the loaded model
        return clone

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_calibrated", None)
        return state


def _mean_std(values: list[float], name: str) -> tuple[float, float]:
    if len(values) < 2:
        raise RewardConfigError(f"reward {name!r}: calibrating needs at least 2 samples, got {len(values)}")
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    if not std > 0:
        raise RewardConfigError(f"reward {name!r}: every calibration sample scored {mean:g}; use more varied samples")
    return mean, std


def _read_calibration(path: str, name: str) -> tuple[list[Any], list[Any]]:
    file = Path(path).expanduser()
    if not file.is_file():
        raise RewardConfigError(f"reward {name!r}: calibration_data {str(file)!r} does not exist")
    prompts, completions = [], []
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                completions.append(row["completion"])
            except (ValueError, KeyError, TypeError) as exc:
                raise RewardConfigError(
                    f"reward {name!r}: {file}:{number} is not a JSON object with a 'completion' ({exc})"
                ) from exc
            prompts.append(row.get("prompt", ""))
    return prompts, completions
