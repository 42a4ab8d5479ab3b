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

The headline rows use the defaults (``reuse=True``: each worker's waiting
sandbox serves its programs, each forked into new namespaces). Rows with
``reuse`` off (a sandbox started per program) show that path with
``prestart="auto"`` (with one worker on a machine of more CPUs, the next
sandbox starts on an idle core while a program runs; with as many workers as
CPUs, none starts ahead) and with ``prestart`` off. CPU per program (this
process and every process below it, the waiting sandboxes stopped so that
theirs is counted) is measured one at a time. The load average is printed at
the start and the end: the machine is shared.
"""

from __future__ import annotations

import json
import os
import resource
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
from rewardsmith.sandbox.launch import close_sandboxes

_DATA = [p / "shared" / "data" for p in Path(__file__).resolve().parents if (p / "shared" / "data").is_dir()]
MBPP = (_DATA[0] if _DATA else Path("shared/data")) / "mbpp.jsonl"
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


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (sandboxes started here, bare runs)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


_LONGEST: dict[str, float] = {}


def _bare(python: str, paths: list[Path], workers: int) -> tuple[float, float]:
    def one(path: Path) -> int:
        started = time.perf_counter()
        code = subprocess.run([python, str(path)], capture_output=True, timeout=60).returncode
        if workers == 1:  # the longest single program bounds what a second worker can gain
            _LONGEST[str(path.parent)] = max(_LONGEST.get(str(path.parent), 0.0), time.perf_counter() - started)
        return code

    started, cpu = time.perf_counter(), _cpu()
    if workers == 1:
        codes = [one(p) for p in paths]
    else:
        with ThreadPoolExecutor(workers) as pool:
            codes = list(pool.map(one, paths))
    elapsed = time.perf_counter() - started
    assert sum(c != 0 for c in codes) <= len(codes) // 50, "the bare runs failed"
    return elapsed, _cpu() - cpu


def _sandboxed(reward, completions: list[str], tests: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (the CPU only counts where the reward runs in this process: one worker)."""
    started, cpu = time.perf_counter(), _cpu()
    scores = reward(completions=completions, tests=tests)
    elapsed = time.perf_counter() - started
    assert sum(s == 1.0 for s in scores) >= 0.98 * len(scores), f"only {sum(s == 1.0 for s in scores)} passed"
    return elapsed, _cpu() - cpu


def _cpu_of(reward, completions: list[str], tests: list[str]) -> float:
    """CPU seconds of one call, one worker, with every process it used counted (its waiting sandbox stopped)."""
    close_sandboxes()
    started = _cpu()
    _sandboxed(reward, completions, tests)
    close_sandboxes()
    return _cpu() - started


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
    settings = {"": {}, ", reuse off": {"reuse": False}, ", reuse off, prestart off": {"reuse": False, "prestart": 0}}
    rewards = {
        (w, label): get_reward("code_tests", workers=w, test_timeout=10.0, backend_settings=extra)
        for w in (1, 2)
        for label, extra in settings.items()
    }
    with tempfile.TemporaryDirectory() as folder:
        for name, (bare_programs, completions, tests) in _workloads().items():
            paths = _bare_files(bare_programs, Path(folder) / name.replace(" ", "_"))
            for reward in rewards.values():
                reward(completions=completions[:4], tests=tests[:4])  # start the worker pools
            times: dict[str, list[tuple[float, float]]] = {}
            for _ in range(ROUNDS):
                for workers in (1, 2):
                    times.setdefault(f"bare, {workers} at a time", []).append(_bare(iso.python, paths, workers))
                    for label in settings:
                        key = f"sandbox, {workers} worker(s){label}"
                        times.setdefault(key, []).append(_sandboxed(rewards[workers, label], completions, tests))
                times.setdefault("bare, this interpreter", []).append(_bare(sys.executable, paths, 1))
            cpu = {
                "bare": min(_bare(iso.python, paths, 1)[1] for _ in range(ROUNDS)),
                "sandbox": min(_cpu_of(rewards[1, ""], completions, tests) for _ in range(ROUNDS)),
                "sandbox, reuse off": min(
                    _cpu_of(rewards[1, list(settings)[2]], completions, tests) for _ in range(ROUNDS)
                ),
            }
            _report(name, len(paths), times, settings, cpu, _LONGEST[str(paths[0].parent)])
    for reward in rewards.values():
        reward.close()
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


def _bound(one: float, longest: float) -> float:
    """The most two at a time can gain over ``one`` (seconds, one at a time): no less than the longest program."""
    return one / max(one / 2, longest)


def _report(
    name: str, n: int, times: dict[str, list[tuple[float, float]]], settings: dict, cpu: dict, longest: float
) -> None:
    m = {key: statistics.median(wall for wall, _ in values) for key, values in times.items()}
    print(f"\n{name}: {n} programs, median of {ROUNDS} interleaved rounds")
    for key, value in m.items():
        print(f"  {key:36s} {value:7.2f} s   {n / value:7.1f} programs/s")
    ratios = [
        ("sandbox / bare, 1 at a time", m["sandbox, 1 worker(s)"] / m["bare, 1 at a time"], 1.3, False),
        ("  (bare on this interpreter)", m["sandbox, 1 worker(s)"] / m["bare, this interpreter"], None, False),
        ("sandbox / bare, 2 at a time", m["sandbox, 2 worker(s)"] / m["bare, 2 at a time"], None, False),
        ("sandbox, 2 vs 1 workers", m["sandbox, 1 worker(s)"] / m["sandbox, 2 worker(s)"], 1.6, True),
        (f"  (at most, longest program {longest:.2f} s)", _bound(m["sandbox, 1 worker(s)"], longest), None, True),
    ]
    for label in list(settings)[1:]:
        one, two = m[f"sandbox, 1 worker(s){label}"], m[f"sandbox, 2 worker(s){label}"]
        ratios.append((f"  ({label[2:]}) / bare, 1 at a time", one / m["bare, 1 at a time"], None, False))
        ratios.append((f"  ({label[2:]}) 2 vs 1 workers", one / two, None, True))
    ratios.append(("bare, 2 vs 1 at a time", m["bare, 1 at a time"] / m["bare, 2 at a time"], None, True))
    ratios.append(
        (f"  (at most, longest program {longest:.2f} s)", _bound(m["bare, 1 at a time"], longest), None, True)
    )
    for label, value, target, higher in ratios:
        judged = f"  ({verdict(value, target, higher)})" if target is not None else ""
        print(f"  {label:36s} {value:.2f}x{judged}")
    per = {key: value / n * 1000 for key, value in cpu.items()}
    print(f"  CPU per program, one at a time, least of {ROUNDS}: bare {per['bare']:.1f} ms", end="")
    for key in list(per)[1:]:
        print(f", {key} {per[key]:.1f} ms ({per[key] / per['bare']:.2f}x)", end="")
    print()


if __name__ == "__main__":
    main()
