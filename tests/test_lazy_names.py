"""Names resolved lazily: a built-in name imports its own module only, and a worker scoring one reward stays light.

Counted in modules loaded by a fresh process (never in time): ``get_reward("think_format")`` loads at most 40
rewardsmith modules and none of the sandbox, the judges or the HTTP client; a worker unpickling and scoring
``gsm8k_accuracy`` at most 35 and no sandbox module; ``import rewardsmith`` no more than the core.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY_PARTS = ("rewardsmith.sandbox", "rewardsmith.judges", "rewardsmith.http")


def _ours_after(script: str) -> list[str]:
    script = (
        f"import json, sys\n{script}\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('rewardsmith'))))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_a_builtin_name_loads_only_its_own_module():
    loaded = _ours_after("from rewardsmith import get_reward\nget_reward('think_format')(completions=['x'])")
    assert len(loaded) <= 40, loaded
    assert not [m for m in loaded if m.startswith(HEAVY_PARTS)], loaded
    assert "rewardsmith.rewards.code_tests" not in loaded and "rewardsmith.compose" not in loaded


def test_a_worker_scoring_gsm8k_accuracy_stays_light():
    import cloudpickle

    from rewardsmith import get_reward

    payload = cloudpickle.dumps(get_reward("gsm8k_accuracy")).hex()
    loaded = _ours_after(
        "import cloudpickle\n"
        "import rewardsmith.core._worker, rewardsmith.core.sample\n"  # what a worker process imports to start
        f"reward = cloudpickle.loads(bytes.fromhex({payload!r}))\n"
        "assert reward(completions=['#### 5'], answer=['5']) == [1.0]"
    )
    assert len(loaded) <= 35, loaded
    assert not [m for m in loaded if m.startswith("rewardsmith.sandbox")], loaded


def test_importing_rewardsmith_loads_the_core_only():
    loaded = _ours_after("import rewardsmith")
    assert all(m == "rewardsmith" or m.startswith("rewardsmith.core") for m in loaded), loaded
    assert len(loaded) <= 22, loaded  # as many as before the names became lazy


def test_the_static_table_names_every_builtin_and_its_module():
    found = _ours_after(
        "import importlib, pkgutil, rewardsmith.rewards, rewardsmith.judges\n"
        "for package in (rewardsmith.rewards, rewardsmith.judges):\n"  # every module, so a new one is seen
        "    for info in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "import rewardsmith.integrations.remote\n"
        "from rewardsmith.core.registry import BUILTIN_REWARDS, REWARDS, list_rewards\n"
        "names = list_rewards()\n"
        "wrong = [n for n in names if n in BUILTIN_REWARDS and REWARDS.get(n).__module__ != BUILTIN_REWARDS[n]]\n"
        "builtin = [n for n in names if getattr(REWARDS.get(n), '__module__', '').startswith('rewardsmith.')]\n"
        "missing = sorted(set(builtin) - set(BUILTIN_REWARDS))\n"
        "unregistered = sorted(set(BUILTIN_REWARDS) - set(names))\n"
        "if wrong or missing or unregistered:\n"
        "    sys.exit('BUILTIN_REWARDS is out of date: ' + json.dumps({'wrong module': wrong, 'not in the table': "
        "missing, 'not registered': unregistered}))"
    )
    assert "rewardsmith.rewards.countdown" in found  # the script exits non-zero, saying what, when the table is stale


def test_every_builtin_class_is_importable_from_the_package():
    import rewardsmith.rewards

    for name in rewardsmith.rewards.__all__:
        assert getattr(rewardsmith.rewards, name).__name__ == name


def test_a_gate_entry_loads_the_composition_module_and_its_rewards_only():
    loaded = _ours_after(
        "from rewardsmith import get_reward\n"
        "get_reward({'gate': {'condition': 'think_format', 'reward': 'gsm8k_accuracy'}})"
    )
    assert "rewardsmith.compose.config" in loaded
    assert not [m for m in loaded if m.startswith(HEAVY_PARTS)], loaded


def test_a_reward_by_file_path_loads_no_builtin_family(tmp_path):
    (tmp_path / "mine.py").write_text("def says_two(completion: str) -> float:\n    return float('2' in completion)\n")
    loaded = _ours_after(
        f"from rewardsmith import get_reward\nassert get_reward({str(tmp_path / 'mine.py') + ':says_two'!r})"
        "(completions=['2']) == [1.0]"
    )
    assert not [m for m in loaded if m.startswith((*HEAVY_PARTS, "rewardsmith.rewards."))], loaded
