"""What the rewards that run a local ``transformers`` model share: loading, device, dtype, batching, text.

:class:`LocalModelReward` is the base of ``reward_model`` and ``perplexity``.
The model is loaded on first use, in the process that scores (so the reward
pickles as its settings, a few hundred bytes, and TRL's worker processes load
their own copy), and kept for later calls. ``torch`` and ``transformers`` are
imported then, not when rewardsmith is imported.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.inputs import Batch, as_messages
from rewardsmith.core.reward import Reward

__all__ = ["LocalModelReward", "length_sorted_batches", "resolve_device", "resolve_dtype"]

_DTYPES = ("auto", "float32", "bfloat16", "float16")
_CHAT_TEMPLATE = ("auto", "always", "never")
_LOAD_LOCK = threading.Lock()


def resolve_device(device: str) -> str:
    """``"auto"``: the first CUDA device if there is one, else Apple's MPS, else the CPU; anything else as given.

    >>> resolve_device("cpu")
    'cpu'
    """
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def resolve_dtype(dtype: str, device: str) -> Any:
    """The ``torch`` dtype: ``"auto"`` is bfloat16 on a GPU that supports it, float32 elsewhere.

    >>> str(resolve_dtype("auto", "cpu")), str(resolve_dtype("float16", "cpu"))
    ('torch.float32', 'torch.float16')
    """
    import torch

    if dtype == "auto":
        if device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    return getattr(torch, dtype)


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (longest first), so that little compute goes to padding.

    >>> length_sorted_batches([5, 100, 7, 90, 6], 2)
    [[1, 3], [2, 4], [0]]
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


@dataclass(kw_only=True, eq=False)
class LocalModelReward(Reward):
    """Settings and loading shared by rewards that run a local model.

    * ``model``: a Hub id or a local folder (required).
    * ``tokenizer``: where to load the tokenizer from, if not from ``model``.
    * ``device``: ``"auto"`` (CUDA, else MPS, else CPU), or ``"cpu"``, ``"cuda:1"``, ...
    * ``dtype``: ``"auto"`` (bfloat16 on a GPU that supports it, else float32), ``"float32"``,
      ``"bfloat16"``, ``"float16"``.
    * ``batch_size``: texts per forward pass (sorted by length to waste little on padding).
    * ``max_length``: longest input in tokens; longer inputs lose their *start* (the completion's end is
      kept). ``None``: the tokenizer's own limit.
    * ``chat_template``: ``"auto"`` applies the tokenizer's chat template to conversational data (as TRL
      does), ``"always"`` also to plain prompts (as user / assistant messages), ``"never"`` joins the texts.
    * ``chat_template_kwargs``: passed to ``apply_chat_template`` (e.g. ``{"enable_thinking": false}``).
    * ``revision``, ``trust_remote_code``: passed to ``from_pretrained``.
    """

    model: str = ""
    tokenizer: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 16
    max_length: int | None = None
    chat_template: str = "auto"
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    revision: str | None = None
    trust_remote_code: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        name = self.name
        if self.timeout is not None or self.workers != 1:
            raise RewardConfigError(
                f"reward {name!r} runs a model on whole batches in this process; timeout and workers do not apply "
                "(use batch_size and device)"
            )
        if self.dtype not in _DTYPES:
            raise RewardConfigError(f"reward {name!r}: dtype must be one of {', '.join(_DTYPES)}, got {self.dtype!r}")
        if self.chat_template not in _CHAT_TEMPLATE:
            raise RewardConfigError(
                f"reward {name!r}: chat_template must be one of {', '.join(_CHAT_TEMPLATE)}, got {self.chat_template!r}"
            )
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise RewardConfigError(f"reward {name!r}: batch_size must be a whole number >= 1")

    @property
    def name(self) -> str:
        """The model's last path component, as TRL names reward models (``org/my-rm`` -> ``my-rm``)."""
        explicit = self.__dict__.get("_name")
        if explicit:
            return explicit
        if isinstance(self.model, str) and self.model.strip("/"):
            return Path(self.model.rstrip("/")).name
        return self.default_name or "local_model"

    # -- loading ---------------------------------------------------------------------------------------

    def model_class(self) -> Any:
        """The ``transformers`` auto class that loads this reward's checkpoint (subclasses say which)."""
        raise NotImplementedError

    def check_loaded(self, model: Any, info: dict[str, Any]) -> None:
        """Raise if the checkpoint cannot be what this reward needs (subclasses check their heads)."""

    def loaded(self) -> tuple[Any, Any, str]:
        """The model (in eval mode, on its device), the tokenizer and the device: loaded on first use."""
        held = self.__dict__.get("_loaded")
        if held is not None:
            return held
        with _LOAD_LOCK:
            held = self.__dict__.get("_loaded")
            if held is None:
                held = self.__dict__["_loaded"] = self._load()
        return held

    def _load(self) -> tuple[Any, Any, str]:
        require_extra("models", f"reward {self.name!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise RewardConfigError(f"reward {self.name!r}: set model= to a Hub id or a local model folder")
        from transformers import AutoTokenizer

        device = resolve_device(self.device)
        options = {"revision": self.revision, "trust_remote_code": self.trust_remote_code}
        try:
            model, info = self.model_class().from_pretrained(
                self.model, dtype=resolve_dtype(self.dtype, device), output_loading_info=True, **options
            )
            tokenizer = AutoTokenizer.from_pretrained(self.tokenizer or self.model, **options)
        except OSError as exc:
            raise RewardConfigError(
                f"reward {self.name!r} cannot load {self.model!r}: {exc}. Give a local folder, or a Hub id "
                "that this machine can download (or has in its Hugging Face cache)"
            ) from exc
        self.check_loaded(model, info)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.truncation_side = "left"
        model.config.pad_token_id = tokenizer.pad_token_id
        model.to(device)
        model.eval()
        return model, tokenizer, device

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_loaded", None)
        return state

    # -- text -----------------------------------------------------------------------------------------

    def input_limit(self, tokenizer: Any) -> int | None:
        """The most tokens one input may have: ``max_length``, else the tokenizer's limit (``None``: no limit)."""
        if self.max_length is not None:
            return self.max_length
        limit = getattr(tokenizer, "model_max_length", None)
        return limit if isinstance(limit, int) and limit < 1_000_000 else None

    def texts(self, batch: Batch) -> list[str]:
        """Each sample as the text the model reads: prompt and completion, chat-templated as ``chat_template`` says.

        Matches TRL's reward-model path for the same data: conversational
        samples through the tokenizer's chat template, plain ones as
        ``prompt + completion``.
        """
        _, tokenizer, _ = self.loaded()
        out = []
        for i in range(len(batch)):
            prompt = None if batch.prompts is None else batch.prompts[i]
            conversational = not isinstance(batch.completions[i], str)
            templated = self.chat_template == "always" or (self.chat_template == "auto" and conversational)
            if templated:
                messages = as_messages(prompt, "user") + as_messages(batch.completions[i], "assistant")
                out.append(tokenizer.apply_chat_template(messages, tokenize=False, **self.chat_template_kwargs))
            else:
                out.append(batch.prompt_texts[i] + batch.texts[i] if prompt is not None else batch.texts[i])
        return out
