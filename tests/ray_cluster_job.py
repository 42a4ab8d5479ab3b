"""A local multi-node Ray cluster (Ray's ``cluster_utils``: a head and two more raylets on this machine, 1 CPU
each), and the reward engine and the evaluation engine across it. Run by ``tests/test_ray_cluster.py`` in its own
process (one Ray driver per process); prints one JSON object of what it saw. A fourth node is added, and killed,
during an evaluation job (twice: with Ray's task retries and without)."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from rewardsmith import reward

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))


@reward
def node_of(completion: str) -> float:
    """The sample's length plus 1000 times a number naming the node it ran on (the start of the node's id)."""
    import ray

    time.sleep(float(completion.split(":")[1]) if ":" in completion else 0.0)
    node = ray.get_runtime_context().get_node_id()
    return float(int(node[:6], 16)) * 1000 + len(completion.split(":")[0])


@reward
def slow_len(completion: str, delay: float = 0.0, started: str = "") -> float:
    """The length of the completion, after ``delay`` seconds (a column); when ``started`` (a column) names a
    folder, first leaves a file there named by the node it runs on (so a test sees where work is in flight)."""
    if started:
        import uuid

        import ray

        Path(started, f"{ray.get_runtime_context().get_node_id()}-{uuid.uuid4().hex}").write_text(completion)
    time.sleep(float(delay or 0.0))
    return float(len(completion))


def _rows(path: Path, completions: list[str], **columns) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for i, completion in enumerate(completions):
            row = {"prompt": f"q{i}", "answer": str(i), "completion": completion, **columns}
            handle.write(json.dumps(row) + "\n")
    return path


def _reward_engine_same_as_local() -> bool:
    """A built-in reward's scores through the Ray reward engine (actors on the nodes left) equal the local ones."""
    from rewardsmith import get_reward

    answers = ["1/2", "3", "x^2", "10", "-4", "\\sqrt{2}"] * 5
    texts = [f"so \\boxed{{{a}}}" for a in ["0.5", "3", "x**2", "9", "-4", "\\sqrt2"] * 5]
    texts[7] = "no answer at all"
    local = get_reward("math_accuracy")
    on_ray = get_reward("math_accuracy").configure(engine="ray", workers=2, timeout=60.0)
    try:
        here, there = local(completions=texts, answer=answers), on_ray(completions=texts, answer=answers)
    finally:
        on_ray.close()
    return here == there and len(set(here)) > 1


def _node_killed_during_evaluation(cluster, out_dir: Path, retries: int | None = None) -> dict:
    """An evaluation job on Ray with a node killed while its tasks score: every row written, in order, each
    scored as locally or ``None`` with the error (Ray retries a task its node took down, ``retries`` times:
    the engine's setting when ``None``)."""
    from rewardsmith.evaluation import evaluate
    from rewardsmith.integrations.rayengine import evaluation as ray_evaluation

    out_dir.mkdir()
    doomed = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    started = out_dir / "started"
    started.mkdir()
    texts = [f"r{i}-{'d' * (i % 5)}" for i in range(36)]
    slow = _rows(out_dir / "slow.jsonl", texts, delay=0.3, started=str(started))
    quick = _rows(out_dir / "quick.jsonl", texts, delay=0.0, started="")
    spec = f"{Path(__file__).resolve()}:slow_len"
    box: dict = {}
    default = ray_evaluation._TASK_RETRIES
    ray_evaluation._TASK_RETRIES = default if retries is None else retries

    def job() -> None:
        box["report"] = evaluate(str(slow), spec, out_dir / "killed", progress=False,
                                 completions_column="completion", engine="ray", batch_size=2)  # fmt: skip

    runner = threading.Thread(target=job)
    runner.start()
    deadline = time.monotonic() + 240
    while not any(f.name.startswith(doomed.node_id) for f in started.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    on_doomed = sum(f.name.startswith(doomed.node_id) for f in started.iterdir())
    killed_while_running = runner.is_alive()
    cluster.remove_node(doomed, allow_graceful=False)
    runner.join(timeout=600)
    ray_evaluation._TASK_RETRIES = default
    local = evaluate(str(quick), spec, out_dir / "local", progress=False, completions_column="completion")
    got = [(row["index"], row["rewards"]["slow_len"]) for row in box["report"].rows()] if "report" in box else []
    want = [(row["index"], row["rewards"]["slow_len"]) for row in local.rows()]
    return {
        "on_doomed_node": on_doomed,
        "while_running": killed_while_running,
        "rows": len(got),
        "order_kept": [i for i, _ in got] == [i for i, _ in want] == list(range(len(texts))),
        "none": sum(r["score"] is None for _, r in got),
        "none_errors": sorted({r["error"].split(":")[0] for _, r in got if r["score"] is None}),
        "same_as_local": all((r["score"] is None and r["error"]) or r == w for (_, r), (_, w) in zip(got, want)),
        "local_scores": [w["score"] for _, w in want] == [float(len(t)) for t in texts],
        "starts": len(list(started.iterdir())),
    }


def main(out_dir: str) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from rewardsmith.evaluation import evaluate

    # a dead raylet is found by the GCS health checks: every second, declared dead after 5 failed (Ray: every 3 s),
    # so a killed node costs seconds of waiting, not tens; each check still waits 10 s for an answer (busy machines)
    checks = {
        "health_check_period_ms": 1000,
        "health_check_failure_threshold": 5,
        "health_check_initial_delay_ms": 1000,
    }
    head = {"num_cpus": 1, "include_dashboard": False, "_system_config": checks}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    report: dict = {"nodes": len([n for n in ray.nodes() if n["Alive"]])}

    texts = [f"{'a' * (i % 7 + 1)}:0.05" for i in range(60)]
    r = node_of.configure(engine="ray", workers=3, timeout=60.0)
    deadline = time.monotonic() + 240
    seen: set[int] = set()
    while len(seen) < 3 and time.monotonic() < deadline:
        scores = r(completions=texts)
        seen |= {int(s // 1000) for s in scores if s is not None}
    alive = {int(n["NodeID"][:6], 16) for n in ray.nodes() if n["Alive"]}
    report["placed_on_nodes"] = len(seen & alive)
    report["order_kept"] = [int(s % 1000) for s in scores] == [i % 7 + 1 for i in range(60)]

    r.close()  # its actors hold every CPU of the cluster

    # the evaluation engine's tasks on every node too, rows in order
    spread = _rows(Path(out_dir) / "spread.jsonl", [f"{'c' * (i % 4 + 1)}:0.3" for i in range(48)])
    placed = evaluate(str(spread), f"{Path(__file__).resolve()}:node_of", Path(out_dir) / "spread", progress=False,
                      completions_column="completion", engine="ray", batch_size=2)  # fmt: skip
    values = [row["rewards"]["node_of"]["score"] for row in placed.rows()]
    report["eval_placed_on_nodes"] = len({int(v // 1000) for v in values} & alive)
    report["eval_order_kept"] = [int(v % 1000) for v in values] == [i % 4 + 1 for i in range(48)]
    r = node_of.configure(engine="ray", workers=3, timeout=60.0)
    assert r(completions=texts) is not None

    # a node killed while a call is in flight: every sample comes back, in order, scored or None
    slow = [f"{'b' * (i % 5 + 1)}:0.2" for i in range(40)]
    box: dict = {}
    call = threading.Thread(target=lambda: box.update(scores=r(completions=slow)))
    call.start()
    time.sleep(2.0)
    cluster.remove_node(workers[0], allow_graceful=False)
    call.join(timeout=600)
    got = box.get("scores")
    report["after_kill_returned"] = got is not None and len(got) == len(slow)
    report["after_kill_order_kept"] = got is not None and all(
        s is None or int(s % 1000) == i % 5 + 1 for i, s in enumerate(got)
    )
    report["after_kill_none"] = sum(s is None for s in got) if got else None
    report["after_kill_errors"] = r.stats.get("errors", 0)
    # the call after: an actor whose node died after it had answered is found dead only now; its sample is
    # counted None like the others, and the call after that is served whole by the nodes left
    again = r(completions=texts[:10])
    report["after_kill_next_call"] = len(again) == 10 and all(
        s is None or int(s % 1000) == i % 7 + 1 for i, s in enumerate(again)
    )
    later = r(completions=texts[:10])
    report["after_kill_later_call"] = [None if s is None else int(s % 1000) for s in later] == [
        i % 7 + 1 for i in range(10)
    ]
    r.close()
    report["reward_engine_same_as_local"] = _reward_engine_same_as_local()
    # a node added, then killed during an evaluation job: with Ray's retries (the default), and with none
    report["eval_kill"] = _node_killed_during_evaluation(cluster, Path(out_dir) / "kill")
    report["eval_kill_no_retries"] = _node_killed_during_evaluation(cluster, Path(out_dir) / "kill0", retries=0)

    # the evaluation engine across the nodes that are left: the same scores as local
    data = _rows(Path(out_dir) / "rows.jsonl", [f"#### {i if i % 3 else 0}" for i in range(40)])
    on_ray = evaluate(str(data), "gsm8k_accuracy", Path(out_dir) / "ray", completions_column="completion",
                      progress=False, engine="ray", batch_size=4)  # fmt: skip
    local = evaluate(str(data), "gsm8k_accuracy", Path(out_dir) / "local", completions_column="completion",
                     progress=False, batch_size=4)  # fmt: skip

    def rows(report_) -> list:
        return [(row["index"], row["rewards"]) for row in report_.rows()]

    report["eval_same_as_local"] = rows(on_ray) == rows(local) and len(rows(local)) == 40
    ray.shutdown()
    cluster.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
