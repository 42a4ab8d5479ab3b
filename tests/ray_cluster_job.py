"""A local multi-node Ray cluster (Ray's ``cluster_utils``: a head and two more raylets on this machine, 1 CPU
each), and the reward engine and the evaluation engine across it. Run by ``tests/test_ray_cluster.py`` in its own
process (one Ray driver per process); prints one JSON object of what it saw."""

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


def _rows(path: Path, completions: list[str]) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for i, completion in enumerate(completions):
            handle.write(json.dumps({"prompt": f"q{i}", "answer": str(i), "completion": completion}) + "\n")
    return path


def main(out_dir: str) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from rewardsmith.evaluation import evaluate

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
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
