"""The rewards and settings the peers have: group-relative length, Chinese repetition, reasoning delimiters,
language consistency."""

from __future__ import annotations

import pytest
from cpu_timing import assert_linear, cpu_time

from rewardsmith import get_reward
from rewardsmith.core.errors import RewardConfigError
from rewardsmith.rewards.language import detect_language
from rewardsmith.rewards.segment import MAX_SEGMENTED_CHARS

# -- group_length -----------------------------------------------------------------------------------------------


def test_group_length_is_relative_to_each_prompts_own_group():
    reward = get_reward("group_length", unit="chars")
    prompts = ["p", "p", "p", "q", "q"]
    completions = ["aa", "aaaa", "aaaaaa", "a" * 10, "a" * 100]
    correct = [True, True, True, True, True]
    # p: lengths 2..6; q: lengths 10 and 100. Each group has its own shortest and longest.
    assert reward(prompts=prompts, completions=completions, correct=correct) == [0.5, 0.0, -0.5, 0.5, -0.5]


def test_group_length_wrong_answers_never_gain_and_unknown_is_none():
    reward = get_reward("group_length", unit="chars")
    scores = reward(prompts=["p"] * 4, completions=["a", "aaa", "aaaaa", "aa"], correct=[False, False, None, 1.0])
    assert scores == [0.0, pytest.approx(0.0), None, pytest.approx(0.25)]


def test_group_length_with_group_size_and_tokens():
    reward = get_reward("group_length", group_size=2)
    scores = reward(completions=["", "", "", ""], completion_ids=[[1], [1, 2, 3], [1] * 5, [1] * 5],
                    correct=[1, 1, 1, 0])  # fmt: skip
    assert scores == [0.5, -0.5, 0.0, 0.0]
    with pytest.raises(RewardConfigError, match="group_size"):
        reward(completions=["a", "b", "c"], completion_ids=[[1], [2], [3]], correct=[1, 1, 1])


def test_group_length_with_a_correctness_reward():
    reward = get_reward("group_length", correctness="gsm8k_accuracy", unit="chars")
    completions = ["#### 18", "so the answer is #### 18", "#### 17"]
    scores = reward(prompts=["p"] * 3, completions=completions, answer=["18"] * 3)
    assert scores == [0.5, -0.5, 0.0]
    result = reward.explain(prompts=["p"], completions=["#### 18"], answer=["18"])[0]
    assert result.score == 0.0 and "correct" in result.reason


# -- repetition on Chinese ----------------------------------------------------------------------------------------


def test_chinese_repetition_counts_words_not_characters():
    reward = get_reward("repetition", ngram_size=2, language="zh")
    assert reward(completions=["这个这个这个这个这个", "我爱北京天安门", ""]) == [-0.75, 0.0, 0.0]
    # white space is not a word: spacing cannot dilute the repetition
    assert reward(completions=["这个 这个 这个 这个 这个"]) == [-0.75]
    with pytest.raises(RewardConfigError, match="unit='tokens'"):
        get_reward("repetition", language="ja")


@pytest.mark.slow
def test_chinese_repetition_is_linear_and_bounded():
    reward = get_reward("repetition", language="zh")
    reward(completions=["预热"])

    def score(text: str) -> None:
        assert reward(completions=[text])[0] < -0.9

    assert_linear(score, lambda n: "这个重复的句子" * (n // 7 + 1), "repeat:这个重复的句子")
    assert MAX_SEGMENTED_CHARS == 150_000


# -- reasoning delimiters -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["math_accuracy", "gsm8k_accuracy"])
def test_reasoning_delimiters_take_the_answer_after_the_reasoning_only(name):
    reward = get_reward(name, reasoning_delimiters=["</think>"], **({"timeout": None} if "math" in name else {}))
    completions = [
        "<think>maybe \\boxed{5}</think> so \\boxed{18}",
        "<think>surely \\boxed{18} but I never finish",  # no delimiter: 0, even with the right answer
        "\\boxed{18}",  # no reasoning at all: 0
        "<think>\\boxed{18}</think> so \\boxed{17}",  # the answer in the reasoning is a draft
    ]
    assert reward(completions=completions, answer=["18"] * 4) == [1.0, 0.0, 0.0, 0.0]
    assert "never ends" in reward.explain(completions=[completions[1]], answer=["18"])[0].reason
    custom = get_reward(name, reasoning_delimiters=["</REASONING>", "</think>"])
    assert custom(completions=["x </REASONING> \\boxed{18}"], answer=["18"]) == [1.0]
    with pytest.raises(RewardConfigError, match="reasoning_delimiters"):
        get_reward(name, reasoning_delimiters=[])


def test_a_reference_in_words_does_not_parse():
    reward = get_reward("math_accuracy", timeout=None)
    assert reward(completions=["\\boxed{42}"], answer=["forty two"]) == [None]
    assert reward(completions=["\\boxed{42}"], answer=["\\text{forty two}"]) == [0.0]  # a text answer is an answer


# -- language consistency -------------------------------------------------------------------------------------------


def test_language_consistency_with_a_column_or_the_prompt():
    reward = get_reward("language_consistency")
    french = "La capitale de la France est Paris, une très belle ville."
    english = "The capital of France is Paris, a very beautiful city."
    assert reward(completions=[french, english], language=["fr", "fr"]) == [1.0, 0.0]
    prompt = [
        {"role": "system", "content": "Answer helpfully."},
        {"role": "user", "content": "Quelle est la capitale ?"},
    ]
    assert reward(prompts=[prompt, prompt], completions=[french, english]) == [1.0, 0.0]
    assert reward(completions=["这是一个中文回答，内容很简单。"], language=["zh"]) == [1.0]
    assert reward(completions=[french], language=[None], prompts=[""]) == [None]  # nothing tells the language
    assert reward(completions=["12345"], language=["fr"]) == [0.0]  # nothing to detect: not French


def test_language_detection_is_deterministic_and_reads_a_bounded_prefix():
    text = "Ceci est une phrase en français. " * 40_000  # 1.3 MB
    seconds, language = cpu_time(lambda: detect_language(text), repeats=1)
    assert language == "fr" and seconds < 3.0  # CPU seconds: the prefix is read, not 1.3 MB
    url_heavy = "see https://example.com/" + "a" * 2000 + " " + "Das ist ein deutscher Satz. " * 1000
    assert detect_language(url_heavy) == detect_language(url_heavy[:200_000]) == "de"
    assert [detect_language("Hello there my friend") for _ in range(5)] == [
        detect_language("Hello there my friend")
    ] * 5


def test_the_bounded_prefix_gives_langdetects_verdict_on_the_whole_text():
    import random

    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    rng = random.Random(3)
    pieces = ["https://x.org/" + "a" * 2000, "mail" * 10 + "@example.com ", "Hola amigo. ", "Hello friend. ", " "]
    for _ in range(6):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(50, 400)))
        detector = factory.create()
        detector.append(text)
        try:
            whole = detector.detect()
        except Exception:
            whole = None
        assert detect_language(text) == whole


def test_a_missing_text_extra_says_what_to_install(monkeypatch):
    import importlib.util

    from rewardsmith.core.extras import MissingExtraError
    from rewardsmith.rewards import language
    from rewardsmith.rewards.ifeval import text

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("langdetect", "nltk", "jieba") else real(name, *a),
    )
    for cached in (language._factory, text._tokenizers):
        cached.cache_clear()
    try:
        for name, settings in [("language_consistency", {}), ("ifeval", {}), ("repetition", {"language": "zh"})]:
            with pytest.raises(MissingExtraError, match=r"pip install 'rewardsmith\[text\]'"):
                get_reward(name, **settings)  # when the reward is made, before any training step
        monkeypatch.setattr(importlib.util, "find_spec", real)
        with pytest.raises(MissingExtraError, match=r"pip install 'rewardsmith\[text\]'"):
            monkeypatch.setattr(
                importlib.util, "find_spec", lambda name, *a: None if name == "nltk" else real(name, *a)
            )
            text.sentences_at_least("One. Two.", 2)  # and where it is used
    finally:
        for cached in (language._factory, text._tokenizers):
            cached.cache_clear()
