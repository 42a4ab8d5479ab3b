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

from rewardsmith.core.problems import ConfigError, ConfigProblems
from rewardsmith.train.builtin_models import cache_dir, resolve_model
from rewardsmith.train.config import TINY_MODEL, ModelSettings, read_sections
from rewardsmith.train.hub import hub_offline, hub_unreachable

__all__ = ["check_attention", "check_model", "load_model_and_tokenizer", "lora_config", "model_path"]

logger = logging.getLogger("rewardsmith")

_DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}


def model_path(settings: ModelSettings, cache_dir: Path) -> str:
    """The folder or Hub id to load: built-in models built or converted, GGUF files converted (once, cached).

    >>> model_path(ModelSettings(name_or_path="Qwen/Qwen2.5-0.5B-Instruct"), Path("/tmp"))
    'Qwen/Qwen2.5-0.5B-Instruct'
    """
    if settings.name_or_path == TINY_MODEL:
        from rewardsmith.train.tiny_model import build_tiny_model, tiny_model_folder

        return str(build_tiny_model(cache_dir / tiny_model_folder(settings.tiny), **settings.tiny))
    if settings.tiny:
        raise ConfigError(f"model.tiny sets how builtin:tiny is built; {settings.name_or_path!r} takes none")
    return resolve_model(settings.name_or_path, settings.gguf_file, cache_dir)


def training_tokenizer(model: Any, base: Path | None) -> str | None:
    """The folder (or Hub id) of the model a training config's ``model:`` names, as written: the tokenizer that
    counts tokens for rewards scoring text (a built-in model is built or converted once, as training does);
    ``None`` when the section is not valid (training reports why).

    >>> training_tokenizer("Qwen/Qwen2.5-0.5B-Instruct", None), training_tokenizer({"name_or_pth": "m"}, None)
    ('Qwen/Qwen2.5-0.5B-Instruct', None)
    """
    settings = read_sections({"model": model}, base, None, ConfigProblems()).model
    return None if settings is None else model_path(settings, cache_dir())


def _auto_config(path: str, settings: ModelSettings) -> Any:
    """The model's config: a local folder, else the local Hub cache, else the Hub after a bounded probe."""
    from transformers import AutoConfig

    options = {"revision": settings.revision, "trust_remote_code": settings.trust_remote_code}
    if not Path(path).exists():
        try:  # offline first: a cached model needs no network
            return AutoConfig.from_pretrained(path, local_files_only=True, **options)
        except Exception:  # not cached (or not a model): the Hub is asked below
            pass
        why = None if hub_offline() else hub_unreachable()
        if why:
            raise ConfigError(
                f"cannot read the model config of {path!r}: it is not in the local Hub cache and the Hub cannot be "
                f"reached ({why}). Download it where the Hub is reachable (hf download {path}), point name_or_path "
                "at a local folder, or use builtin:tiny to try a config offline."
            )
    try:
        return AutoConfig.from_pretrained(path, **options)
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


#: What each ``attn_implementation`` needs importable; transformers falls back to the ``kernels`` package's
#: Hub builds when the flash-attention package itself is missing.
_ATTENTION_PACKAGES = {
    "flash_attention_2": ("flash_attn", "pip install flash-attn --no-build-isolation"),
    "flash_attention_3": ("flash_attn_interface", "build flash-attention's hopper/ folder (FlashAttention-3)"),
    "flash_attention_4": ("flash_attn", "pip install flash-attn-4"),
}


def check_attention(settings: ModelSettings) -> None:
    """Whether what ``attn_implementation`` needs can be imported, before anything loads.

    ``sdpa``, ``eager`` and ``flex_attention`` need nothing more. The flash
    attention implementations need their package (or the ``kernels`` package,
    which transformers then uses to fetch a build from the Hub); a Hub kernel
    (``kernels-community/...``) needs ``kernels``.

    >>> check_attention(ModelSettings(name_or_path="m", attn_implementation="sdpa"))  # needs nothing more
    """
    wanted = (settings.attn_implementation or "").removeprefix("paged|")
    kernels = importlib.util.find_spec("kernels") is not None
    if wanted in _ATTENTION_PACKAGES:
        package, install = _ATTENTION_PACKAGES[wanted]
        if importlib.util.find_spec(package) is None and not kernels:
            raise ConfigError(
                f"model.attn_implementation {wanted!r} needs the {package} package, which is not installed. "
                f"Install it on a CUDA machine ({install}), or install `kernels` (pip install kernels) to use a build "
                "from the Hub, or set attn_implementation: sdpa"
            )
    elif "/" in wanted and not kernels:
        raise ConfigError(
            f"model.attn_implementation {wanted!r} is a Hub kernel, which needs the kernels package: pip install "
            "kernels (or set attn_implementation: sdpa)"
        )


def check_model(settings: ModelSettings, path: str) -> dict[str, Any]:
    """Everything about the model that can be checked without its weights; returns facts for the plan.

    Every problem is reported at once (QLoRA's hardware and packages, LoRA
    targets the model does not have).
    """
    config = _auto_config(path, settings)
    facts: dict[str, Any] = {"architecture": (getattr(config, "architectures", None) or ["?"])[0]}
    problems = ConfigProblems()
    if settings.load_in_4bit or settings.load_in_8bit:
        import torch

        if not torch.cuda.is_available():
            problems.add(
                "model.load_in_4bit/load_in_8bit (QLoRA) needs a CUDA GPU and bitsandbytes; none is available here. "
                "Remove it to train in full precision, or run on a GPU machine."
            )
        elif importlib.util.find_spec("bitsandbytes") is None:
            problems.add("QLoRA needs bitsandbytes: pip install 'rewardsmith[qlora]'")
        if settings.lora is None:
            problems.add("a 4-bit or 8-bit model cannot be fully fine-tuned; add model.lora (QLoRA)")
    if settings.lora is not None:
        targets = settings.lora.target_modules
        if targets != "all-linear":
            names = _module_names(config)
            wanted = [targets] if isinstance(targets, str) else list(targets)
            suffixes = {n.rsplit(".", 1)[-1] for n in names}
            missing = [t for t in wanted if t not in suffixes and not any(n.endswith(t) for n in names)]
            if missing:
                linear = sorted({n.rsplit(".", 1)[-1] for n in names if "proj" in n or "fc" in n})[:12]
                problems.add(
                    f"model.lora.target_modules {missing} are not modules of {facts['architecture']}. "
                    f"Its projection layers include: {', '.join(linear) or 'none found'}; or use 'all-linear'"
                )
        facts["lora"] = f"r={settings.lora.r}, alpha={settings.lora.alpha}, targets={targets}"
    problems.raise_if_any()
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
