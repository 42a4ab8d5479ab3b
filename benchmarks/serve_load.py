"""Reward server load test: throughput and latency at 1, 8 and 32 concurrent batches, on 127.0.0.1 only.

Starts ``rewardsmith serve gsm8k_accuracy,think_format`` as a subprocess (its
defaults: 4 batches scored at once, 64 may wait), then, for each level of
concurrency, keeps that many batches of 64 GSM8K-style completions in flight
until 96 batches are done, with raw HTTP requests; every answer is checked
against the scores computed in this process (nothing lost, nothing out of
order). Then the ``remote(url)`` client reward scores 2,048 completions in
chunks of 64 at the same levels, checked the same way. Throughput is printed
with its ratio to one batch at a time; latency as median and 95th percentile.

These two rewards take about 3 ms of pure-Python CPU per batch, so the server
is bound by one core (the GIL) and extra concurrency cannot add throughput on
this machine. A second server serves a reward that waits 50 ms per batch
without using the CPU (what a judge, sandbox or reward-model call does): there
the server's 4 concurrent batches are what the throughput ratios show.

``--memory``: one big request per fresh server (``/verify`` with 10,000 to
600,000 output items, up to 56 MB, once with one character outside the BMP; a
56 MB ``/score`` of 8,192 completions; a 2 MB ``/score`` body of 699,029 empty
completions, refused; one completion at the server's limit on one text,
``--max-text-mb``, and one over it, refused): the server's peak memory growth,
as a multiple of the body, and ``/health`` latency (p50, p95, max) while the
request is in flight, the request sent from a process of its own.

``--memory --text``: only the long-text cases. ``--memory --text-sizes``:
``/health`` while one completion of 1 to 8 MiB (one letter repeated, or lines
of text with quotes) is scored by ``think_format``, the limit raised to admit
them: what the default limit is chosen from. ``--memory --only TEXT [--repeat N]``: the cases whose label
holds TEXT (``--only '{}'``), each N times.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402
from serve_helpers import running_server, write_config  # noqa: E402

from rewardsmith import get_reward  # noqa: E402
from rewardsmith.compose.spec import weighted_sum  # noqa: E402
from rewardsmith.integrations.remote import remote  # noqa: E402
from rewardsmith.serve import ServerSettings  # noqa: E402

BATCH = 64
BATCHES = 96
LEVELS = (1, 8, 32)
REWARDS = "gsm8k_accuracy,think_format"


def _batch(k: int) -> dict:
    completions = [
        f"<think>step {k}.{i}</think><answer>{k * BATCH + i}</answer>\n#### {k * BATCH + i}" for i in range(BATCH)
    ]
    answers = [str(k * BATCH + i + (i % 3 == 0)) for i in range(BATCH)]  # a third are wrong
    return {"completions": completions, "columns": {"answer": answers}}


def _expected(body: dict) -> list:
    per_reward = [
        get_reward(name).scores(completions=body["completions"], **body["columns"]) for name in REWARDS.split(",")
    ]
    return weighted_sum(per_reward, [1.0, 1.0])


async def _load(url: str, concurrency: int, bodies: list[dict], expected: list[list]) -> tuple[float, list[float], int]:
    latencies: list[float] = []
    wrong = 0
    queue = list(range(len(bodies)))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def worker() -> None:
            nonlocal wrong
            while queue:
                k = queue.pop()
                start = time.perf_counter()
                response = await client.post("/score", json=bodies[k])
                latencies.append(time.perf_counter() - start)
                if response.status_code != 200 or response.json()["scores"] != expected[k]:
                    wrong += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start, latencies, wrong


def _waiting_batch(k: int) -> dict:
    completions = [f"c{k}.{i}" for i in range(BATCH)]
    return {"completions": completions, "columns": {"delay": [0.05] + [0.0] * (BATCH - 1)}}


def _table(url: str, bodies: list[dict], expected: list[list]) -> None:
    print(f"  {'in flight':>9}  {'samples/s':>10}  {'vs 1':>6}  {'p50 ms':>8}  {'p95 ms':>8}  wrong/lost")
    base = None
    for level in LEVELS:
        seconds, latencies, wrong = asyncio.run(_load(url, level, bodies, expected))
        rate = len(bodies) * BATCH / seconds
        base = base or rate
        p50, p95 = statistics.median(latencies) * 1000, _p95(latencies) * 1000
        print(f"  {level:>9}  {rate:>10.0f}  {rate / base:>5.2f}x  {p50:>8.1f}  {p95:>8.1f}  {wrong}")


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 20 else max(values)


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory in bytes (VmHWM), Linux only."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _verify_body(items: int, text: str = "x") -> bytes:
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}
    last = {**item, "content": [{"type": "output_text", "text": text}]}
    request = {"responses_create_params": {"input": "2 + 2?"}, "response": {"output": [item] * (items - 1) + [last]}}
    return json.dumps({**request, "answer": "4"}, ensure_ascii=False).encode()


#: Sends one body from a file and prints the status and the answer's size (run in its own process, so that the
#: client's own work on 56 MB, reading and writing it, does not delay the /health checks measured here).
_SENDER = """
import sys, httpx
body = open(sys.argv[2], "rb").read()
response = httpx.post(sys.argv[1], content=body, headers={"content-type": "application/json"}, timeout=600)
print(response.status_code, len(response.content))
"""


#: A reward that reads nothing of the completion: what /health waits for under it is the server's own work.
_NO_OP = "def no_op(completions, **kwargs):\n    return [0.0] * len(completions)\n"


def _one_big_request(path: str, body: bytes, reward: str = "think_format", *flags: str) -> tuple[int, int, list[float]]:
    """A fresh server's peak memory growth for one request, its status, and /health latencies meanwhile."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "no_op.py").write_text(_NO_OP)
        config = Path(folder) / "serve.yaml"
        config.write_text(f"rewards: [{reward.replace('no_op.py', str(Path(folder) / 'no_op.py'))}]\n")
        sent = Path(folder) / "body.json"
        sent.write_bytes(body)
        with running_server(config, *flags) as (url, proc):
            httpx.post(url + "/score", json={"completions": ["<think>a</think><answer>1</answer>"]}, timeout=60)
            before = _peak_rss(proc.pid)
            sender = subprocess.Popen([sys.executable, "-c", _SENDER, url + path, str(sent)], stdout=subprocess.PIPE)
            latencies = []
            with httpx.Client() as client:
                while sender.poll() is None:
                    start = time.perf_counter()
                    client.get(url + "/health", timeout=60)
                    latencies.append(time.perf_counter() - start)
                    time.sleep(0.02)
            status = int(sender.stdout.read().split()[0])
            return _peak_rss(proc.pid) - before, status, latencies


def _long_completion(size: int, lines: bool = False) -> bytes:
    """A /score body of one think_format completion whose text takes ``size`` bytes: one letter repeated, or
    ``lines`` of text with quotes (escaped in the body; its new lines make think_format's ``visible_text`` run
    a regular expression over all of it, one step of about 30 ns a character on a busy core)."""
    if lines:
        filler = "".join(f'line {i}: a "quoted" word\n' for i in range(size // 20 + 1))[: size - 33]
    else:
        filler = "z" * (size - 33)
    return json.dumps({"completions": ["<think>" + filler + "</think><answer>1</answer>"]}).encode()


def _print_cases(cases: list) -> None:
    print("one request on a fresh server: peak memory growth (VmHWM) and /health while it is in flight")
    print(f"  {'request':<60} {'body MB':>8} {'status':>6} {'peak +MB':>9} {'x body':>7} "
          f"{'health p50 ms':>13} {'p95 ms':>7} {'max ms':>7}")  # fmt: skip
    for label, path, body, *reward in cases:
        grown, status, latencies = _one_big_request(path, body, *reward)
        latencies.sort()
        print(f"  {label:<60} {len(body) / 1e6:>8.1f} {status:>6} {grown / 1e6:>9.1f} {grown / len(body):>6.1f}x "
              f"{statistics.median(latencies) * 1000:>13.1f} {_p95(latencies) * 1000:>7.1f} "
              f"{latencies[-1] * 1000:>7.1f}")  # fmt: skip


def text_sizes() -> None:
    """/health while one completion of 1 to 8 MiB is scored by think_format (the limit raised to admit them)."""
    cases = []
    for lines in (False, True):
        for mib in (1, 2, 3, 4, 8):
            label = f"/score, one completion of {mib:g} MiB{' of quoting lines' if lines else ''}, think_format"
            body = _long_completion(int(mib * (1 << 20)), lines)
            cases.append((label, "/score", body, "think_format", "--max-text-mb", "64"))
    _print_cases(cases)


def memory_and_health() -> None:
    """Peak memory per request size, and /health latency while the request is in flight."""
    cases = [(f"/verify, {n:,} output items", "/verify", _verify_body(n)) for n in (10_000, 100_000, 600_000)]
    cases.append(
        ("/verify, 600,000 output items, the last one an emoji", "/verify", _verify_body(600_000, "\U0001f600"))
    )
    completion = "<think>" + "y" * 6_800 + "</think><answer>1</answer>"
    cases.append(
        ("/score, 8,192 completions of 6.8 KB", "/score", json.dumps({"completions": [completion] * 8192}).encode())
    )
    # One long string at the server's limit on one text (--max-text-mb), scored by think_format (its regular
    # expressions scan the whole text, holding the GIL), and one over it, refused before its pieces are joined.
    limit = ServerSettings().max_text_bytes
    at = f"{limit / (1 << 20):g} MiB"
    cases.append((f"/score, one completion of {at} (the --max-text-mb limit)", "/score", _long_completion(limit)))
    cases.append((f"/score, one completion of {at} of quoting lines", "/score", _long_completion(limit, True)))
    message = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x" * limit}]}
    verify = {"responses_create_params": {"input": "2 + 2?"}, "response": {"output": [message]}, "answer": "4"}
    cases.append((f"/verify, one output text of {at}", "/verify", json.dumps(verify).encode()))
    cases.append((f"/score, one completion of {at} + 1 byte (413)", "/score", _long_completion(limit + 1)))
    cases.append(("/score, one completion of 50 MB (413)", "/score", _long_completion(50_000_000)))
    cases.append(("/score, 699,029 empty completions (413)", "/score",
                  json.dumps({"completions": [""] * 699_029}).encode()))  # fmt: skip
    cases.append(("/score, 3,000,000 `{}` in a member it does not read (413)", "/score",
                  ('{"completions": [""], "extra": [' + ",".join(["{}"] * 3_000_000) + "]}").encode()))  # fmt: skip
    if "--text" in sys.argv:  # only the long-text cases
        cases = [case for case in cases if "MiB" in case[0] or "50 MB" in case[0]]
    if "--only" in sys.argv:  # the cases whose label holds the next argument, e.g. --only '{}'
        cases = [case for case in cases if sys.argv[sys.argv.index("--only") + 1] in case[0]]
    _print_cases(cases * int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else cases)


def main() -> None:
    if "--memory" in sys.argv:
        text_sizes() if "--text-sizes" in sys.argv else memory_and_health()
        return
    bodies = [_batch(k) for k in range(BATCHES)]
    expected = [_expected(b) for b in bodies]
    flat = [c for b in bodies for c in b["completions"]][:2048]
    flat_answers = [a for b in bodies for a in b["columns"]["answer"]][:2048]
    flat_expected = [s for e in expected for s in e][:2048]
    with running_server(REWARDS) as (url, _):
        asyncio.run(_load(url, 4, bodies[:8], expected[:8]))  # warm up
        print(f"reward server: {BATCHES} batches of {BATCH} completions, rewards {REWARDS}, server max_concurrency 4")
        _table(url, bodies, expected)
        print(f"remote(url) client reward: {len(flat)} completions in chunks of {BATCH}")
        base = None
        for level in LEVELS:
            client = remote(url, batch_size=BATCH, max_concurrency=level)
            start = time.perf_counter()
            got = client.scores(completions=flat, answer=flat_answers)
            seconds = time.perf_counter() - start
            rate = len(flat) / seconds
            base = base or rate
            lost = sum(g != e for g, e in zip(got, flat_expected)) + abs(len(got) - len(flat))
            print(f"  max_concurrency={level:<3} {rate:>8.0f} samples/s  {rate / base:>5.2f}x  wrong/lost {lost}  "
                  f"errors {client.stats['errors']}")  # fmt: skip
            client.close()
    waiting = [_waiting_batch(k) for k in range(32)]
    with (
        tempfile.TemporaryDirectory() as folder,
        running_server(write_config(Path(folder), "[slow_length]")) as (url, _),
    ):
        print(f"reward server, a reward waiting 50 ms per batch (I/O-bound): 32 batches of {BATCH}, max_concurrency 4")
        _table(url, waiting, [[float(len(c)) for c in b["completions"]] for b in waiting])


if __name__ == "__main__":
    main()
