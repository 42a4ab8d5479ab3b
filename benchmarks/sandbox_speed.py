"""Sandbox speed: programs per second through ``code_tests`` vs a bare ``subprocess.run([python, file])``.

Two workloads: a trivial program (``print(1)``, checked against its expected
output), and the MBPP reference solutions (the first ``N_MBPP`` problems), run
against their own asserts. The bare baseline writes each program (solution
plus asserts) to a file and runs it with ``subprocess.run`` on the same
interpreter the sandbox uses (and, for reference, on this process's own
interpreter, site-packages and all): the floor any local executor pays, with
no isolation, no limits and no verdict it could trust. Both are run with one
and with two at a time (the reward's ``workers``; a thread pool for the bare
runs), in interleaved rounds, and compared by medians measured in this one run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import verdict

from rewardsmith import get_reward
from rewardsmith.data import prepare_dataset
from rewardsmith.sandbox import detect

MBPP = Path(__file__).resolve().parents[2] / "shared" / "data" / "mbpp.jsonl"
N_TRIVIAL = 200
N_MBPP = 200
ROUNDS = 3


def _bare_files(programs: list[str], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, text in enumerate(programs):
        path = folder / f"p{i}.py"
        path.write_text(text)
        paths.append(path)
    return paths


def _bare(python: str, paths: list[Path], workers: int) -> float:
    def one(path: Path) -> int:
        return subprocess.run([python, str(path)], capture_output=True, timeout=60).returncode

    started = time.perf_counter()
    if workers == 1:
        codes = [one(p) for p in paths]
    else:
        with ThreadPoolExecutor(workers) as pool:
            codes = list(pool.map(one, paths))
    elapsed = time.perf_counter() - started
    assert sum(c != 0 for c in codes) <= len(codes) // 50, "the bare runs failed"
    return elapsed


def _sandboxed(reward, completions: list[str], tests: list[str]) -> float:
    started = time.perf_counter()
    scores = reward(completions=completions, tests=tests)
    elapsed = time.perf_counter() - started
    assert sum(s == 1.0 for s in scores) >= 0.98 * len(scores), f"only {sum(s == 1.0 for s in scores)} passed"
    return elapsed


def _workloads() -> dict[str, tuple[list[str], list[str], list[str]]]:
    trivial = (
        ["print(1)\n"] * N_TRIVIAL,
        ["```python\nprint(1)\n```"] * N_TRIVIAL,
        ['{"inputs": [""], "outputs": ["1"]}'] * N_TRIVIAL,
    )
    rows = [json.loads(line) for line in MBPP.read_text().splitlines()][:N_MBPP]
    rows = [r for r in rows if r["task_id"] not in (596, 642)]  # their asserts fail on any interpreter
    ds = prepare_dataset(rows, converter="mbpp", conversational=False)
    bare = [f"{r['code']}\n{r['test_setup_code']}\n" + "\n".join(r["test_list"]) + "\n" for r in rows]
    bare = [text.replace("\r\n", "\n") for text in bare]
    fenced = [f"```python\n{r['code']}\n```".replace("\r\n", "\n") for r in rows]
    return {"trivial": trivial, "MBPP references": (bare, fenced, list(ds["tests"]))}


def main() -> None:
    iso = detect()
    print(f"sandbox: {iso.mode} ({iso.reason}); interpreter {iso.python}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start (a shared machine)")
    rewards = {w: get_reward("code_tests", workers=w, test_timeout=10.0) for w in (1, 2)}
    with tempfile.TemporaryDirectory() as folder:
        for name, (bare_programs, completions, tests) in _workloads().items():
            paths = _bare_files(bare_programs, Path(folder) / name.replace(" ", "_"))
            for reward in rewards.values():
                reward(completions=completions[:4], tests=tests[:4])  # start the worker pools
            times: dict[str, list[float]] = {}
            for _ in range(ROUNDS):
                for workers in (1, 2):
                    times.setdefault(f"bare {workers}", []).append(_bare(iso.python, paths, workers))
                    times.setdefault(f"sandbox {workers}", []).append(_sandboxed(rewards[workers], completions, tests))
                times.setdefault("bare (this interpreter) 1", []).append(_bare(sys.executable, paths, 1))
            median = {key: statistics.median(values) for key, values in times.items()}
            n = len(paths)
            print(f"\n{name}: {n} programs, median of {ROUNDS} interleaved rounds")
            for key in ("bare 1", "bare (this interpreter) 1", "sandbox 1", "bare 2", "sandbox 2"):
                print(f"  {key:28s} {median[key]:7.2f} s   {n / median[key]:7.1f} programs/s")
            ratio = median["sandbox 1"] / median["bare 1"]
            ratio_own = median["sandbox 1"] / median["bare (this interpreter) 1"]
            scaling = median["sandbox 1"] / median["sandbox 2"]
            print(f"  sandbox / bare, 1 worker     {ratio:.2f}x  ({verdict(ratio, 1.3, False)}; same interpreter)")
            print(f"  sandbox / bare (this python) {ratio_own:.2f}x  ({verdict(ratio_own, 1.3, False)})")
            print(f"  sandbox / bare, 2 workers    {median['sandbox 2'] / median['bare 2']:.2f}x")
            print(f"  sandbox, 2 vs 1 workers      {scaling:.2f}x  ({verdict(scaling, 1.6, True)})")
            print(f"  bare, 2 vs 1 at a time       {median['bare 1'] / median['bare 2']:.2f}x")
    for reward in rewards.values():
        reward.close()


if __name__ == "__main__":
    main()
