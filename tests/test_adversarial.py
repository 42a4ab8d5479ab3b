"""Every registered reward (and the judge verdict parser) on adversarial text: linear time, and invisible
characters never raise a score.

The targets come from the registry (``fuzz_targets``), so a reward added later is fuzzed without touching
this file: one that cannot be built with its defaults, or requires a column without a sample value, fails
here with a message saying what to add. Rewards that need a network endpoint or a model are skipped with a
stated reason.

Time (the default run; the exhaustive one is marked slow): every family is screened at 10 KB and 100 KB,
then the slowest families and any that look super-linear are timed again up to 1 MB (best of repeats):
CPU time fitted over the sizes grows at most 15x per 10x size, at most 3 CPU seconds per MB. CPU time, so
that the verdict is the algorithm's and not the machine's: toy scorers show that a quadratic one is caught
and a linear one passes, on a quiet machine and with every core kept busy.
"""

from __future__ import annotations

import functools
import itertools
import re
import subprocess
import sys

import pytest

from rewardsmith import list_rewards
from rewardsmith.check.adversarial import (
    FAMILIES,
    PROMPT,
    SIZES,
    Growth,
    cpu_seconds,
    family,
    fuzz_targets,
    measure_growth,
    sample_columns,
)
from rewardsmith.check.trajectory_families import TRAJECTORY_FAMILIES
from rewardsmith.core.processes import usable_cpus
from rewardsmith.core.registry import registered_target

pytestmark = pytest.mark.xdist_group("adversarial")


def _builtin(name: str) -> bool:
    """Registered by the package itself (test modules register rewards of their own in the same process)."""
    return getattr(registered_target(name), "__module__", "").startswith("rewardsmith.")


TARGETS = [t for t in fuzz_targets() if t.name == "judge verdict parser" or _builtin(t.name)]
RUN = [t for t in TARGETS if t.call is not None]


def _ids(targets):
    return [t.name.replace(" ", "_") for t in targets]


def test_every_registered_reward_is_fuzzed_or_skipped_with_a_reason():
    described = list_rewards()
    registered = {n for n, d in described.items() if not d.startswith("alias of") and _builtin(n)}
    assert {t.name for t in TARGETS} == registered | {"judge verdict parser"}
    for target in TARGETS:
        assert target.call is not None or (target.skip and len(target.skip) > 20), target.name
    # the rule rewards are all run, not skipped
    assert {"think_format", "gsm8k_accuracy", "math_accuracy", "tool_call_match", "code_syntax"} <= {
        t.name for t in RUN
    }


def _screen(call) -> tuple[list[Growth], list[str]]:
    screened, crashes = [], []
    for fam in FAMILIES:
        try:
            screened.append(measure_growth(call, fam, SIZES[:2], give_up=5.0))
        except Exception as exc:  # a crash on hostile text is a defect too
            crashes.append(f"{fam.name}: raises {type(exc).__name__}: {str(exc)[:100]}")
    return screened, crashes


def _check_growth(target, screened: list[Growth], top: int) -> list[str]:
    by_name = {f.name: f for f in FAMILIES}
    slowest = sorted(screened, key=lambda g: g.largest[1], reverse=True)[:top]
    suspects = {g.family for g in screened if g.problems()} | {g.family for g in slowest}
    problems = []
    for name in sorted(suspects):
        growth = measure_growth(target.call, by_name[name], SIZES, repeats=(3, 3, 2), give_up=20.0)
        problems += [f"{p} [{growth.describe()}]" for p in growth.problems()]
    return problems


@pytest.mark.parametrize("target", RUN, ids=_ids(RUN))
def test_time_grows_linearly_on_adversarial_text(target):
    target.call("warm up")  # worker processes start here, not inside a timing
    try:
        screened, crashes = _screen(target.call)
        problems = crashes + _check_growth(target, screened, top=2)
    finally:
        if target.reward is not None:
            target.reward.close()
    assert not problems, f"{target.name}:\n" + "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("target", RUN, ids=_ids(RUN))
def test_time_grows_linearly_on_every_family_up_to_1_mb(target):
    target.call("warm up")
    _assert_linear(target, FAMILIES, SIZES, (2, 2, 1))


def _assert_linear(target, families, sizes, repeats) -> None:
    problems = []
    try:
        for fam in families:
            growth = measure_growth(target.call, fam, sizes, repeats=repeats, give_up=20.0)
            problems += [f"{p} [{growth.describe()}]" for p in growth.problems()]
    finally:
        if target.reward is not None:
            target.reward.close()
    assert not problems, f"{target.name}:\n" + "\n".join(problems)


# -- the rule itself: a quadratic scorer is caught, a linear one is not, however busy the machine -------------


def _linear(text: str) -> int:
    """A hash of every character, three times over: pure-Python work in proportion to the text (~0.15 s per MB)."""
    h = 0
    for _ in range(3):
        for ch in text:
            h = (h * 31 + ord(ch)) & 0xFFFF
    return h


def _rescans(text: str) -> int:
    """A search from every eighth position to the end: quadratic (~0.2 s at 100 KB, ~20 s at 1 MB)."""
    return sum(text.count("b", i) for i in range(0, len(text), 8))


def _backtracks(text: str) -> bool:
    """A regex that fails late from every start: the quadratic shape the fuzz families are built to find."""
    return re.search(r"a+b", text) is not None


@pytest.fixture(params=["quiet", "every core busy"])
def clock(request):
    """The fuzz clock, with (or without) a busy loop per usable CPU running beside it, which it must not count."""
    if request.param == "quiet":
        yield cpu_seconds
        return
    loaders = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(usable_cpus())]
    try:
        yield functools.partial(cpu_seconds, exclude={p.pid for p in loaders})
    finally:
        for loader in loaders:
            loader.kill()
            loader.wait()


def test_the_growth_rule_catches_a_quadratic_scorer_and_passes_a_linear_one(clock):
    run = family("run:a")
    linear = measure_growth(_linear, run, SIZES, repeats=2, give_up=20.0, clock=clock)
    assert not linear.problems(), linear.describe()
    assert linear.per_10x(floor=1e-3) < 15, linear.describe()  # fitted on the times themselves, however small

    for quadratic in (_rescans, _backtracks):
        growth = measure_growth(quadratic, run, SIZES, repeats=2, give_up=2.0, clock=clock)
        found = " ".join(growth.problems())
        assert "CPU time per 10x size" in found and "at 1 MB" in found, growth.describe()
        assert growth.per_10x() > 15, growth.describe()


def test_cpu_time_counts_the_work_of_child_processes_and_not_the_waiting():
    """A scorer that runs its work in a subprocess is charged for it; one that sleeps is not."""
    code = "sum(range(3_000_000))"
    before = cpu_seconds()
    subprocess.run([sys.executable, "-c", code], check=True)
    spawned = cpu_seconds() - before
    before = cpu_seconds()
    subprocess.run([sys.executable, "-c", "import time; time.sleep(0.3)"], check=True)
    slept = cpu_seconds() - before
    assert spawned > slept + 0.02, (spawned, slept)


# -- invisible characters never earn a higher score ----------------------------------------------------------

#: Characters that show nothing (or only blank space): format controls, zero-width characters, Hangul fillers,
#: the Braille blank, variation selectors, tag characters, the combining grapheme joiner, odd spaces, controls.
INVISIBLE = (
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066", "\u180e", "\u2062",
    "\U000e0041", "\u3164", "\u115f", "\u1160", "\uffa0", "\u2800", "\ufe0f", "\U000e0100", "\u034f",
    "\u00a0", "\u3000", "\u2003", "\u202f", "\x00", "\x7f",
)  # fmt: skip

#: Combining marks with nothing to combine with: the only content of a block shows nothing.
LONE_MARKS = ("\u0301", "\u0308\u0301", "\u20dd")

#: Characters drawn like blank space (replacing a space with one must not merge or split what is seen).
BLANKS = ("\u3164", "\u2800", "\u00a0", "\u3000", "\u115f", "\uffa0")

#: Letters replaced by look-alikes (Cyrillic, Greek, mathematical bold, fullwidth).
LOOK_ALIKES = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "i": "і", "g": "𝐠", "t": "ｔ"}

#: Completions whose score invisible characters might raise: empty blocks and steps, repeated words, short texts.
BASES = (
    "<think></think><answer></answer>",
    "<think>\n</think>\n<answer>\n</answer>",
    "<think>x</think><answer></answer>",
    "Step 1:\nStep 2:\nStep 3:\nStep 4:",
    "First, Then, Finally,",
    "go go go go go go go go go go",
    "the cat sat on the mat the cat sat on the mat the cat sat on the mat",
    "<answer></answer>",
    "\\boxed{}",
    "####",
    "```python\n\n```",
    "<code></code>",
    "<code>import os</code>",
    "<tool_call></tool_call>",
    '{"answer": }',
    "short",
    "",
)


def _after_words(text: str, mark: str) -> str:
    return re.sub(r"(\S+)", lambda m: m.group(1) + mark, text)


def _in_blocks(text: str, mark: str) -> str:
    """``mark`` as the content of every empty block (``<think></think>``, ``\\boxed{}``, a fenced block, ...)."""
    return re.sub(r"(<[a-z_]+>|```python\n|\\boxed\{|####)(?=<|\n|`|\}|$)", lambda m: m.group(1) + mark * 3, text)


def _after_markers(text: str, mark: str) -> str:
    return re.sub(r"([:,\n])", lambda m: m.group(1) + mark * 10, text)


def _blank_spaces(text: str, mark: str) -> str:
    return text.replace(" ", mark) if " " in text else text + mark * 20


def _look_alikes(text: str, mark: str) -> str:
    words = re.split(r"(\s+)", text)
    return "".join("".join(LOOK_ALIKES.get(ch, ch) for ch in w) if i % 4 == 2 else w for i, w in enumerate(words))


#: How invisible characters are added: (name, function, the characters it uses).
INJECTIONS = (
    ("after every word", _after_words, INVISIBLE),
    ("as the content of every empty block", _in_blocks, INVISIBLE + LONE_MARKS),
    ("after every marker", _after_markers, INVISIBLE),
    ("instead of spaces", _blank_spaces, BLANKS),
    ("look-alike letters", _look_alikes, ("",)),
)


def _looks_like(mark: str) -> str:
    """What ``mark`` looks like written plainly: a space for characters drawn blank, nothing for the others."""
    return " " if mark and (mark in BLANKS or mark.isspace()) else ""


def _variants() -> list[tuple[str, str, str]]:
    """(plain, variant, how): each base with invisible characters added, and the plain text it looks like."""
    out = []
    for name, inject, marks in INJECTIONS:
        cycle = itertools.cycle(marks)
        for base in BASES:
            for _ in range(2 if len(marks) > 1 else 1):
                mark = next(cycle)
                variant = inject(base, mark)
                plain = base if inject in (_blank_spaces, _look_alikes) else inject(base, _looks_like(mark))
                if variant != base:
                    out.append((plain, variant, f"{name} ({mark.encode('unicode_escape').decode() or 'look-alikes'})"))
    return out


VARIANTS = _variants()


@pytest.mark.parametrize("target", [t for t in RUN if t.reward is not None], ids=_ids([t for t in RUN if t.reward]))
def test_invisible_characters_and_look_alikes_never_raise_a_score(target):
    """A text scores no higher than the plain text it looks like (invisible characters gone, blank ones spaces)."""
    reward = target.reward
    columns = sample_columns(reward)
    texts = [p for p, _, _ in VARIANTS] + [v for _, v, _ in VARIANTS]
    n = len(texts)
    try:
        scores = reward(
            prompts=[PROMPT] * n,
            completions=texts,
            completion_ids=[[1, 2, 3]] * n,
            **{k: v * n for k, v in columns.items()},
        )
    finally:
        reward.close()
    half = len(VARIANTS)
    raised = []
    for (plain, variant, how), before, score in zip(VARIANTS, scores[:half], scores[half:]):
        if score is not None and (before is None or score > before + 1e-9):
            raised.append(f"{how}: {plain!r} scores {before}, with them {score} ({variant!r})")
    assert not raised, f"{target.name}: invisible characters raised the score\n" + "\n".join(raised)


# -- rollouts of many turns ------------------------------------------------------------------------------------

REWARDS = [t for t in RUN if t.reward is not None]


@pytest.mark.parametrize("target", REWARDS, ids=_ids(REWARDS))
def test_time_grows_linearly_on_trajectories_of_1000_turns(target):
    target.call(TRAJECTORY_FAMILIES[0].text(1_000))  # warm up
    _assert_linear(target, TRAJECTORY_FAMILIES, SIZES[:2], 3)  # 100 and 1,000 turns


@pytest.mark.slow
@pytest.mark.parametrize("target", REWARDS, ids=_ids(REWARDS))
def test_time_grows_linearly_on_trajectories_up_to_10000_turns(target):
    target.call(TRAJECTORY_FAMILIES[0].text(1_000))
    _assert_linear(target, TRAJECTORY_FAMILIES, SIZES, (2, 2, 1))
