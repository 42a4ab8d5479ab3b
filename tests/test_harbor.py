"""Harbor's reward files both ways, with the real harbor-rewardkit (Python 3.12+: its own interpreter).

``make harbor`` builds ``.cache/harbor-venv`` (Python 3.12 with harbor-rewardkit); ``REWARDSMITH_HARBOR_PYTHON``
names another interpreter that has it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.integrations.harbor import harbor_reward, write_reward_files

ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("REWARDSMITH_HARBOR_PYTHON", str(ROOT / ".cache" / "harbor-venv" / "bin" / "python"))
needs_rewardkit = pytest.mark.skipif(not Path(PYTHON).exists(), reason=f"no RewardKit interpreter at {PYTHON}: "
                                     "run `make harbor`")  # fmt: skip

CHECK = """
import json, sys
from rewardkit.models import Score
from rewardkit.reward import aggregate_scores
main = json.load(open(sys.argv[1]))
details = json.load(open(sys.argv[2]))
group = details["reward"]
scores = [Score(name=c["name"], value=c["detail"]["score"], raw=c["detail"]["score"], weight=c["weight"])
          for c in group["components"]]
criteria = [Score(**{k: v for k, v in c.items() if k in ("name", "value", "raw", "weight", "description")})
            for name, d in details.items() if name != "reward" for c in d["criteria"]]
print(json.dumps({"aggregate": aggregate_scores(scores, group["aggregation"]), "reward": main["reward"],
                  "criteria": [s.to_dict()["value"] for s in criteria]}))
"""


@needs_rewardkit
def test_the_reward_files_written_are_read_back_by_rewardkits_own_models(tmp_path):
    out = tmp_path / "logs" / "verifier" / "reward.json"
    config = [{"name": "gsm8k_accuracy", "weight": 2.0}, {"name": "think_format", "weight": 0.5}]
    main = write_reward_files(config, "<think>9*2</think><answer>18</answer>", out, answer="18")
    assert main == {"reward": 2.5, "gsm8k_accuracy": 1.0, "think_format": 1.0}
    assert json.loads(out.read_text()) == main
    done = subprocess.run([PYTHON, "-c", CHECK, str(out), str(out.with_name("reward-details.json"))],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"aggregate": 2.5, "reward": 2.5, "criteria": [1.0, 1.0]}  # RewardKit's weighted-sum of ours


def test_two_rewards_of_one_name_get_an_entry_each(tmp_path):
    two = [get_reward("length", max_length=5, unit="chars"), get_reward("length", max_length=2, unit="chars")]
    main = write_reward_files(two, "four", tmp_path / "reward.json", weights=[1.0, 2.0])
    assert sorted(main) == ["length", "length_2", "reward"]
    assert main["length"] == 1.0 and main["reward"] == round(1.0 + 2.0 * main["length_2"], 4)


def test_an_output_a_reward_does_not_score_is_zero_with_the_reason_as_its_error(tmp_path):
    main = write_reward_files(["gsm8k_accuracy"], "no number here", tmp_path / "reward.json", answer="18")
    details = json.loads((tmp_path / "reward-details.json").read_text())
    assert main["gsm8k_accuracy"] == 0.0
    assert details["gsm8k_accuracy"]["criteria"][0]["raw"] in (0.0, None)


def _criteria_folder(tmp_path: Path) -> Path:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "answer.py").write_text(
        "import rewardkit as rk\n\nrk.file_contains('answer.txt', '417')\nrk.file_exists('notes.md', weight=0.5)\n"
    )
    return tests


@needs_rewardkit
def test_a_rewardkit_criteria_folder_is_a_reward_over_each_completion(tmp_path):
    tests = _criteria_folder(tmp_path)
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "notes.md").write_text("notes")
    reward = harbor_reward(tests, python=PYTHON, workspace_column="workspace")
    results = reward.explain(
        completions=["The code is 417.", "The code is 400.", "417"],
        workspace=[str(tmp_path / "given"), str(tmp_path / "given"), None],
    )
    # weighted mean of the two criteria (RewardKit's default): both, notes only, the answer only
    assert [r.score for r in results] == pytest.approx([1.0, 1 / 3, 2 / 3], abs=1e-4)
    assert "file_contains:answer.txt=1.0" in results[0].reason and "file_contains:answer.txt=0.0" in results[1].reason


def test_without_rewardkit_the_reward_says_which_interpreter_to_give(tmp_path):
    reward = harbor_reward(_criteria_folder(tmp_path), python=sys.executable)
    (result,) = reward.explain(completions=["417"])
    assert result.score is None and "needs an interpreter with harbor-rewardkit" in (result.error or "")
