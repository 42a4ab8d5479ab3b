"""Shared fixtures: the offline tiny model, the shared data folder, log capture."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
CACHE = Path(os.environ.get("REWARDSMITH_TEST_CACHE", ROOT / ".cache" / "tests"))

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@pytest.fixture(scope="session")
def tiny_model() -> Path:
    """Path of the offline tiny causal LM (built once, reused across runs)."""
    from rewardsmith.train.tiny_model import build_tiny_model

    return build_tiny_model(CACHE / "tiny-model")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real GSM8K / MATH-500 files beside the repository."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_reward_model() -> Path:
    """Path of the offline tiny sequence-classification reward model (built once, reused across runs)."""
    from rewardsmith.train.tiny_model import build_tiny_reward_model

    return build_tiny_reward_model(CACHE / "tiny-reward-model")


@pytest.fixture
def no_model_loading(monkeypatch):
    """Fail loudly if anything tries to load model weights (the tiny model's config is built in the repo's cache)."""
    import transformers

    def refuse(*args, **kwargs):
        raise AssertionError("model weights were loaded")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", refuse)
    monkeypatch.setenv("REWARDSMITH_CACHE", str(ROOT / ".cache"))


@pytest.fixture
def forget_rewards():
    """A list for the names of rewards a test registers: unregistered afterwards, so other tests see the registry
    as it was."""
    from rewardsmith.core.registry import unregister_reward

    names: list[str] = []
    yield names
    for name in names:
        with contextlib.suppress(LookupError):
            unregister_reward(name)
