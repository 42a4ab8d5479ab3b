"""Composition: combine, normalisation, gate, format_and_content, route, for_task; sync and async; pickling.

Most components here read their score from a dataset column (``a``, ``b``,
``c``), so every expected value is exact and written out by hand.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import pickle
from collections import Counter

import cloudpickle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewardsmith import AsyncReward, MissingColumnError, RewardConfigError, RewardResult, reward
from rewardsmith.compose import (
    AsyncCombined,
    AsyncGated,
    AsyncRouted,
    Combined,
    Gated,
    Routed,
    combine,
    for_task,
    format_and_content,
    gate,
    normalize_scores,
    prompt_groups,
    route,
)
from rewardsmith.core.functions import is_async_callable
from rewardsmith.core.inputs import Batch

CALLS: Counter[str] = Counter()


@reward
def from_a(a):
    """The value of column ``a`` (``None``: not applicable)."""
    return a


@reward
def from_b(b):
    """The value of column ``b``; the string ``"boom"`` raises (a failure, not 'not applicable')."""
    if b == "boom":
        raise ValueError("boom")
    return b


@reward
def from_c(c):
    return c


@reward
def counted(completion: str, a=None) -> float:
    """Counts how often each completion is scored; scores 1 when ``a`` is set."""
    CALLS[completion] += 1
    return 1.0 if a is not None else 0.0


@reward
async def async_a(a):
    await asyncio.sleep(0)
    return a


RUNNING = {"now": 0, "most": 0}


@reward
async def overlapping(completion: str) -> float:
    """Records how many samples of overlapping rewards run at once."""
    RUNNING["now"] += 1
    RUNNING["most"] = max(RUNNING["most"], RUNNING["now"])
    await asyncio.sleep(0.05)
    RUNNING["now"] -= 1
    return 1.0


def call(r, **columns):
    """Call ``r`` like TRL does on completions ``c0, c1, ...``, one per value of the columns."""
    n = max(len(v) for v in columns.values() if isinstance(v, list))
    out = r(prompts=columns.pop("prompts", None), completions=[f"c{i}" for i in range(n)], **columns)
    return asyncio.run(out) if inspect.isawaitable(out) else out


def logged(r, **columns):
    """Call ``r`` the TRL way and return what it logged through ``log_metric``."""
    log: dict[str, float] = {}
    call(r, log_metric=log.__setitem__, **columns)
    return log


# -- combine -----------------------------------------------------------------------------------------


def test_combine_is_a_weighted_sum():
    both = combine([from_a, from_b], weights=[0.25, 2.0])
    assert call(both, a=[1.0, 0.0, 0.5], b=[1.0, 1.0, 0.0]) == [2.25, 2.0, 0.125]
    assert call(combine([from_a, from_b]), a=[1.0, 0.0], b=[1.0, 0.5]) == [2.0, 0.5]


def test_combine_renormalises_the_weights_of_the_components_that_apply():
    both = combine([from_a, from_b], weights=[0.2, 1.0])
    # all apply: the plain weighted sum; one applies: its weight scaled to the total 1.2; none: None
    assert call(both, a=[1.0, 1.0, None, None], b=[1.0, None, 0.5, None]) == pytest.approx([1.2, 1.2, 0.6, None])
    assert call(both, a=[None], b=[None]) == [None]


def test_combine_missing_zero_is_trls_rule():
    both = combine([from_a, from_b], weights=[0.2, 1.0], missing="zero")
    assert call(both, a=[1.0, 1.0, None, None], b=[1.0, None, 0.5, None]) == pytest.approx([1.2, 0.2, 0.5, None])


def test_combine_renormalises_by_absolute_weight_with_penalties():
    r = combine([from_a, from_b], weights=[1.0, -0.5])
    assert call(r, a=[1.0, None, 1.0], b=[1.0, 1.0, None]) == pytest.approx([0.5, -1.5, 1.5])


def test_a_failed_component_leaves_the_row_unscored_instead_of_sharing_its_weight():
    both = combine([from_a, from_b], weights=[0.2, 1.0])
    # row 0: b raised -> None (not 0.2 * 6 = 1.2, which would reward the failure); row 1: b does not apply
    assert call(both, a=[1.0, 1.0], b=["boom", None]) == pytest.approx([None, 1.2])
    assert from_b.stats["errors"] >= 1
    # TRL's rule adds 0 for a failure like for any missing score
    assert call(combine([from_a, from_b], [0.2, 1.0], missing="zero"), a=[1.0], b=["boom"]) == pytest.approx([0.2])
    # a component that scores its failures as 0 is simply counted
    zero_on_error = from_b.configure(on_error="zero")
    assert call(combine([from_a, zero_on_error], [0.2, 1.0]), a=[1.0], b=["boom"]) == pytest.approx([0.2])


def test_failures_propagate_through_nested_composites():
    inner = combine([from_b, from_c])
    outer = combine([from_a, inner])
    assert call(outer, a=[1.0, 1.0], b=["boom", None], c=[1.0, None]) == pytest.approx([None, 2.0])


def test_zero_weight_components_are_logged_but_do_not_count():
    r = combine([from_a, from_b], weights=[1.0, 0.0])
    assert call(r, a=[0.5, None], b=[1.0, 1.0]) == [0.5, None]
    log = logged(r, a=[0.5, None], b=[1.0, 1.0])
    assert log["from_a+from_b/from_b"] == 1.0


def test_combine_logs_each_component_mean_over_applicable_rows_and_its_rate():
    r = combine([from_a, from_b], weights=[0.2, 1.0])
    log = logged(r, a=[1.0, 0.0, 0.5, 1.0], b=[1.0, None, None, 0.0])
    assert log["from_a+from_b/from_a"] == pytest.approx(0.625)
    assert log["from_a+from_b/from_a/applicable"] == 1.0
    assert log["from_a+from_b/from_b"] == 0.5
    assert log["from_a+from_b/from_b/applicable"] == 0.5
    assert log["from_b/errors"] == 0.0  # the components' own error counts still go through
    # a batch where a component applies nowhere logs no mean for it (TRL would average a NaN in)
    log = logged(r, a=[1.0], b=[None])
    assert "from_a+from_b/from_b" not in log and log["from_a+from_b/from_b/applicable"] == 0.0
    assert "from_a+from_b/errors" not in log  # failures are counted once, by the component that failed


def test_combine_explain_holds_each_component_result():
    both = combine(["think_format", "gsm8k_accuracy"], weights=[0.2, 1.0])
    [result] = both.explain(completions=["<think>9*2</think><answer>18</answer>"], answer=["18"])
    assert result.score == pytest.approx(1.2)
    assert set(result.metrics) == {"think_format", "gsm8k_accuracy"}
    assert result.metrics["think_format"] == RewardResult(1.0, "reasoning then answer, each exactly once")
    assert result.metrics["gsm8k_accuracy"].reason == "predicted 18 (<answer>), reference 18"
    assert result.reason == "0.2*think_format=1 + 1*gsm8k_accuracy=1 -> 1.2"
    assert both.check("18", answer="no number").reason.endswith("(weights of the missing components shared out)")


def test_names_are_readable_distinct_and_overridable():
    assert combine(["think_format", "gsm8k_accuracy"]).name == "think_format+gsm8k_accuracy"
    twice = combine([from_a, from_a.configure(on_error="zero")])
    assert twice.labels == ["from_a", "from_a_2"] and twice.name == "from_a+from_a_2"
    assert set(logged(twice, a=[1.0])) >= {"from_a+from_a_2/from_a", "from_a+from_a_2/from_a_2"}
    renamed = combine([from_a, from_b]).named("total")
    assert renamed.name == renamed.__name__ == "total"
    assert "total/from_a" in logged(renamed, a=[1.0], b=[1.0])


def test_a_component_used_twice_is_scored_once_per_call():
    CALLS.clear()
    r = combine([counted, gate(counted, from_a)])
    # row 1: counted scores 0 (it applies), the gate is closed and from_a does not apply, so 0 * 2
    assert call(r, a=[1.0, None]) == [2.0, 0.0]
    assert CALLS == {"c0": 1, "c1": 1}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": [1.0]}, "1 weights for 2 rewards"),
        ({"weights": [1.0, "2"]}, "weight of 'from_b' must be a finite number"),
        ({"weights": [1.0, math.inf]}, "finite number"),
        ({"normalize": "softmax"}, "normalize must be one of 'minmax', 'zscore', 'rank'"),
        ({"missing": "skip"}, "missing must be 'renormalize'"),
        ({"group_size": 0}, "group_size must be a whole number"),
        ({"weights": [0, 0.0]}, "every weight is 0"),
    ],
)
def test_combine_rejects_bad_settings(kwargs, message):
    with pytest.raises(RewardConfigError, match=message):
        combine([from_a, from_b], **kwargs)


def test_combine_rejects_bad_components_and_engine_settings():
    with pytest.raises(RewardConfigError, match="at least one reward"):
        combine([])
    with pytest.raises(RewardConfigError, match="list of rewards"):
        combine(from_a)
    with pytest.raises(RewardConfigError, match="component 1: 42 is not a reward"):
        combine([from_a, 42])
    with pytest.raises(RewardConfigError, match="set them on its components"):
        combine([from_a]).configure(timeout=5)
    with pytest.raises(MissingColumnError, match="needs the dataset column 'b'"):
        call(combine([from_a, from_b]), a=[1.0])


def test_combine_takes_names_functions_and_a_comma_separated_string():
    def plain(completions, **kwargs):
        return [0.5] * len(completions)

    r = combine("think_format, tag_count")
    assert r.name == "think_format+tag_count"
    assert call(combine([plain, lambda completion: 1.0, "tag_count"]), a=[1]) == [1.5]


# -- normalisation -----------------------------------------------------------------------------------


def test_minmax_is_over_the_batch_per_component():
    r = combine([from_a, from_b], normalize="minmax")
    # a: 0, 5, 10 -> 0, 0.5, 1; b: constant -> 0
    assert call(r, a=[0.0, 5.0, 10.0], b=[3.0, 3.0, 3.0]) == [0.0, 0.5, 1.0]


def test_zscore_is_within_each_prompt_group():
    r = combine([from_a], normalize="zscore")
    prompts = ["p", "p", "q", "q", "q"]
    assert call(r, prompts=prompts, a=[1.0, 3.0, 5.0, 5.0, 5.0]) == [-1.0, 1.0, 0.0, 0.0, 0.0]
    # the same rows as one group (group_size) normalise together
    one_group = combine([from_a], normalize="zscore", group_size=5)
    out = call(one_group, prompts=prompts, a=[1.0, 3.0, 5.0, 5.0, 5.0])
    assert sum(out) == pytest.approx(0.0, abs=1e-12) and out[0] == pytest.approx(-1.75)


def test_rank_is_within_each_prompt_group_with_ties_averaged():
    r = combine([from_a], normalize="rank")
    prompts = ["p"] * 4 + ["q"]
    assert call(r, prompts=prompts, a=[0.2, 0.9, 0.2, None, 7.0]) == [0.25, 1.0, 0.25, None, 0.5]


def test_group_size_must_divide_the_batch():
    with pytest.raises(RewardConfigError, match="does not split into groups of group_size=4"):
        call(combine([from_a], normalize="zscore", group_size=4), a=[1.0] * 6)


def test_prompt_groups_are_runs_of_identical_prompts_including_conversations():
    chat = [{"role": "user", "content": "hi"}]
    other = [{"role": "user", "content": "yo"}]
    batch = Batch.from_call([chat, chat, other, other, chat], ["a"] * 5, None, {})
    assert prompt_groups(batch) == [range(0, 2), range(2, 4), range(4, 5)]


SCORES = st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)), min_size=1, max_size=12)


@st.composite
def grouped_scores(draw):
    groups = draw(st.lists(SCORES, min_size=1, max_size=5))
    flat = [s for g in groups for s in g]
    ranges, start = [], 0
    for g in groups:
        ranges.append(range(start, start + len(g)))
        start += len(g)
    return flat, ranges


@settings(max_examples=100, deadline=None)
@given(grouped_scores())
def test_zscored_components_have_mean_0_and_std_1_within_each_group(data):
    scores, groups = data
    out = normalize_scores(scores, "zscore", groups)
    assert [v is None for v in out] == [v is None for v in scores]
    for rows in groups:
        present = [out[i] for i in rows if out[i] is not None]
        raw = [scores[i] for i in rows if scores[i] is not None]
        if not present:
            continue
        assert math.fsum(present) / len(present) == pytest.approx(0.0, abs=1e-9)
        if min(raw) == max(raw):
            assert set(present) == {0.0}
        else:
            std = math.sqrt(math.fsum(v * v for v in present) / len(present))
            assert std == pytest.approx(1.0, rel=1e-6)


@settings(max_examples=100, deadline=None)
@given(grouped_scores())
def test_ranks_lie_in_0_1_keep_order_and_average_0_5_within_each_group(data):
    scores, groups = data
    out = normalize_scores(scores, "rank", groups)
    for rows in groups:
        present = [i for i in rows if scores[i] is not None]
        if not present:
            continue
        assert all(0.0 <= out[i] <= 1.0 for i in present)
        assert math.fsum(out[i] for i in present) / len(present) == pytest.approx(0.5)
        for i in present:
            for j in present:
                if scores[i] < scores[j]:
                    assert out[i] < out[j]


@settings(max_examples=100, deadline=None)
@given(SCORES)
def test_minmax_spans_0_to_1_unless_constant(scores):
    out = normalize_scores(scores, "minmax")
    present = [v for v in out if v is not None]
    raw = [v for v in scores if v is not None]
    if not raw:
        return
    if min(raw) == max(raw):
        assert set(present) == {0.0}
    else:
        assert min(present) == 0.0 and max(present) == 1.0


PAIRS = st.lists(
    st.tuples(st.one_of(st.none(), st.floats(0, 1)), st.one_of(st.none(), st.floats(0, 1))), min_size=1, max_size=10
)


@settings(max_examples=100, deadline=None)
@given(PAIRS, st.floats(0.01, 5), st.floats(0.01, 5))
def test_renormalised_scores_are_the_weighted_mean_of_what_applies_times_the_total_weight(pairs, wa, wb):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    out = call(combine([from_a, from_b], weights=[wa, wb]), a=a, b=b)
    for x, y, got in zip(a, b, out):
        terms = [(w, v) for w, v in ((wa, x), (wb, y)) if v is not None]
        if not terms:
            assert got is None
        else:
            mean = sum(w * v for w, v in terms) / sum(w for w, _ in terms)
            assert got == pytest.approx(mean * (wa + wb), abs=1e-9)


# -- gate --------------------------------------------------------------------------------------------


def test_gate_counts_the_reward_only_where_the_condition_reaches_the_threshold():
    g = gate(from_a, from_b, threshold=0.5, otherwise=-1.0)
    # open, closed, condition None, open but reward not applicable, closed and reward not applicable
    assert call(g, a=[0.5, 0.4, None, 1.0, 0.0], b=[0.8, 0.8, 0.8, None, None]) == [0.8, -1.0, None, None, None]
    assert call(gate(from_a, from_b, otherwise=None), a=[0.0], b=[1.0]) == [None]


def test_gate_with_a_failed_condition_scores_as_closed_and_a_failed_reward_without_a_range_is_unscored():
    g = gate(from_b, from_a)
    # a condition that could not be checked never opens the gate: `otherwise`, not a pass for "not applicable"
    assert call(g, a=[1.0, 1.0], b=["boom", 1.0]) == [0.0, 1.0]
    assert call(combine([from_c, g]), a=[1.0], b=["boom"], c=[1.0]) == [1.0]
    # a failed reward behind an open gate, when the reward declares no range, leaves the row unscored
    assert call(gate(from_a, from_b), a=[1.0], b=["boom"]) == [None]
    assert call(gate(from_b, from_a, otherwise=None), a=[1.0], b=["boom"]) == [None]


def test_lazy_gate_scores_the_reward_only_where_the_gate_is_open():
    CALLS.clear()
    g = gate(from_b, counted, lazy=True)
    assert call(g, b=[1.0, 0.0, None, 1.0], a=[1, 1, 1, None]) == [1.0, 0.0, None, 0.0]
    assert CALLS == {"c0": 1, "c3": 1}


def test_gate_logs_its_parts_and_how_often_it_opens():
    g = gate(from_a, from_b)
    log = logged(g, a=[1.0, 0.0, 1.0, None], b=[0.5, 1.0, None, 1.0])
    assert log == {
        "from_a/errors": 0.0,
        "from_b/errors": 0.0,
        "from_b_if_from_a/from_a": pytest.approx(2 / 3),
        "from_b_if_from_a/from_a/applicable": 0.75,
        "from_b_if_from_a/from_b": pytest.approx(2.5 / 3),
        "from_b_if_from_a/from_b/applicable": 0.75,
        "from_b_if_from_a/open": 0.5,
    }


def test_gate_explains_itself():
    g = gate("think_format", "gsm8k_accuracy")
    opened = g.check("<think>9*2</think><answer>18</answer>", answer="18")
    assert opened.reason == "gate open: think_format 1 >= 1 -> 1; gsm8k_accuracy: predicted 18 (<answer>), reference 18"
    assert set(opened.metrics) == {"think_format", "gsm8k_accuracy"}
    closed = g.check("#### 18", answer="18")
    assert closed.score == 0.0 and closed.reason == "gate closed: think_format 0 < 1 -> 0"
    assert gate(from_a, from_a).labels == ["from_a", "from_a_2"]


def test_format_and_content():
    plain = format_and_content("think_format", "gsm8k_accuracy")
    gated = format_and_content("think_format", "gsm8k_accuracy", gated=True, format_weight=0.5)
    texts = ["<think>9*2</think><answer>18</answer>", "#### 18", "<think>9*2</think><answer>17</answer>", "hm"]
    answers = ["18"] * 4
    assert plain(completions=texts, answer=answers) == pytest.approx([1.2, 1.0, 0.2, 0.0])
    assert gated(completions=texts, answer=answers) == pytest.approx([1.5, 0.0, 0.5, 0.0])
    assert plain.name == gated.name == "think_format+gsm8k_accuracy"
    assert isinstance(gated.rewards[1], Gated) and gated.rewards[0] is gated.rewards[1].condition


# -- route and for_task ------------------------------------------------------------------------------


def test_route_scores_each_row_with_the_reward_for_its_task():
    r = route({"x": from_a, "y": from_b})
    assert call(r, task=["x", "y", "z", "x"], a=[1.0, 9.0, 9.0, 0.5], b=[9.0, 0.25, 9.0, 9.0]) == [1.0, 0.25, None, 0.5]
    assert r.name == "from_a|from_b"
    with pytest.raises(MissingColumnError, match="'task'"):
        call(r, a=[1.0], b=[1.0])
    assert call(route({1: from_a}, by="kind"), kind=[1, 2], a=[0.5, 0.5]) == [0.5, None]


def test_route_calls_each_reward_once_on_its_rows_only():
    CALLS.clear()
    r = route({"x": counted, "y": counted, "z": from_a})
    assert call(r, task=["x", "z", "y", "x"], a=[1, 0.5, None, None]) == [1.0, 0.5, 0.0, 0.0]
    assert CALLS == {"c0": 1, "c2": 1, "c3": 1}


def test_route_logs_each_task_and_the_unrouted_share():
    r = route({"x": from_a, "y": from_b})
    log = logged(r, task=["x", "y", "x", "w"], a=[1.0, 0, 0.0, 0], b=[0, None, 0, 0])
    assert log["from_a|from_b/x"] == 0.5 and log["from_a|from_b/x/applicable"] == 0.5
    assert "from_a|from_b/y" not in log and log["from_a|from_b/y/applicable"] == 0.0
    assert log["from_a|from_b/unrouted"] == 0.25


def test_route_explain_says_which_reward_scored_each_row():
    r = route({"math": "gsm8k_accuracy", "chat": "think_format"})
    results = r.explain(completions=["#### 4", "x"], task=["math", "poem"], answer=["4", None])
    assert results[0].reason == "task='math' -> gsm8k_accuracy: predicted 4 (####), reference 4"
    assert results[0].metrics["math"].score == 1.0
    assert results[1] == RewardResult(None, "no reward for task='poem'")


def test_split_route_gives_one_reward_per_task_reward_each_none_off_its_task():
    r = route({"x": from_a, "y": from_b, "w": from_a})
    parts = r.split()
    assert [p.name for p in parts] == ["from_a", "from_b"]
    columns = {"task": ["x", "y", "w", "v"], "a": [1.0, 9.0, 0.5, 9.0], "b": [9.0, 0.25, 9.0, 9.0]}
    assert [call(p, **dict(columns)) for p in parts] == [[1.0, None, 0.5, None], [None, 0.25, None, None]]
    # together the parts score exactly the rows the route scores
    assert call(r, **dict(columns)) == [1.0, 0.25, 0.5, None]


def test_for_task_keeps_the_reward_name():
    math_only = for_task(from_a, ["x", "w"])
    assert math_only.name == "from_a"
    assert call(math_only, task=["x", "y", "w"], a=[1.0, 1.0, 0.0]) == [1.0, None, 0.0]
    assert math_only.explain(completions=["c"], task=["y"], a=[1.0])[0].reason == "task='y' is not one of ['x', 'w']"


def test_route_needs_a_mapping():
    with pytest.raises(RewardConfigError, match="mapping from task to reward"):
        route([from_a])
    with pytest.raises(RewardConfigError, match="task 'x'"):
        route({"x": "no_such_reward_anywhere"})


def test_normalisation_inside_a_route_keeps_prompt_groups():
    z = combine([from_a], normalize="zscore").named("z")
    r = route({"x": z, "y": from_b})
    prompts = ["p", "p", "q", "q", "r", "r"]
    tasks = ["x", "x", "y", "y", "x", "x"]
    out = call(r, prompts=prompts, task=tasks, a=[1.0, 3.0, 0, 0, 5.0, 5.0], b=[0, 0, 0.5, 1.0, 0, 0])
    assert out == [-1.0, 1.0, 0.5, 1.0, 0.0, 0.0]


def test_nested_combinations_have_exact_values():
    # 0.5 * from_c + 1.0 * (gate(from_a >= 1) of route{x: from_b, y: from_c})
    inner = gate(from_a, route({"x": from_b, "y": from_c}))
    total = combine([from_c, inner], weights=[0.5, 1.0]).named("total")
    out = call(
        total,
        task=["x", "x", "y", "z", "x"],
        a=[1.0, 0.0, 1.0, 1.0, None],
        b=[0.8, 0.8, 9.0, 9.0, 1.0],
        c=[0.2, 0.2, 0.6, 0.4, 0.2],
    )
    # row 3: task z is unrouted, so the gate gives None and from_c's weight is shared out: 0.4 * 1.5
    # row 4: the condition does not apply, likewise: 0.2 * 1.5
    assert out == pytest.approx([0.9, 0.1, 0.9, 0.6, 0.3])
    [result] = total.explain(completions=["c"], task=["x"], a=[1.0], b=[0.8], c=[0.2])
    gate_result = result.metrics[inner.name]
    assert gate_result.metrics["from_a"].score == 1.0
    assert gate_result.metrics["from_b|from_c"].metrics["x"].score == 0.8


# -- sync and async ----------------------------------------------------------------------------------


def _is_async(obj) -> bool:
    """TRL's test: calling it gives a coroutine (an async ``__call__``)."""
    return is_async_callable(obj)


def test_a_composite_is_async_exactly_when_a_component_is():
    sync_parts = [combine([from_a, from_b]), gate(from_a, from_b), route({"x": from_a}), for_task(from_a, "x")]
    async_parts = [combine([from_a, async_a]), gate(async_a, from_b), route({"x": async_a}), for_task(async_a, "x")]
    assert not any(_is_async(r) for r in sync_parts)
    assert all(_is_async(r) and isinstance(r, AsyncReward) for r in async_parts)
    # async all the way up
    assert _is_async(combine([from_b, gate(from_a, route({"x": async_a}))]))
    assert isinstance(combine([async_a]), AsyncCombined) and isinstance(gate(async_a, from_a), AsyncGated)
    assert isinstance(route({"x": async_a}), AsyncRouted)
    assert type(combine([from_a])) is Combined and type(route({"x": from_a})) is Routed


def test_async_composites_score_like_sync_ones():
    columns = {"task": ["x", "x", "y"], "a": [1.0, None, 0.5], "b": [0.5, 1.0, None]}
    for make in (
        lambda a: combine([a, from_b], weights=[0.2, 1.0]),
        lambda a: gate(a, from_b, threshold=0.75),
        lambda a: route({"x": a, "y": from_b}),
    ):
        assert call(make(async_a), **dict(columns)) == pytest.approx(call(make(from_a), **dict(columns)))
    r = combine([async_a, from_b])
    assert r.explain(completions=["c"], a=[1.0], b=[0.5])[0].reason == "1*async_a=1 + 1*from_b=0.5 -> 1.5"


def test_async_components_run_concurrently():
    RUNNING.update(now=0, most=0)
    r = combine([overlapping, overlapping.named("overlapping_too"), from_a])
    assert call(r, a=[1.0]) == [3.0]
    assert RUNNING["most"] == 2


def test_explain_of_an_async_composite_works_inside_a_running_loop():
    r = combine([async_a, from_b])

    async def inside():
        return r.explain(completions=["c"], a=[1.0], b=[1.0])

    assert asyncio.run(inside())[0].score == 2.0


# -- pickling ----------------------------------------------------------------------------------------

COMPOSED = {
    "combine": combine([from_a, "think_format"], weights=[0.5, 2.0]),
    "combine-normalized": combine([from_a, from_b], normalize="zscore", missing="zero"),
    "combine-named": combine([from_a, from_b]).named("total"),
    "gate": gate(from_a, from_b, threshold=0.5, otherwise=-1.0),
    "gate-lazy": gate(from_a, from_b, lazy=True),
    "format-and-content": format_and_content("think_format", "gsm8k_accuracy", gated=True),
    "route": route({"x": from_a, "y": "gsm8k_accuracy"}),
    "split-route": route({"x": from_a, "y": from_b}).split()[1],
    "for-task": for_task(from_b, ["y"]),
    "nested": combine([from_a, gate(from_b, route({"x": from_c, "y": from_a}))], [0.3, 1.0]),
    "async-combine": combine([async_a, from_b], weights=[0.2, 1.0]),
    "async-gate": gate(from_b, async_a),
    "async-route": route({"x": async_a, "y": from_b}),
    "async-nested": combine([from_c, route({"x": gate(from_b, async_a), "y": from_b})]).named("all"),
}
INPUTS = {
    "prompts": ["p", "p", "q", "q"],
    "completions": ["<think>a</think><answer>4</answer>", "#### 4", "4", "x"],
    "task": ["x", "y", "x", "y"],
    "a": [1.0, 0.0, None, 0.5],
    "b": [0.5, 1.0, 0.25, None],
    "c": [0.0, 1.0, 0.5, 0.5],
    "answer": ["4", "4", "5", "no number"],
}


def _scores(r):
    out = r(**INPUTS)
    return asyncio.run(out) if inspect.isawaitable(out) else out


@pytest.mark.parametrize("name", list(COMPOSED))
@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_pickle_round_trip_keeps_behaviour(name, dumps):
    made = COMPOSED[name]
    copy = pickle.loads(dumps(made))
    assert type(copy) is type(made) and copy.name == made.name and repr(copy) == repr(made)
    assert _is_async(copy) == _is_async(made)
    expected = _scores(made)
    assert any(v is not None for v in expected)
    assert _scores(copy) == expected
    assert [r.reason for r in copy.explain(**INPUTS)] == [r.reason for r in made.explain(**INPUTS)]


def test_composites_report_the_columns_their_components_need():
    r = combine([from_a, gate("think_format", route({"x": from_b, "y": "gsm8k_accuracy"}))])
    assert r.required_columns == ["a", "task", "b", "answer"]


def test_a_reward_routed_twice_on_different_rows_in_one_call_gets_each_set_of_rows():
    # Each route scores from_a on its own sub-batch of rows; the two sub-batches must never be confused
    # (a sub-batch freed after the first route must not pass for the second one).
    first = route({"x": from_a})
    second = route({"x": from_a, "y": from_a})
    columns = {"task": ["x", "y", "x", "y", "y"], "a": [1.0, 2.0, 3.0, 4.0, 5.0]}
    for _ in range(20):
        assert call(combine([first, second], missing="zero"), **dict(columns)) == [2.0, 2.0, 6.0, 4.0, 5.0]


def test_a_config_error_in_an_async_composite_is_raised():
    RUNNING.update(now=0, most=0)
    with pytest.raises(MissingColumnError, match="needs the dataset column 'b'"):
        call(combine([overlapping, from_b]), a=[1.0])


@pytest.mark.slow
def test_a_timed_out_component_does_not_earn_the_weight_of_the_others():
    from engine_rewards import hostile  # runs in a worker process that is killed when its time is up

    quick = hostile.configure(timeout=0.25)
    both = combine([from_a, quick], weights=[0.2, 1.0])
    try:
        scores = both(completions=["sleep", "abc"], a=[1.0, 1.0])
        assert scores == pytest.approx([None, 3.2])  # not 1.2 for the completion that hung the checker
        assert quick.stats["timeouts"] == 1
    finally:
        both.close()
