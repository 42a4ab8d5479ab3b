"""verl's and reward-kit's reward test cases, replayed against our rewards (the cases are in tests/peer_replays.py).

Every case agrees with the peer except those in ``DELIBERATE`` (we differ on purpose; docs/rewards.md gives each
reason) and ``READER_DEFECTS`` (the answer reader is wrong; listed in docs/rewards.md as known differences).
"""

from __future__ import annotations

from collections import Counter

import pytest
from peer_cases import msg
from peer_replays import CASES, DELIBERATE, READER_DEFECTS

from rewardsmith import get_reward


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.source)
def test_peer_case(case):
    scores = case.run()
    if case.source in DELIBERATE or case.source in READER_DEFECTS:
        assert not case.agrees(scores), f"{case.source} now agrees with the peer: take it off its list"
    else:
        assert case.agrees(scores), f"{case.source}: got {scores}, the peer expects {case.expected or 'a relation'}"


def test_agreement_per_suite(capsys):
    agree, total = Counter(), Counter()
    for case in CASES:
        total[case.suite] += 1
        agree[case.suite] += case.agrees(case.run())
    with capsys.disabled():
        print("\n" + ", ".join(f"{suite} {agree[suite]}/{total[suite]}" for suite in total))
    assert sum(agree.values()) == len(CASES) - len(DELIBERATE) - len(READER_DEFECTS)
    names = [case.source for case in CASES]
    assert len(set(names)) == len(names)
    assert set(DELIBERATE) | set(READER_DEFECTS) <= set(names) and not set(DELIBERATE) & set(READER_DEFECTS)


def test_every_difference_is_in_the_docs():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "rewards.md").read_text()
    section = text.partition("## Differences from verl and reward-kit")[2].partition("\n## ")[0]
    assert section, "docs/rewards.md has no 'Differences from verl and reward-kit' section"
    for name in [*DELIBERATE, *READER_DEFECTS]:
        if name.startswith("reward-kit"):  # the peer's test function
            said = next(word for word in name.split() if word.startswith("test_"))
        else:  # verl's input, as written in a code span
            said = name.split(" ", 2)[2].rpartition(" ~ ")[0].strip("'").replace("\\\\", "\\")
        assert f"`{said}`" in section, f"{name} is not in the differences section"


def test_the_matrix_payload_verl_once_evaluated_is_never_run(tmp_path, monkeypatch):
    # verl's prime_math regression test: an answer written as Python must not run while it is graded
    monkeypatch.chdir(tmp_path)
    payload = '\\boxed{[open("pwned.txt","w").write("x"), 2]}'
    reward = get_reward("math_accuracy", timeout=None)
    assert reward(completions=[msg(payload)], answer=["\\begin{pmatrix}1&2\\end{pmatrix}"]) == [0.0]
    assert not (tmp_path / "pwned.txt").exists()
