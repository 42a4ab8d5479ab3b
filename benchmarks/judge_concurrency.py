"""LLM judge throughput: 512 judgements against a server that takes 50 ms per answer, max_concurrency=32.

The server (rewardsmith.http.testing.LocalChatServer) runs in its own
process, so it does not compete with the client for the interpreter. The
ideal wall time is 512 / 32 x 50 ms = 0.8 s: 16 full rounds of 32 requests in
flight. The judge runs with its cache off (every judgement is a request) and
512 distinct completions (no in-batch deduplication).

The sequential time (max_concurrency=1) is measured on 32 judgements and
extrapolated to 512 (x16), which the output says. The client's CPU time per
judgement is printed too: on a busy 2-core machine the client, the server
and everything else share the cores, and the ratio to the ideal grows with
the load while the CPU cost per judgement does not.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import interleaved, verdict

from rewardsmith.judges import LLMJudge

N = 512
CONCURRENCY = 32
LATENCY = 0.050
SEQUENTIAL_SAMPLE = 32

SERVER = f"""
import sys, time
from rewardsmith.http.testing import LocalChatServer
with LocalChatServer(lambda request: '{{"reason": "ok", "score": 7}}', delay={LATENCY}) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin
"""


def main() -> None:
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        completions = [f"completion number {i}" for i in range(N)]
        concurrent = LLMJudge(
            base_url=base_url, model="bench", api_key_env=None, cache=None, max_concurrency=CONCURRENCY
        )
        sequential = concurrent.configure(max_concurrency=1)

        def run_concurrent() -> None:
            scores = asyncio.run(concurrent(completions=completions))
            assert len(scores) == N and all(s is not None for s in scores)

        def run_sequential() -> None:
            scores = asyncio.run(sequential(completions=completions[:SEQUENTIAL_SAMPLE]))
            assert all(s is not None for s in scores)

        times = interleaved({"concurrent": run_concurrent, "sequential": run_sequential}, rounds=5)
        cpu_start = time.process_time()
        run_concurrent()
        client_cpu = time.process_time() - cpu_start
        with urllib.request.urlopen(base_url + "/stats") as response:
            stats = json.load(response)
    finally:
        server.stdin.close()
        server.wait(timeout=10)

    ideal = N / CONCURRENCY * LATENCY
    ratio = times["concurrent"] / ideal
    sequential_512 = times["sequential"] * (N / SEQUENTIAL_SAMPLE)
    print(f"judge concurrency: {N} judgements, server latency {LATENCY * 1000:.0f} ms, max_concurrency={CONCURRENCY}")
    print(f"  wall time            {times['concurrent']:.3f} s   (median of 5 runs)")
    print(f"  ideal                {ideal:.3f} s   ({N} / {CONCURRENCY} x {LATENCY * 1000:.0f} ms)")
    print(f"  ratio to ideal       {ratio:.2f}x  ({verdict(ratio, 1.3, False)})")
    print(
        f"  sequential           {sequential_512:.3f} s   (max_concurrency=1: {times['sequential']:.3f} s for "
        f"{SEQUENTIAL_SAMPLE} judgements, x{N // SEQUENTIAL_SAMPLE} extrapolated)"
    )
    print(f"  speed-up             {sequential_512 / times['concurrent']:.1f}x over sequential")
    print(f"  server saw at most   {stats['max_in_flight']} requests in flight ({stats['requests']} requests in all)")
    print(f"  client CPU           {client_cpu / N * 1000:.2f} ms per judgement (this process, one concurrent run)")


if __name__ == "__main__":
    main()
