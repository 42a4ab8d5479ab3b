"""Answer readers on real model output: agreement with labelled verdicts on ProcessBench solutions.

``../shared/data/processbench_dev.jsonl`` holds 1,025 solutions written by open
models (Llama 3/3.1, Qwen2/2.5, Qwen2.5-Math) to MATH and OlympiadBench
problems, each labelled by whether its final answer is right (a strong judge
with expert review; a few labels are wrong). Each reader scores every solution
against the row's ``reference_answer``:

- ``math_accuracy`` (rewardsmith, default settings);
- ``gsm8k_accuracy`` (rewardsmith), on the rows whose reference is an integer;
- TRL's ``accuracy_reward`` (``trl.rewards``), the reference as its ``solution``;
- plain math-verify: ``verify(parse("$reference$"), parse(solution))`` on the
  whole solution, default extraction.

A score of 1 on a row labelled wrong is a false accept (FA), anything else
(0 or ``None``) on a row labelled right is a false reject (FR); both are given
as shares of all rows. The table is per generator; then ``math_accuracy``'s
disagreements are listed by class (FA or FR, what the reader found, and
whether plain math-verify got the row right), with a few examples each.
``--show CLASS`` prints every row of one class (``--show FR`` or
``--show "FR no final answer"``: any class that starts so). Peer results are
cached in the temporary directory (``--fresh`` recomputes them).

Targets: ``math_accuracy`` at least 98.5% agreement with at most 1% false
accepts, above plain math-verify; ``gsm8k_accuracy`` at least 99% on its rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import verdict

from rewardsmith import get_reward

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "processbench_dev.jsonl"
_INTEGER = re.compile(r"\s*[-+]?\d+\s*")


def load(path: Path = DATA) -> list[dict]:
    """The labelled rows."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def plain_math_verify(rows: list[dict]) -> list[float]:
    """math-verify on the whole solution, as a user would call it without a reader in front."""
    from math_verify import parse, verify

    out = []
    for row in rows:
        try:
            gold = parse(f"${row['reference_answer']}$", parsing_timeout=5)
            pred = parse(row["completion"], parsing_timeout=5)
            out.append(float(bool(gold) and verify(gold, pred, timeout_seconds=5)))
        except Exception:
            out.append(0.0)
    return out


def trl_accuracy(rows: list[dict]) -> list[float | None]:
    """TRL's ``accuracy_reward``, the reference answer as its ``solution``."""
    from trl.rewards import accuracy_reward

    out: list[float | None] = []
    for row in rows:  # one at a time, so that one odd row cannot fail the batch
        try:
            out += accuracy_reward([[{"role": "assistant", "content": row["completion"]}]], [row["reference_answer"]])
        except Exception:
            out.append(0.0)
    return out


def _peers(rows: list[dict], fresh: bool) -> dict[str, list]:
    from importlib.metadata import version

    versions = f"{version('math-verify')} {version('trl')}"
    key = hashlib.sha256(DATA.read_bytes() + versions.encode()).hexdigest()
    cache = Path(tempfile.gettempdir()) / f"rewardsmith-real-answers-{key[:16]}.json"
    if cache.exists() and not fresh:
        return json.loads(cache.read_text())
    peers = {"trl accuracy_reward": trl_accuracy(rows), "plain math-verify": plain_math_verify(rows)}
    cache.write_text(json.dumps(peers))
    return peers


def rates(scores: list, labels: list[bool]) -> tuple[float, float, float]:
    """Agreement, false accepts, false rejects, as shares of the rows."""
    n = len(labels)
    fa = sum(s == 1.0 and not ok for s, ok in zip(scores, labels)) / n
    fr = sum(s != 1.0 and ok for s, ok in zip(scores, labels)) / n
    return 1 - fa - fr, fa, fr


def _cause(reason: str) -> str:
    """A short class for what the reader made of a row."""
    reason = reason or ""
    for key, name in (
        ("no final answer", "no final answer"),
        ("hedge", "hedge"),
        ("different answers", "hedge"),
        ("cannot be parsed", "reference unusable"),
        ("written in words", "reference unusable"),
        ("reasoning never ends", "no final answer"),
        ("timed out", "timeout"),
        ("one per part", "multi-part"),
    ):
        if key in reason:
            return name
    where = re.search(r"\(([^()]*)\), reference", reason)
    return f"read from {where.group(1)}" if where else (reason.split(":")[0][:40] or "no reason")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--show", help="print every math_accuracy disagreement whose class starts with this")
    parser.add_argument("--examples", type=int, default=3, help="examples printed per class")
    parser.add_argument("--fresh", action="store_true", help="recompute the peers' scores")
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    rows = load()
    labels = [bool(r["label"]) for r in rows]
    refs = [r["reference_answer"] for r in rows]
    comps = [r["completion"] for r in rows]
    math_acc = get_reward("math_accuracy")
    math_scores = math_acc(completions=comps, answer=refs, prompt=[r["problem"] for r in rows])
    integer = [i for i, ref in enumerate(refs) if _INTEGER.fullmatch(ref)]
    gsm = get_reward("gsm8k_accuracy")
    gsm_scores = gsm(completions=[comps[i] for i in integer], answer=[refs[i] for i in integer])
    peers = _peers(rows, args.fresh)
    readers = {"math_accuracy": math_scores, **peers}

    by_gen: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_gen[row["generator"]].append(i)
    print(f"{DATA.name}: {len(rows)} labelled solutions ({sum(labels)} right)\n")
    header = f"{'generator':<28}{'rows':>5}" + "".join(f"{name:>22}" for name in readers)
    print(header + "\n" + "-" * len(header))
    for gen in sorted(by_gen, key=lambda g: -len(by_gen[g])):
        idx = by_gen[gen]
        cells = "".join(f"{rates([s[i] for i in idx], [labels[i] for i in idx])[0]:>22.2%}" for s in readers.values())
        print(f"{gen:<28}{len(idx):>5}{cells}")
    print()
    for name, scores in readers.items():
        agree, fa, fr = rates(scores, labels)
        print(f"  {name:<22} agreement {agree:7.2%}   false accepts {fa:6.2%}   false rejects {fr:6.2%}")
    gsm_agree, gsm_fa, gsm_fr = rates(gsm_scores, [labels[i] for i in integer])
    print(
        f"  {'gsm8k_accuracy':<22} agreement {gsm_agree:7.2%}   false accepts {gsm_fa:6.2%}   "
        f"false rejects {gsm_fr:6.2%}   (the {len(integer)} rows with an integer reference)"
    )
    agree, fa, _ = rates(math_scores, labels)
    mv_agree = rates(peers["plain math-verify"], labels)[0]
    print(f"\n  math_accuracy agreement: {verdict(agree, 0.985, True)}; above plain math-verify: {agree > mv_agree}")
    print(f"  math_accuracy false accepts: {verdict(fa, 0.01, False)}")
    print(f"  gsm8k_accuracy agreement: {verdict(gsm_agree, 0.99, True)}")

    mv = peers["plain math-verify"]
    classes: dict[str, list[int]] = defaultdict(list)
    for i, (score, ok) in enumerate(zip(math_scores, labels)):
        if (score == 1.0) != ok:
            reason = math_acc.check(comps[i], answer=refs[i], prompt=rows[i]["problem"]).reason
            kind = "FA" if ok is False else "FR"
            peer = "mv right" if (mv[i] == 1.0) == ok else "mv wrong"
            classes[f"{kind} {_cause(reason)} ({peer})"].append(i)
    print(f"\nmath_accuracy disagreements by class ({sum(map(len, classes.values()))}):")
    for name, idx in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {len(idx):>4}  {name}")
    for name, idx in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if args.show is not None and not name.startswith(args.show):
            continue
        shown = idx if args.show is not None else idx[: args.examples]
        print(f"\n== {name}: {len(idx)}")
        for i in shown:
            reason = math_acc.check(comps[i], answer=refs[i], prompt=rows[i]["problem"]).reason
            tail = comps[i][-300:].replace("\n", "\\n")
            print(f"  [{rows[i]['id']} {rows[i]['generator']}] label {labels[i]}, reference {refs[i]!r}")
            print(f"    reason: {reason[:200]}")
            print(f"    ends: ...{tail}")


if __name__ == "__main__":
    main()
