"""Answer styles real models write: agreement per style for math_accuracy, TRL's accuracy_reward, plain math-verify.

Each MATH-500 reference solution is rewritten into the styles instruct models
use to state a final answer (its own ``\\boxed{}`` unwrapped, then a closing in
that style), once with its own answer (scores 1) and once with another
problem's answer (the wrong-answer twin, scores 0). Hedges offer the wrong and
the right answer together, the right one last, in each container (score 0).
Multi-part answers are the references that list several values, boxed one by
one in order. "Agreement" is the share of completions a contender scores as
expected; every hedge style must stay at 0 accepted.

Then the speed on these long, style-diverse solutions: each contender in a
fresh process, warmed on the first half and timed on the second, rounds
interleaved with a fixed ``PYTHONHASHSEED``; the ratio is the median over
rounds of TRL's time over ours. Targets: >= 2x TRL in one process, >= 3x with
two workers.

    python benchmarks/answer_styles.py [--limit N] [--rounds R] [--no-speed]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import verdict

from rewardsmith import get_reward
from rewardsmith.rewards._answers import ANSWER_PHRASE
from rewardsmith.rewards._text import boxed_contents

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "math500_test.jsonl"
_BOX = re.compile(r"\\boxed\s*")


def _body(solution: str) -> str:
    """The solution without its concluding sentence (the one with the last ``\\boxed{}``), the other boxes unwrapped."""
    last = solution.rfind("\\boxed")
    if last != -1:
        cut = max(solution.rfind(". ", 0, last), solution.rfind("\n", 0, last))
        solution = solution[: cut + 1] if cut != -1 else ""
    body = _unboxed(solution)
    stated = ANSWER_PHRASE.search(body)  # a body that already states the answer (a second solution follows)
    return (body[: stated.start()] if stated else body).strip() or "We work it out."


def _unboxed(solution: str) -> str:
    """The solution with each ``\\boxed{X}`` written as ``X``."""
    out, position = [], 0
    for match in _BOX.finditer(solution):
        if match.start() < position or not solution.startswith("{", match.end()):
            continue
        inner = boxed_contents(solution[match.start() :], limit=0)
        if not inner:
            break
        out += [solution[position : match.start()], inner[0]]
        position = match.end() + len(inner[0]) + 2
    return "".join(out) + solution[position:]


def _parts(answer: str) -> list[str]:
    """The top-level comma-separated parts of a list answer (``3, 5, 7``), or ``[]`` when it is not one."""
    if (
        re.fullmatch(r"\d{1,3}(?:,\d{3})+", answer)
        or "\\!" in answer
        or "\\{" in answer
        or answer.lstrip().startswith(("(", "[", "\\left"))
        or "\\in" in answer
    ):
        return []
    parts, depth, current = [], 0, ""
    for ch in answer:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    parts.append(current.strip())
    return parts if len(parts) > 1 and all(re.fullmatch(r"-?\d+", p) for p in parts) else []


#: Styles: name -> (completion from the unboxed body and an answer, kind). Kind "right" styles are also run with the
#: wrong answer (expected 0); "hedge" styles get (wrong, right) and are expected 0.
STYLES: dict[str, Callable[..., str]] = {
    "qwen boxed": lambda body, a: f"{body}\n\nTherefore, the final answer is $\\boxed{{{a}}}$.",
    "minerva / llama": lambda body, a: f"{body}\n\nFinal Answer: The final answer is ${a}$. I hope it is correct.",
    "prm800k # Answer": lambda body, a: f"{body}\n\n# Answer\n\n{a}",
    "the answer is: X": lambda body, a: f"{body}\nThe answer is: ${a}$",
    "bold final answer": lambda body, a: f"{body}\n\n**Final answer:** ${a}$",
    "bold inline": lambda body, a: f"{body}\nSo the answer is **${a}$**.",
    "answer: in prose": lambda body, a: f"{body} Answer: ${a}$ (as required).",
    "display boxed": lambda body, a: f"{body}\n\n\\[\n\\boxed{{{a}}}\n\\]",
    "closing sentence": lambda body, a: f"{body}\n\nPutting it together, the value we are looking for is ${a}$.",
    "answer block": lambda body, a: f"<think>\n{body}\n</think>\n<answer>\n${a}$\n</answer>",
    "corrected answer": lambda body, a, w: (
        f"{body}\n\nSo the answer is $\\boxed{{{w}}}$. Wait, that's wrong: I made an arithmetic mistake above. "
        f"Redoing the last step carefully, the answer is $\\boxed{{{a}}}$."
    ),
}
HEDGES: dict[str, Callable[[str, str, str], str]] = {
    "hedge: two boxes": lambda body, w, a: f"{body}\n\nThe answer is $\\boxed{{{w}}}$ or $\\boxed{{{a}}}$.",
    "hedge: boxes in a block": lambda body, w, a: f"{body}\n<answer>$\\boxed{{{w}}}$ or $\\boxed{{{a}}}$</answer>",
    "hedge: listed boxes in a block": lambda body, w, a: f"{body}\n<answer>\\boxed{{{w}}}, \\boxed{{{a}}}</answer>",
    "hedge: two blocks": lambda body, w, a: f"{body}\n<answer>{w}</answer>\n<answer>{a}</answer>",
    "hedge: answer line": lambda body, w, a: f"{body}\nThe answer is ${w}$ or ${a}$.",
    "hedge: minerva": lambda body, w, a: (
        f"{body}\nFinal Answer: The final answer is ${w}$ or ${a}$. I hope it is correct."
    ),
    "hedge: closing sentence": lambda body, w, a: f"{body}\nSo the value we want is ${w}$ or ${a}$.",
    "hedge: text inside a box": lambda body, w, a: f"{body}\n$\\boxed{{{w} \\text{{ or }} {a}}}$",
    "hedge: line break in a box": lambda body, w, a: f"{body}\n$\\boxed{{{w} \\\\ {a}}}$",
    "hedge: two answer lines": lambda body, w, a: f"{body}\nAnswer: ${w}$\nAnswer: ${a}$",
}


def cases(limit: int | None) -> list[tuple[str, str, str, float]]:
    """(style, completion, reference, expected score) for every style, twin and hedge."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = rows[:limit] if limit else rows
    golds = [r["answer"] for r in rows]
    out = []
    for i, row in enumerate(rows):
        a = row["answer"]
        j = (i + 7) % len(rows)
        while golds[j].strip() == a.strip():
            j = (j + 1) % len(rows)
        w = golds[j]
        body = _body(row["solution"])
        for name, style in STYLES.items():
            if name == "corrected answer":
                out += [(name, style(body, a, w), a, 1.0), (name + " (twin)", style(body, w, a), a, 0.0)]
            else:
                out += [(name, style(body, a), a, 1.0), (name + " (twin)", style(body, w), a, 0.0)]
        for name, hedge in HEDGES.items():
            out.append((name, hedge(body, w, a), a, 0.0))
        parts = _parts(a)
        if parts:
            boxes = ", ".join(f"$x_{k} = \\boxed{{{p}}}$" for k, p in enumerate(parts, 1))
            out.append(("multi-part boxes", f"{body}\n\nThe solutions are {boxes}.", a, 1.0))
            shuffled = ", ".join(f"$\\boxed{{{p}}}$" for p in [*parts[1:], parts[0]])
            out.append(("multi-part boxes (twin)", f"{body}\n\nThe solutions are {shuffled}.", a, 0.0))
    return out


def _plain_math_verify() -> Callable[[list[str], list[str]], list[float]]:
    from math_verify import parse, verify

    def score(completions: list[str], answers: list[str]) -> list[float]:
        out = []
        for completion, answer in zip(completions, answers):
            try:
                out.append(float(verify(parse(f"${answer}$"), parse(completion))))
            except Exception:
                out.append(0.0)
        return out

    return score


def _trl() -> Callable[[list[str], list[str]], list[float]]:
    from trl.rewards import accuracy_reward

    def score(completions: list[str], answers: list[str]) -> list[float]:
        chat = [[{"role": "assistant", "content": c}] for c in completions]
        return [0.0 if s is None else float(s) for s in accuracy_reward(chat, answers)]

    return score


def _ours(workers: int = 1) -> Callable[[list[str], list[str]], list[float]]:
    reward = get_reward("math_accuracy", workers=workers)

    def score(completions: list[str], answers: list[str]) -> list[float]:
        return [0.0 if s is None else float(s) for s in reward(completions=completions, answer=answers)]

    score.close = reward.close  # type: ignore[attr-defined]
    return score


CONTENDERS: dict[str, Callable[[], Callable[[list[str], list[str]], list[float]]]] = {
    "math_accuracy": _ours,
    "trl accuracy_reward": _trl,
    "plain math-verify": _plain_math_verify,
}


def agreement_table(limit: int | None) -> None:
    data = cases(limit)
    completions = [c for _, c, _, _ in data]
    answers = [g for _, _, g, _ in data]
    scores = {name: make()(completions, answers) for name, make in CONTENDERS.items()}
    styles = list(dict.fromkeys(s for s, _, _, _ in data))
    print(f"agreement per answer style ({len(data)} completions from {limit or 500} MATH-500 solutions)")
    print(f"| style | n | {' | '.join(CONTENDERS)} |")
    print("|---|---:|" + "---:|" * len(CONTENDERS))
    worst = 1.0
    for style in styles:
        picked = [k for k, (s, _, _, _) in enumerate(data) if s == style]
        cells = []
        for name in CONTENDERS:
            ok = sum(scores[name][k] == data[k][3] for k in picked) / len(picked)
            cells.append(f"{ok:.1%}")
            if name == "math_accuracy":
                worst = min(worst, ok)
        print(f"| {style} | {len(picked)} | {' | '.join(cells)} |")
    totals = [sum(s == e for s, (_, _, _, e) in zip(scores[name], data)) / len(data) for name in CONTENDERS]
    print(f"| all | {len(data)} | {' | '.join(f'{t:.1%}' for t in totals)} |")
    print(f"  math_accuracy's worst style: {worst:.1%} ({verdict(worst, 0.99, True)})")
    hedged = sum(scores["math_accuracy"][k] for k, (s, _, _, _) in enumerate(data) if s.startswith("hedge"))
    print(f"  hedges scored 1 by math_accuracy: {hedged:.0f}")


SPEED = {"trl accuracy_reward": None, "math_accuracy, 1 worker": 1, "math_accuracy, 2 workers": 2}


def _speed_one(name: str, limit: int | None) -> None:
    logging.disable(logging.WARNING)
    data = [d for d in cases(limit) if not d[0].startswith("hedge")]
    completions, answers = [c for _, c, _, _ in data], [g for _, _, g, _ in data]
    split = len(completions) // 2
    score = _trl() if SPEED[name] is None else _ours(SPEED[name])
    score(completions[:split], answers[:split])
    start = time.perf_counter()
    score(completions[split:], answers[split:])
    elapsed = time.perf_counter() - start
    getattr(score, "close", lambda: None)()
    print(json.dumps({"seconds": elapsed, "timed": len(completions) - split}))


def speed(limit: int | None, rounds: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in SPEED}
    timed = 0
    for seed in range(rounds):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        for name in SPEED:
            command = [sys.executable, __file__, "--speed-one", name, "--limit", str(limit or 0)]
            out = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            times[name].append(result["seconds"])
            timed = result["timed"]
    trl = times["trl accuracy_reward"]
    print(f"speed on {timed} long style-diverse solutions (fresh process each, {rounds} rounds, median ratio)")
    for name, values in times.items():
        ratio = statistics.median(base / mine for base, mine in zip(trl, values))
        print(f"  {name:<26} {timed / statistics.median(values):7.1f} completions/s  {ratio:5.2f}x TRL")
    one = statistics.median(b / m for b, m in zip(trl, times["math_accuracy, 1 worker"]))
    two = statistics.median(b / m for b, m in zip(trl, times["math_accuracy, 2 workers"]))
    print(f"  one process: {one:.2f}x ({verdict(one, 2.0, True)}); two workers: {two:.2f}x ({verdict(two, 3.0, True)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="MATH-500 rows to use (0: all 500)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--speed-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    limit = args.limit or None
    if args.speed_one:
        _speed_one(args.speed_one, limit)
        return
    logging.disable(logging.WARNING)
    agreement_table(limit)
    if not args.no_speed:
        speed(limit, args.rounds)


if __name__ == "__main__":
    main()
