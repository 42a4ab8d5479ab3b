"""Model and tokenizer for training: loading, special tokens, LoRA and QLoRA.

Checks that need only the model's config (LoRA target modules, QLoRA
hardware, the tokenizer's chat template) run in :func:`check_model` before
any weights load; :func:`load_model_and_tokenizer` does the loading.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

from rewardsmith.train.config import TINY_MODEL, ConfigError, ModelSettings

__all__ = ["check_model", "load_model_and_tokenizer", "lora_config", "model_path"]

logger = logging.getLogger("rewardsmith")

_DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}


def model_path(settings: ModelSettings, cache_dir: Path) -> str:
    """The path or Hub id to load (building the offline tiny model when asked for)."""
    if settings.name_or_path == TINY_MODEL:
        from rewardsmith.train.tiny_model import build_tiny_model

        return str(build_tiny_model(cache_dir / "tiny-model", **settings.tiny))
    return settings.name_or_path


def _auto_config(path: str, settings: ModelSettings) -> Any:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(
            path, revision=settings.revision, trust_remote_code=settings.trust_remote_code
        )
    except Exception as exc:  # OSError offline, ValueError for unknown architectures
        hint = (
            " The Hugging Face Hub may be out of reach: download the model first, or point name_or_path at a "
            "local folder (or use builtin:tiny to try a config offline)."
            if not Path(path).exists()
            else ""
        )
        raise ConfigError(f"cannot read the model config of {path!r}: {str(exc).splitlines()[0]}.{hint}") from None


def _module_names(config: Any) -> set[str]:
    """Names of the model's modules, from an empty (meta-device) instance: no weights are loaded."""
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return {name for name, _ in model.named_modules()}


def check_model(settings: ModelSettings, path: str) -> dict[str, Any]:
    """Everything about the model that can be checked without its weights; returns facts for the plan."""
    config = _auto_config(path, settings)
    facts: dict[str, Any] = {"architecture": (getattr(config, "architectures", None) or ["?"])[0]}
    if settings.load_in_4bit or settings.load_in_8bit:
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(
                "model.load_in_4bit/load_in_8bit (QLoRA) needs a CUDA GPU and bitsandbytes; none is available here. "
                "Remove it to train in full precision, or run on a GPU machine."
            )
        if importlib.util.find_spec("bitsandbytes") is None:
            raise ConfigError("QLoRA needs bitsandbytes: pip install 'rewardsmith[qlora]'")
        if settings.lora is None:
            raise ConfigError("a 4-bit or 8-bit model cannot be fully fine-tuned; add model.lora (QLoRA)")
    if settings.lora is not None:
        targets = settings.lora.target_modules
        if targets != "all-linear":
            names = _module_names(config)
            wanted = [targets] if isinstance(targets, str) else list(targets)
            suffixes = {n.rsplit(".", 1)[-1] for n in names}
            missing = [t for t in wanted if t not in suffixes and not any(n.endswith(t) for n in names)]
            if missing:
                linear = sorted({n.rsplit(".", 1)[-1] for n in names if "proj" in n or "fc" in n})[:12]
                raise ConfigError(
                    f"model.lora.target_modules {missing} are not modules of {facts['architecture']}. "
                    f"Its projection layers include: {', '.join(linear) or 'none found'}; or use 'all-linear'"
                )
        facts["lora"] = f"r={settings.lora.r}, alpha={settings.lora.alpha}, targets={targets}"
    return facts


def lora_config(settings: ModelSettings) -> Any:
    """peft's ``LoraConfig`` for the settings (``None`` for full fine-tuning)."""
    if settings.lora is None:
        return None
    from peft import LoraConfig

    lora = settings.lora
    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        bias=lora.bias,
        modules_to_save=lora.modules_to_save,
        use_rslora=lora.use_rslora,
        task_type="CAUSAL_LM",
    )


def _tokenizer(path: str, settings: ModelSettings, conversational: bool) -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(
        path, revision=settings.revision, trust_remote_code=settings.trust_remote_code
    )
    if settings.chat_template:
        tokenizer.chat_template = settings.chat_template
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ConfigError(f"the tokenizer of {path!r} has neither a pad token nor an EOS token to stand in for it")
        logger.warning("the tokenizer has no pad token; using its EOS token %r for padding", tokenizer.eos_token)
        tokenizer.pad_token = tokenizer.eos_token
    if conversational and not tokenizer.chat_template:
        raise ConfigError(
            f"the tokenizer of {path!r} has no chat template, but the dataset is conversational. "
            "Set model.chat_template, or dataset.conversational: false for plain-text prompts"
        )
    return tokenizer


def add_special_tokens(model: Any, tokenizer: Any, special: dict[str, str]) -> list[str]:
    """Add tokens to the tokenizer and model; each new embedding is the mean embedding of its description.

    Tokens are added as ordinary (not "special") tokens so that they stay in
    decoded completions, where format rewards look for them. Returns the
    tokens that were actually new.
    """
    import torch

    if not special:
        return []
    vocab = tokenizer.get_vocab()
    new = [token for token in special if token not in vocab]
    descriptions = {token: tokenizer(special[token], add_special_tokens=False)["input_ids"] for token in new}
    if not new:
        return []
    tokenizer.add_tokens(new)
    model.resize_token_embeddings(len(tokenizer))
    with torch.no_grad():
        tables = [model.get_input_embeddings().weight]
        output = model.get_output_embeddings()
        if output is not None and output.weight.data_ptr() != tables[0].data_ptr():
            tables.append(output.weight)
        for token in new:
            index = tokenizer.convert_tokens_to_ids(token)
            ids = descriptions[token] or [tokenizer.unk_token_id or 0]
            for table in tables:
                table[index] = table[ids].mean(dim=0)
    return new


def load_model_and_tokenizer(settings: ModelSettings, path: str, conversational: bool) -> tuple[Any, Any, list[str]]:
    """Load the model and tokenizer, add special tokens; returns ``(model, tokenizer, new_tokens)``."""
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = _tokenizer(path, settings, conversational)
    kwargs: dict[str, Any] = {"revision": settings.revision, "trust_remote_code": settings.trust_remote_code}
    if settings.dtype != "auto":
        kwargs["dtype"] = getattr(torch, _DTYPES[settings.dtype])
    elif not torch.cuda.is_available():
        kwargs["dtype"] = torch.float32
    if settings.attn_implementation:
        kwargs["attn_implementation"] = settings.attn_implementation
    if settings.load_in_4bit or settings.load_in_8bit:
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=settings.load_in_4bit,
            load_in_8bit=settings.load_in_8bit,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=torch.bfloat16,
            bnb_4bit_use_double_quant=True,
        )
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    new = add_special_tokens(model, tokenizer, settings.special_tokens)
    if model.generation_config is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer, new
