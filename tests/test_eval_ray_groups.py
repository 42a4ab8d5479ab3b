"""``rewardsmith eval --engine ray`` with several shards per Ray task: the same files as the local engine, and a
shard that kills its worker costs only its own rows (a real local Ray of 2 CPUs, as in ``test_eval_ray.py``)."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from test_eval_ray import HELPERS, _rows, in_root, local_ray  # noqa: E402, F401  (the fixtures, shared)

from rewardsmith import evaluate  # noqa: E402
from rewardsmith.integrations.rayengine import evaluation as ray_eval  # noqa: E402
from tests.eval_helpers import write_rows  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray"), pytest.mark.timeout(300)]


@pytest.fixture
def groups_of_four(monkeypatch):
    """Four shards per Ray task from the first one (the measured size needs a measurement first)."""
    monkeypatch.setattr(ray_eval._Groups, "size", lambda self: 4)


def test_grouped_shards_write_the_files_of_the_local_engine(tmp_path, groups_of_four):
    data = write_rows(tmp_path / "rows.jsonl", 37)
    options = dict(completions_column="completion", batch_size=2, progress=False)
    local = evaluate(str(data), "think_format", tmp_path / "local", **options)
    on_ray = evaluate(str(data), "think_format", tmp_path / "ray", engine="ray", **options)
    assert _rows(on_ray.results_path) == _rows(local.results_path)
    assert on_ray.summary == local.summary


def test_a_shard_that_kills_its_worker_in_a_group_costs_only_its_own_rows(tmp_path, monkeypatch, groups_of_four):
    monkeypatch.setattr(ray_eval, "_TASK_RETRIES", 0)
    completions = [f"it is {i}" for i in range(12)]
    completions[5] = "die"  # rows 4 and 5 share a shard; shards of rows 0-7 share a task
    options = dict(converter="generic", completions_column="completion", batch_size=2, progress=False)
    rows = [{"prompt": f"q{i}", "answer": str(i), "completion": text} for i, text in enumerate(completions)]
    report = evaluate(rows, f"{HELPERS}:contains_or_die", tmp_path / "out", engine="ray", **options)
    scores = [r["rewards"]["contains_or_die"]["score"] for r in report.rows()]
    assert scores == [1.0] * 4 + [None] * 2 + [1.0] * 6  # the group was sent again shard by shard


def test_the_group_size_follows_the_measured_time_per_shard():
    from rewardsmith.evaluation.engines import Shard, ShardScores

    groups = ray_eval._Groups()
    assert groups.size() == 1  # nothing measured yet
    groups.measured(Shard([None] * 10, ["x"] * 10, {}), ShardScores({}, 0.0001))  # 1 ms a shard
    assert groups.size() == ray_eval.MAX_GROUP
    groups.per_shard = ray_eval.GROUP_SECONDS / 3
    assert groups.size() == 3
    groups.per_shard = 10 * ray_eval.GROUP_SECONDS
    assert groups.size() == 1
