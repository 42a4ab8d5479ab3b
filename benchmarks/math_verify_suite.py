"""Math-Verify's own test cases replayed against ``math_accuracy``, each prediction given as the answer block.

Math-Verify (huggingface/Math-Verify) tests its extraction and comparison
with pytest cases ``(gold, pred, expected)`` checked by a ``compare_strings``
helper. This benchmark reads those test files where they are (a checkout's
``tests/`` directory: ``--tests DIR``; nothing of them is copied into this
repository), takes every case whose settings map onto ``math_accuracy``
(precision 6, ``strict=True``, no set-relation comparison; either match type),
and scores ``<answer>pred</answer>`` against the reference ``gold`` (the prediction
as written when it has its own ``<answer>``, ``<think>`` or ``</think>`` markers; a chat template's
end-of-turn token, such as ``<|im_start|>``, ends it): a case
agrees when the score is 1 exactly where Math-Verify expects a match. Cases
whose settings do not map are counted and left out, with the reason.

    git clone https://github.com/huggingface/Math-Verify /tmp/Math-Verify
    python benchmarks/math_verify_suite.py --tests /tmp/Math-Verify/tests [--show]

Target: at least 95% of the mapped cases agree; every other case is printed with the reason it differs.
"""

from __future__ import annotations

import argparse
import ast
import logging
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import verdict

from rewardsmith import get_reward
from rewardsmith.rewards._answers import before_end_of_turn

#: ``compare_strings`` settings this replay can honour, with the values that map.
MAPPED = {"precision": (6,), "strict": (True,), "allow_set_relation_comp": (False,)}


def _parametrized(func: ast.FunctionDef) -> tuple[list[str], list[tuple]] | None:
    for deco in func.decorator_list:
        if isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize":
            names = [n.strip() for n in ast.literal_eval(deco.args[0]).split(",")]
            try:
                rows = ast.literal_eval(deco.args[1])
            except ValueError:
                return None
            return names, [r if isinstance(r, tuple) else (r,) for r in rows]
    return None


def _settings_call(func: ast.FunctionDef) -> ast.Call | None:
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "compare_strings":
            return node
    return None


def cases(tests: Path) -> tuple[list[dict[str, Any]], Counter]:
    """Every ``(gold, pred, expected)`` case of the test files, its settings, and why a case does not map."""
    found: list[dict[str, Any]] = []
    left_out: Counter = Counter()
    for path in sorted(tests.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            spec, call = _parametrized(func), _settings_call(func)
            if spec is None or call is None:
                continue
            names, rows = spec
            for row in rows:
                values = dict(zip(names, row))
                settings = {}
                for kw in call.keywords:
                    if isinstance(kw.value, ast.Name) and kw.value.id in values:
                        settings[kw.arg] = values[kw.value.id]
                    else:
                        try:
                            settings[kw.arg] = ast.literal_eval(kw.value)
                        except ValueError:
                            settings[kw.arg] = "?"
                expected = values.get("expected", values.get("result"))
                if not isinstance(values.get("gold"), str) or not isinstance(values.get("pred"), str):
                    left_out["not a (gold, pred) string case"] += 1
                    continue
                why = [f"{k}={v!r}" for k, v in settings.items() if k in MAPPED and v not in MAPPED[k]]
                if why:
                    left_out[f"settings that do not map: {', '.join(why)}"] += 1
                    continue
                found.append(
                    {"where": f"{path.name}::{func.name}", "gold": values["gold"], "pred": values["pred"],
                     "expected": bool(expected)}
                )  # fmt: skip
    return found, left_out


def _block(pred: str) -> str:
    """The prediction as the answer block (as written, when it has its own ``<answer>``, ``<think>``, ``</think>``)."""
    if "<answer>" in pred or "<think>" in pred or "</think>" in pred:
        return pred
    return f"<answer>{before_end_of_turn(pred)}</answer>"  # what the model wrote ends at its end of turn


#: Why a case differs, by what the reader made of it (the first key found in its reason); each is a rule on purpose.
WHY = (
    ("offers alternatives", "a reference offering alternatives gives None: no answer can match all of them"),
    ("written in words", "a reference in prose gives None, never a verdict"),
    ("cannot be parsed", "a reference that does not parse (a ± root among others) gives None"),
    ("hedged between", "several different values stated together (a chain x = 7 = 11) are a hedge"),
    ("no final answer", "prose without a final statement (no box, answer phrase or complete closing sentence)"),
    ("compared in order", "a list keeps its order unless the problem asks for all values (the replay has no problem)"),
)


def why(reason: str) -> str:
    """The documented reason a case differs, or ``misread`` when none applies."""
    return next((text for key, text in WHY if key in reason), "misread")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tests", type=Path, required=True, help="a Math-Verify checkout's tests/ directory")
    parser.add_argument("--show", action="store_true", help="print every disagreement")
    args = parser.parse_args()
    if not (args.tests / "test_all.py").exists():
        parser.error(f"{args.tests} holds no test_all.py: pass the tests/ directory of a Math-Verify checkout")
    logging.disable(logging.WARNING)
    found, left_out = cases(args.tests)
    acc = get_reward("math_accuracy", timeout=None)
    scores = acc(completions=[_block(c["pred"]) for c in found], answer=[c["gold"] for c in found])
    wrong = [(c, s) for c, s in zip(found, scores) if (s == 1.0) != c["expected"]]
    share = 1 - len(wrong) / max(1, len(found))
    print(f"Math-Verify test cases: {len(found)} mapped, {sum(left_out.values())} left out")
    for cause, n in left_out.most_common():
        print(f"  left out {n:>4}: {cause}")
    print(f"\nmath_accuracy agrees on {share:.2%} of the mapped cases ({verdict(share, 0.95, True)})")
    by_test: dict[str, list] = defaultdict(list)
    for case, score in wrong:
        by_test[case["where"]].append((case, score))
    reasons = Counter(why(acc.check(_block(c["pred"]), answer=c["gold"]).reason) for c, _ in wrong)
    print(f"\ndisagreements by reason ({len(wrong)}):")
    for text, n in reasons.most_common():
        print(f"  {n:>4}  {text}")
    print(f"\ndisagreements by test ({len(wrong)}):")
    for where, rows in sorted(by_test.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(rows):>4}  {where}")
        for case, score in rows if args.show else rows[:2]:
            reason = acc.check(_block(case["pred"]), answer=case["gold"]).reason
            print(f"        gold {case['gold']!r:40.40} pred {case['pred']!r:40.40} expected {int(case['expected'])}, "
                  f"got {score}: {reason[:90]}\n          why: {why(reason)}")  # fmt: skip


if __name__ == "__main__":
    main()
