"""The light core install: the built wheel, installed alone (no extras) in a fresh virtual environment, offline.

The wheel's core dependencies come from a local wheelhouse (``make wheelhouse``
downloads them; ``make test`` does it first and sets ``REWARDSMITH_WHEELHOUSE``),
so the install resolves exactly the core's dependency tree and nothing else:
if torch or TRL crept into the core, the install would fail offline or the
check below that torch is absent would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("light-install")]

SCRIPT = textwrap.dedent(
    """
    import importlib.util, json
    import rewardsmith
    from rewardsmith import get_reward, list_rewards

    fmt = get_reward("think_format")
    gsm8k = get_reward("gsm8k_accuracy")
    math = get_reward("math_accuracy", timeout=None)
    completions = ["<think>9*2</think><answer>18</answer>", r"so \\boxed{\\frac{1}{2}}", "no answer"]
    out = {
        "think_format": fmt(completions=completions),
        "gsm8k_accuracy": gsm8k(completions=completions, answer=["18", "0.5", "3"]),
        "math_accuracy": math(completions=completions, answer=["18", r"\\dfrac12", "3"]),
        "absent": [m for m in ("torch", "trl", "transformers", "peft", "accelerate", "matplotlib", "datasets")
                   if importlib.util.find_spec(m) is not None],
        "rewards": len(list_rewards()),
        "file": rewardsmith.__file__,
    }
    print(json.dumps(out))
    """
)


def _wheelhouse() -> Path:
    folder = os.environ.get("REWARDSMITH_WHEELHOUSE")
    if not folder:
        pytest.skip("set REWARDSMITH_WHEELHOUSE to a folder of the core's wheels (`make test` does: make wheelhouse)")
    path = Path(folder)
    if not path.is_absolute():
        path = ROOT / path
    if not (path / ".complete").is_file():
        pytest.fail(f"the wheelhouse {path} is incomplete; run `make wheelhouse` (it downloads the core's wheels)")
    return path


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    # the fresh environment alone: a PYTHONPATH pointing at a checkout would import it instead of the wheel
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, **kwargs)


@pytest.fixture(scope="module")
def core_only_venv(tmp_path_factory) -> Path:
    wheelhouse = _wheelhouse()
    work = tmp_path_factory.mktemp("light-install")
    source = work / "source"  # build from a clean copy: no build/ or egg-info left in the checkout
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".venv", ".git", ".cache", "runs", "outputs", "*.egg-info", "build", "dist"),
    )
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"), "."],
        cwd=source,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("rewardsmith-*.whl")
    venv = work / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(wheelhouse),
            str(wheel),
        ]
    )
    assert installed.returncode == 0, installed.stderr + installed.stdout
    return venv


def test_the_wheel_alone_scores_without_torch(core_only_venv, tmp_path):
    import json

    result = _run([str(core_only_venv / "bin" / "python"), "-c", SCRIPT], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["think_format"] == [1.0, 0.0, 0.0]
    assert out["gsm8k_accuracy"] == [1.0, 1.0, 0.0]
    assert out["math_accuracy"] == [1.0, 1.0, 0.0]
    assert out["absent"] == [], f"the core install pulled in {out['absent']}"
    assert out["rewards"] >= 13
    assert str(core_only_venv) in out["file"]  # the installed wheel, not the checkout


def test_the_rewards_command_works_and_train_says_what_to_install(core_only_venv, tmp_path):
    command = core_only_venv / "bin" / "rewardsmith"
    listed = _run([str(command), "rewards", "list"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "think_format" in listed.stdout and "math_accuracy" in listed.stdout
    config = tmp_path / "run.yaml"
    config.write_text("model: {name_or_path: builtin:tiny}\ndataset: {source: d.jsonl}\nrewards: [think_format]\n")
    train = _run([str(command), "train", str(config), "--dry-run"], cwd=tmp_path)
    assert train.returncode == 2
    message = " ".join(train.stderr.split())
    assert "pip install 'rewardsmith[train]'" in message and "torch" in message
    evaluation = _run(
        [str(command), "eval", "--dataset", "d.jsonl", "--rewards", "think_format", "--output-dir", "out"], cwd=tmp_path
    )
    assert evaluation.returncode == 2
    assert "pip install 'rewardsmith[eval]'" in " ".join(evaluation.stderr.split())


def test_serve_and_the_ray_engine_say_what_to_install(core_only_venv, tmp_path):
    serve = _run([str(core_only_venv / "bin" / "rewardsmith"), "serve", "think_format"], cwd=tmp_path)
    assert serve.returncode == 2
    assert "pip install 'rewardsmith[serve]'" in " ".join(serve.stderr.split())
    script = "from rewardsmith import get_reward\nget_reward('think_format', engine='ray', workers=2)"
    ray = _run([str(core_only_venv / "bin" / "python"), "-c", script], cwd=tmp_path)
    assert ray.returncode != 0 and "pip install 'rewardsmith[ray]'" in ray.stderr
