"""A tiny causal language model built offline: for tests, the demo, and trying configs on a laptop.

The Hugging Face Hub may be out of reach (CI, air-gapped clusters), and a
real model is far too slow for a test. :func:`build_tiny_model` writes a
randomly initialised Llama-architecture model and its tokenizer to a folder
that ``from_pretrained`` (and so TRL) loads by path. (Llama rather than Qwen2:
transformers 5 loads a ``qwen2`` folder's tokenizer as ``Qwen2Tokenizer``,
which rebuilds its own byte-level pre-tokenizer and drops white space from
this tokenizer; for ``llama`` it honours ``tokenizer.json`` as written.)

The tokenizer is built for reinforcement-learning toy tasks: every printable
ASCII character is one token, so digits and operators are single tokens, and
the reasoning/answer tags (``<think>``, ``</think>``, ``<answer>``,
``</answer>``) are single tokens too, which makes the format learnable in a
few hundred steps on a CPU. It has a chat template (ChatML-style), an EOS
token and a pad token, and pads on the left as generation needs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import string
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_TAGS",
    "build_tiny_model",
    "build_tiny_reward_model",
    "build_tiny_tokenizer",
    "tiny_model_folder",
]

#: The standard deviation of the random weights: Llama's own, sized for models a hundred times wider.
DEFAULT_INIT_STD = 0.02

#: Tags that are single tokens in the tiny tokenizer.
DEFAULT_TAGS: tuple[str, ...] = ("<think>", "</think>", "<answer>", "</answer>")

_SPECIAL = {"pad": "<|pad|>", "eos": "<|im_end|>", "bos": "<|im_start|>", "unk": "<|unk|>"}

CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\n' }}{%- endif -%}"
)

_MARKER = "rewardsmith_tiny.json"


def build_tiny_tokenizer(tags: Sequence[str] = DEFAULT_TAGS, words: Sequence[str] = (), chars: str | None = None):
    """A character-level fast tokenizer with the given tags and words as single tokens.

    ``chars`` are the characters it knows (every printable ASCII character by
    default); any other character becomes the unknown token. A small set (the
    digits and a space, say) with the task's words gives a vocabulary of a few
    dozen tokens, which a model trained from scratch explores far faster.

    >>> tok = build_tiny_tokenizer()
    >>> ids = tok("<think>1+2</think>")["input_ids"]
    >>> len(ids), tok.decode(ids)
    (5, '<think>1+2</think>')
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = list(dict.fromkeys(string.printable if chars is None else chars))
    vocab = {token: i for i, token in enumerate([_SPECIAL["pad"], _SPECIAL["unk"], _SPECIAL["bos"], _SPECIAL["eos"]])}
    for token in [*alphabet, *words, *tags]:
        vocab.setdefault(token, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token=_SPECIAL["unk"]))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=_SPECIAL["pad"],
        eos_token=_SPECIAL["eos"],
        bos_token=_SPECIAL["bos"],
        unk_token=_SPECIAL["unk"],
        padding_side="left",
        clean_up_tokenization_spaces=False,
    )
    tokenizer.add_tokens([*tags, *words])  # matched whole, before the per-character split; kept when decoding
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.model_max_length = 4096
    return tokenizer


def tiny_model_folder(settings: dict[str, Any]) -> str:
    """The cache folder name for a tiny model built with ``settings``: one folder per recipe, so that runs with
    different recipes (the demo's, a test's) never rebuild over each other.

    >>> tiny_model_folder({}), tiny_model_folder({"hidden_size": 64}) == tiny_model_folder({"hidden_size": 64})
    ('tiny-model', True)
    """
    if not settings:
        return "tiny-model"
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()
    return f"tiny-model-{digest[:12]}"


def _built_with(path: Path, recipe: dict) -> bool:
    marker = path / _MARKER
    try:
        return json.loads(marker.read_text()) == recipe and (path / "config.json").exists()
    except (OSError, ValueError):
        return False


@dataclass(frozen=True)
class _Recipe:
    """What a tiny model is built from; saved beside it, so that an identical build is skipped."""

    tags: Sequence[str]
    words: Sequence[str]
    chars: str | None
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    seed: int
    initializer_range: float = DEFAULT_INIT_STD

    def as_json(self, **extra: Any) -> dict:
        saved = {**asdict(self), "tags": list(self.tags), "words": list(self.words), **extra}
        if self.chars is None:  # builds from before ``chars`` existed stay valid
            del saved["chars"]
        if self.initializer_range == DEFAULT_INIT_STD:  # and from before ``initializer_range``
            del saved["initializer_range"]
        return saved


#: :func:`build_tiny_model`'s defaults.
_DEFAULT_RECIPE = _Recipe(DEFAULT_TAGS, (), None, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, seed=0)


def build_tiny_model(
    path: str | Path,
    *,
    tags: Sequence[str] = DEFAULT_TAGS,
    words: Sequence[str] = (),
    chars: str | None = None,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    seed: int = 0,
    initializer_range: float = DEFAULT_INIT_STD,
) -> Path:
    """Write a randomly initialised tiny Llama model and its tokenizer to ``path``; return the path.

    ``tags``, ``words`` and ``chars`` shape the tokenizer
    (:func:`build_tiny_tokenizer`). ``initializer_range`` is the standard
    deviation of the random weights (Llama's 0.02 by default); about
    ``1 / sqrt(hidden_size)`` lets a model this narrow learn a copying task
    from reward far faster (docs/training.md, "The demo"). Building is skipped when ``path`` already
    holds a model built with the same arguments, so tests and the demo can
    call this freely.

    >>> import tempfile
    >>> from transformers import AutoModelForCausalLM, AutoTokenizer
    >>> path = build_tiny_model(tempfile.mkdtemp())
    >>> model = AutoModelForCausalLM.from_pretrained(path)
    >>> tok = AutoTokenizer.from_pretrained(path)
    >>> model.config.model_type, tok.pad_token, tok.eos_token, tok.padding_side
    ('llama', '<|pad|>', '<|im_end|>', 'left')
    >>> bolder = AutoModelForCausalLM.from_pretrained(build_tiny_model(tempfile.mkdtemp(), initializer_range=0.125))
    >>> bolder.config.initializer_range, round(float(bolder.model.embed_tokens.weight.detach().std()), 1)
    (0.125, 0.1)
    """
    recipe = _Recipe(tags, words, chars, hidden_size, num_layers, num_heads, num_kv_heads, seed, initializer_range)
    return _build(Path(path), "LlamaForCausalLM", recipe, {"version": 2})


def build_tiny_reward_model(path: str | Path, **settings: Any) -> Path:
    """Write a randomly initialised tiny sequence-classification reward model (one output) and its tokenizer.

    The same architecture, tokenizer and ``settings`` (``tags``, ``words``,
    ``hidden_size``, ``seed``, ...) as :func:`build_tiny_model`, with a
    scalar score head: what ``AutoModelForSequenceClassification`` (and so
    TRL's reward-model path and rewardsmith's ``reward_model``) loads. Its
    scores are random but deterministic functions of the text. Building is
    skipped when ``path`` already holds one built with the same arguments.

    >>> import tempfile
    >>> from transformers import AutoModelForSequenceClassification
    >>> path = build_tiny_reward_model(tempfile.mkdtemp())
    >>> model = AutoModelForSequenceClassification.from_pretrained(path)
    >>> model.config.num_labels, model.config.pad_token_id is not None
    (1, True)
    """
    try:
        recipe = replace(_DEFAULT_RECIPE, **settings)
    except TypeError as exc:
        raise TypeError(f"build_tiny_reward_model takes the settings of build_tiny_model: {exc}") from None
    extra = {"kind": "sequence-classification", "version": 1}
    return _build(Path(path), "LlamaForSequenceClassification", recipe, extra, num_labels=1)


def _build(path: Path, class_name: str, recipe: _Recipe, recipe_extra: dict, **config_extra: Any) -> Path:
    saved = recipe.as_json(**recipe_extra)
    if _built_with(path, saved):
        return path

    import transformers

    tokenizer = build_tiny_tokenizer(recipe.tags, recipe.words, recipe.chars)
    shape = (recipe.hidden_size, recipe.num_layers, recipe.num_heads, recipe.num_kv_heads)
    config = _llama_config(tokenizer, *shape, initializer_range=recipe.initializer_range, **config_extra)
    model = _seeded(getattr(transformers, class_name), config, recipe.seed)
    if model.can_generate():
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        model.generation_config.eos_token_id = tokenizer.eos_token_id
    return _save_atomically(path, saved, model, tokenizer)


def _llama_config(tokenizer, hidden_size: int, num_layers: int, num_heads: int, num_kv_heads: int, **extra):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 4,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
        **extra,
    )


def _seeded(model_class, config, seed: int):
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return model_class(config)


def _save_atomically(path: Path, recipe: dict, model, tokenizer) -> Path:
    # Build beside the target and move it into place, so that concurrent builders
    # (parallel test workers) never see a half-written folder.
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    (staging / _MARKER).write_text(json.dumps(recipe))
    if _built_with(path, recipe):  # another process finished first
        shutil.rmtree(staging, ignore_errors=True)
        return path
    if path.exists():  # an older build with another recipe
        shutil.rmtree(path, ignore_errors=True)
    try:
        os.rename(staging, path)
    except OSError:  # another process got there first with the same recipe
        shutil.rmtree(staging, ignore_errors=True)
    return path
