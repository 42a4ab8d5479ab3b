"""Harbor's reward files both ways: write ``reward.json`` from rewardsmith rewards, read a RewardKit folder as a reward.

A Harbor task's verifier writes ``/logs/verifier/reward.json`` (names to
numbers; ``reward`` is the one Harbor trains on) and, as Harbor's RewardKit
does, ``reward-details.json`` beside it (per name: its score, ``kind`` and the
``criteria`` that made it).

* :func:`write_reward_files` scores a task's output (the agent's answer, or
  its rollout as messages) with rewardsmith rewards and writes both files:
  ``reward`` is the combined score (the rewards with their weights), and each
  component has its own entry; a reward that does not score the output writes
  0.0 with the reason as the criterion's ``error``.
* :func:`harbor_reward` reads a RewardKit criteria folder (``tests/`` with
  ``.py`` files calling ``rewardkit`` criteria, and ``reward.toml``) as a
  rewardsmith reward: each completion is written to ``answer_file`` in a
  fresh workspace (a copy of the row's ``workspace_column`` folder when given),
  RewardKit runs the folder on it, and the score is its ``reward.json``'s
  ``key``. RewardKit needs Python 3.12 or later: ``python=`` names the
  interpreter that has ``harbor-rewardkit`` (``make harbor`` builds one in
  ``.cache/harbor-venv``); one process scores a whole batch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.compose.spec import weighted_sum
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.inputs import Batch
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward

__all__ = ["HarborReward", "harbor_reward", "reward_files", "write_reward_files"]

#: What RewardKit calls the details file, next to ``reward.json``.
DETAILS_FILE = "reward-details.json"


def reward_files(
    rewards: Any, completion: Any, *, prompt: Any = None, weights: Sequence[float] | None = None, **columns: Any
) -> tuple[dict[str, float], dict[str, Any]]:
    """The contents of ``reward.json`` and ``reward-details.json`` for one output (see :func:`write_reward_files`).

    >>> main, details = reward_files([{"name": "gsm8k_accuracy", "weight": 2}, "think_format"], "#### 18",
    ...                              answer="18")
    >>> main
    {'reward': 2.0, 'gsm8k_accuracy': 1.0, 'think_format': 0.0}
    >>> details["gsm8k_accuracy"]["criteria"][0]["value"], details["reward"]["kind"]
    (1.0, 'group')
    """
    from rewardsmith.compose.common import unique_labels
    from rewardsmith.integrations.trl_async import reward_list

    made, chosen = reward_list(rewards, weights)
    scale = chosen or [1.0] * len(made)
    cols = {k: [v] for k, v in columns.items()}
    results = [r.explain(None if prompt is None else [prompt], [completion], None, **cols)[0] for r in made]
    labels = unique_labels(r.name for r in made)  # two rewards of one name get distinct entries
    main: dict[str, float] = {}
    details: dict[str, Any] = {}
    for label, weight, result in zip(labels, scale, results):
        criterion: dict[str, Any] = {
            "name": label,
            "value": round(result.score if result.score is not None else 0.0, 4),
            "raw": result.score,
            "weight": weight,
            "description": result.reason,
        }
        if result.score is None:
            criterion["error"] = result.error or f"not scored: {result.reason or 'the reward does not apply'}"
        main[label] = criterion["value"]
        details[label] = {"score": criterion["value"], "kind": "programmatic", "criteria": [criterion]}
    (weighted,) = weighted_sum([[r.score] for r in results], scale)
    total = round(weighted, 4) if weighted is not None else 0.0
    components = [{"name": label, "weight": w, "detail": details[label]} for label, w in zip(labels, scale)]
    group = {"kind": "group", "score": total, "aggregation": "weighted-sum", "components": components}
    return {"reward": total, **main}, {"reward": group, **details}


def write_reward_files(
    rewards: Any,
    completion: Any,
    output: str | os.PathLike[str] = "/logs/verifier/reward.json",
    *,
    prompt: Any = None,
    weights: Sequence[float] | None = None,
    **columns: Any,
) -> dict[str, float]:
    """Score a task's output with rewardsmith rewards and write Harbor's ``reward.json`` and its details file.

    ``completion`` is the agent's answer (text) or its rollout (messages);
    ``columns`` are what the rewards read (``answer=...``). Returns what
    ``reward.json`` holds.
    """
    main, details = reward_files(rewards, completion, prompt=prompt, weights=weights, **columns)
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(main, indent=2))
    path.with_name(DETAILS_FILE).write_text(json.dumps(details, indent=2, default=str))
    return main


#: Run in RewardKit's interpreter: every job of a batch, one result (or error) each, as JSON on stdout.
_DRIVER = """
import json, sys, warnings
import rewardkit
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scores = rewardkit.run(job["tests"], workspace=job["workspace"], output=job["output"])
        out.append({"scores": scores, "warnings": [str(w.message) for w in caught]})
    except Exception as exc:
        out.append({"error": f"{type(exc).__name__}: {exc}"})
print(json.dumps(out))
"""


@dataclass(kw_only=True, eq=False)
class HarborReward(Reward):
    """A Harbor RewardKit criteria folder as a reward (made by :func:`harbor_reward`).

    Columns: ``workspace_column`` when set (a folder copied as each completion's workspace). Range: RewardKit's.
    """

    tests_dir: str = ""
    python: str | None = None
    answer_file: str = "answer.txt"
    workspace_column: str | None = None
    key: str = "reward"
    process_timeout: float = 600.0

    default_name = "harbor_reward"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not Path(self.tests_dir).is_dir():
            raise RewardConfigError(f"harbor_reward: the criteria folder {self.tests_dir!r} does not exist")
        if Path(self.answer_file).is_absolute() or ".." in Path(self.answer_file).parts:
            raise RewardConfigError(f"answer_file must be a path inside the workspace, got {self.answer_file!r}")

    def score_batch(self, batch: Batch) -> Sequence[Any]:
        spaces = batch.column(self.workspace_column, self.name) if self.workspace_column else [None] * len(batch)
        with tempfile.TemporaryDirectory(prefix="rewardsmith-harbor-") as tmp:
            jobs = []
            for i, (text, given) in enumerate(zip(batch.texts, spaces)):
                workspace = Path(tmp, f"w{i}")
                if given:
                    shutil.copytree(given, workspace)
                workspace.mkdir(parents=True, exist_ok=True)
                target = workspace / self.answer_file
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
                jobs.append({"tests": str(Path(self.tests_dir).resolve()), "workspace": str(workspace),
                             "output": str(Path(tmp, f"o{i}", "reward.json"))})  # fmt: skip
            done = subprocess.run(
                [self.python or sys.executable, "-c", _DRIVER],
                input=json.dumps(jobs),
                capture_output=True,
                text=True,
                timeout=self.process_timeout,
                check=False,
                env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},  # offline: LiteLLM's bundled price list
            )
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                raise RuntimeError(
                    f"RewardKit did not run ({last}); harbor_reward needs an interpreter with harbor-rewardkit "
                    "(Python 3.12 or later): pass python='/path/to/python' (`make harbor` builds .cache/harbor-venv)"
                )
            outcomes = json.loads(done.stdout.strip().splitlines()[-1])
            details = [self._details(Path(j["output"])) for j in jobs]
        return [self._scored(o, d) for o, d in zip(outcomes, details)]

    def _details(self, output: Path) -> dict[str, Any]:
        path = output.with_name(DETAILS_FILE)
        return json.loads(path.read_text()) if path.exists() else {}

    def _scored(self, outcome: dict[str, Any], details: dict[str, Any]) -> RewardResult:
        if "error" in outcome:
            return RewardResult(None, error=outcome["error"])
        scores = outcome["scores"]
        if self.key not in scores:
            return RewardResult(None, f"RewardKit wrote no {self.key!r} (it wrote {', '.join(scores) or 'nothing'})")
        criteria = _criteria(details.get(self.key, {}))
        reason = "; ".join(f"{c.get('name')}={c.get('value')}" for c in criteria) or "; ".join(outcome["warnings"])
        return RewardResult(float(scores[self.key]), reason, {k: v for k, v in scores.items() if k != self.key})


def _criteria(detail: dict[str, Any]) -> list[dict[str, Any]]:
    out = list(detail.get("criteria") or [])
    for part in detail.get("components") or []:
        out += _criteria(part.get("detail") or {})
    return out


def harbor_reward(tests_dir: str | os.PathLike[str], **settings: Any) -> HarborReward:
    """A RewardKit criteria folder as a rewardsmith reward (see the module's text for ``settings``).

    >>> harbor_reward("/no/such/folder")
    Traceback (most recent call last):
    ...
    rewardsmith.core.errors.RewardConfigError: harbor_reward: the criteria folder '/no/such/folder' does not exist
    """
    return HarborReward(tests_dir=str(tests_dir), **settings)
