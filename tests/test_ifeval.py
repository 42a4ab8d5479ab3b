"""The ``ifeval`` reward: every IFEval constraint type on hand-made responses at its edges (strict and loose), the
data layouts and their errors, the reward's scores and metrics, real prompts, linear time, and the converter."""

from __future__ import annotations

import json
import random
import re

import pytest
from cpu_timing import assert_linear
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rewardsmith import get_reward
from rewardsmith.cli import app
from rewardsmith.data import prepare_dataset
from rewardsmith.rewards.ifeval import (
    CONSTRAINTS,
    ConstraintError,
    IFEval,
    ifeval_verdicts,
    loose_variants,
    parse_constraints,
)
from rewardsmith.rewards.ifeval.detectable import bullet_lines, count_placeholders, title
from rewardsmith.rewards.ifeval.text import (
    MAX_CHARS,
    capital_words_at_least,
    count_words,
    sentences_at_least,
)
from tests.ifeval_responses import random_response

AT_LEAST, LESS = "at least", "less than"

# (constraint id, kwargs, response, strict verdict, loose verdict)
CASES = [
    # punctuation
    ("punctuation:no_comma", {}, "No commas at all.", True, True),
    ("punctuation:no_comma", {}, "One, two.", False, False),
    ("punctuation:no_comma", {}, "Full-width comma，is not a comma.", True, True),
    ("punctuation:no_comma", {}, "Sure, here:\nno commas here", False, True),  # loose drops the first line
    # length_constraints:number_words (\w+ runs)
    ("length_constraints:number_words", {"num_words": 4, "relation": AT_LEAST}, "It's a test.", True, True),
    ("length_constraints:number_words", {"num_words": 4, "relation": LESS}, "It's a test.", False, False),
    ("length_constraints:number_words", {"num_words": 3, "relation": LESS}, "well-known", True, True),
    ("length_constraints:number_words", {"num_words": 2, "relation": AT_LEAST}, "café niño", True, True),
    ("length_constraints:number_words", {"num_words": 3, "relation": LESS}, "Intro line here\none two", False, True),
    # length_constraints:number_sentences (Punkt)
    (
        "length_constraints:number_sentences",
        {"num_sentences": 2, "relation": LESS},
        "Dr. Smith met Mr. Jones.",
        True,
        True,
    ),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": AT_LEAST}, "One. Two! Three?", True, True),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": LESS}, "One. Two! Three?", False, False),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 2, "relation": AT_LEAST},
        "It costs 3.5 dollars.",
        False,
        False,
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 2, "relation": LESS},
        "Sure thing.\nOne sentence.",
        False,
        True,
    ),
    # length_constraints:number_paragraphs (*** dividers)
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "A\n***\nB", True, True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "***\nA\n***\nB\n***", True, True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "A\n***\n***\nB", False, False),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "A\n\nB", False, False),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 3}, "A ****B* * *C", False, False),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 1}, "A\n***\nB", False, True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "Intro\n* * *\nA ***B", True, True),
    # length_constraints:nth_paragraph_first_word (\n\n paragraphs)
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "elm"},
        "Trees.\n\nElm, the tree.",
        True,
        True,
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "elm"},
        "Trees.\n\n\"'Elm's bark.",
        False,
        False,
    ),  # one quote kind is stripped, then "'" ends the word
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "elm"},
        "Trees.\n\nElms grow.",
        False,
        False,
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "elm"},
        "Trees.\n\n\n\nElm tree.",
        False,
        False,
    ),  # the 2nd piece is empty: fails, as in IFEval
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "elm"},
        "Trees.\n***\nElm tree.",
        False,
        True,
    ),  # loose: without "*" the divider is a blank line
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 3, "nth_paragraph": 1, "first_word": "a"},
        "A b.\n\nC d.",
        False,
        False,
    ),
    # detectable_content:number_placeholders
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "[name] at [address]", True, True),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "[] and [ ]", True, True),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "[name\n] [x]", False, False),
    ("detectable_content:number_placeholders", {"num_placeholders": 1}, "[[nested]]", True, True),
    # detectable_content:postscript
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Bye.\nP.S. see you", True, True),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Bye. p. s. later", True, True),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, "Bye. PS: later", False, False),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "x\np. p. s note", True, True),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "x\nP.S. note", False, False),
    ("detectable_content:postscript", {"postscript_marker": "Note:"}, "end\nNOTE: this", True, True),
    # detectable_format:number_bullet_lists
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* a\n* b", True, True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "- a\n  - b\nc", True, True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* a\n**b**\n* c", True, True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "* a\n---\n- c", True, True),  # --- counts
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "*\n* b\n* c", True, True),  # bare * swallows
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* a\n* b\n* c", False, True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 1}, "\n\n\n   * a", True, True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "- intro\n* a\n* b", False, True),
    # detectable_format:constrained_response
    ("detectable_format:constrained_response", {}, "My answer is yes.", True, True),
    ("detectable_format:constrained_response", {}, "Well. My answer is maybe. Really.", True, True),
    ("detectable_format:constrained_response", {}, "my answer is yes.", False, False),
    ("detectable_format:constrained_response", {}, "My answer is yes", False, False),
    # detectable_format:number_highlighted_sections
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*one* and *two*", True, True),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 1}, "**bold**", True, True),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 1}, "* * and ** **", False, False),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 1}, "*split\nline*", False, False),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*a* *b", False, False),
    # detectable_format:multiple_sections
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "SECTION", "num_sections": 2},
        "SECTION 1\nA\nSECTION 2\nB",
        True,
        True,
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "Section", "num_sections": 2},
        "Section1 a Section 2 b",
        True,
        True,
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "SECTION", "num_sections": 2},
        "Section 1\nA\nSection 2\nB",
        False,
        False,
    ),  # case matters
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "Day", "num_sections": 2},
        "Day one, Day two",
        False,
        False,
    ),
    # detectable_format:json_format
    ("detectable_format:json_format", {}, '{"a": [1, 2]}', True, True),
    ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', True, True),
    ("detectable_format:json_format", {}, "```JSON\n[1]\n```", True, True),
    ("detectable_format:json_format", {}, "  42  ", True, True),
    ("detectable_format:json_format", {}, 'Here it is:\n{"a": 1}', False, True),
    ("detectable_format:json_format", {}, '{"a": 1} and more', False, False),
    ("detectable_format:json_format", {}, "[" * 5000, False, False),  # the reference checker crashes here
    # detectable_format:title
    ("detectable_format:title", {}, "<<Ode to Joy>>\ntext", True, True),
    ("detectable_format:title", {}, "<< >> text", False, False),
    ("detectable_format:title", {}, "<<split\ntitle>>", False, False),
    ("detectable_format:title", {}, "<<<>>>", False, False),
    ("detectable_format:title", {}, "<<a>> and <<b", True, True),
    # combination:two_responses
    ("combination:two_responses", {}, "First.\n******\nSecond.", True, True),
    ("combination:two_responses", {}, "******\nFirst.\n******\nSecond.\n******", True, True),
    ("combination:two_responses", {}, "Same.\n******\nSame.", False, False),
    ("combination:two_responses", {}, "A\n******\n\n******\nB", False, False),
    ("combination:two_responses", {}, "A\n******\nB\n******\nC", False, True),
    ("combination:two_responses", {}, "A\n*******\nB", True, True),  # 7 stars: the 7th belongs to B
    # combination:repeat_prompt
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem."}, "  write a POEM. Roses...", True, True),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem."}, "Sure! Write a poem. Roses", False, False),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem."}, "Sure!\nWrite a poem.\nRoses", False, True),
    # startend:end_checker
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Done. any other QUESTIONS?", True, True),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, '"Done. Any other questions?"\n', True, True),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Any other questions?!", False, False),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Any other questions?\nBye", False, True),
    # startend:quotation
    ("startend:quotation", {}, '  "Wrapped."\n', True, True),
    ("startend:quotation", {}, '"', False, False),
    ("startend:quotation", {}, "“Curly.”", False, False),
    ("startend:quotation", {}, 'Sure:\n"Wrapped."', False, True),
    # keywords
    ("keywords:existence", {"keywords": ["cat", "dog"]}, "Concatenate the DOG.", True, True),
    ("keywords:existence", {"keywords": ["cat", "dog"]}, "Only a cat.", False, False),
    ("keywords:frequency", {"keyword": "war", "frequency": 3, "relation": AT_LEAST}, "War, warfare, AWARD", True, True),
    ("keywords:frequency", {"keyword": "war", "frequency": 3, "relation": LESS}, "War, warfare, AWARD", False, False),
    ("keywords:frequency", {"keyword": "aa", "frequency": 2, "relation": AT_LEAST}, "aaa", False, False),
    ("keywords:frequency", {"keyword": " war ", "frequency": 1, "relation": AT_LEAST}, "war", True, True),
    ("keywords:forbidden_words", {"forbidden_words": ["rock"]}, "A rocky road, bedrock.", True, True),
    ("keywords:forbidden_words", {"forbidden_words": ["rock"]}, "Rock-solid.", False, False),
    ("keywords:forbidden_words", {"forbidden_words": ["rock"]}, "Rock on!\nrocky", False, True),
    (
        "keywords:letter_frequency",
        {"letter": "q", "let_frequency": 2, "let_relation": AT_LEAST},
        "Quick quiz",
        True,
        True,
    ),
    (
        "keywords:letter_frequency",
        {"letter": "Q", "let_frequency": 2, "let_relation": LESS},
        "Quick quiz",
        False,
        False,
    ),
    ("keywords:letter_frequency", {"letter": "!", "let_frequency": 3, "let_relation": AT_LEAST}, "Hey!!!", True, True),
    # change_case
    ("change_case:english_capital", {}, "THIS IS MY ANSWER IN CAPITAL LETTERS ONLY.", True, True),
    ("change_case:english_capital", {}, "THIS IS MY ANSWER IN CAPITAL LETTERS only.", False, False),
    ("change_case:english_capital", {}, "1234 !!!", False, False),  # no cased letter: not isupper()
    ("change_case:english_lowercase", {}, "this is my answer in lower case letters only.", True, True),
    ("change_case:english_lowercase", {}, "Sure!\nthis is my answer in lower case letters only.", False, True),
    ("change_case:english_lowercase", {}, "ceci est ma réponse en minuscules, écrite en français.", False, False),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 3, "capital_relation": AT_LEAST},
        "I DON'T know",
        True,
        True,
    ),  # I, DO, N'T
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": LESS},
        "NASA and U.S. law",
        False,
        False,
    ),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 1, "capital_relation": AT_LEAST},
        "Well-Known 123",
        False,
        False,
    ),
    # language
    (
        "language:response_language",
        {"language": "fr"},
        "Ceci est une réponse entièrement écrite en français.",
        True,
        True,
    ),
    ("language:response_language", {"language": "fr"}, "This answer is written in English.", False, False),
    ("language:response_language", {"language": "fr"}, "12345 !!!", True, True),  # nothing to detect: followed
    ("language:response_language", {"language": "hi"}, "यह उत्तर पूरी तरह से हिंदी में लिखा गया है।", True, True),
]


def test_every_constraint_type_is_registered_and_tested():
    data = [json.loads(line) for line in open_shared_ifeval()]
    ids = {i for row in data for i in row["instruction_id_list"]}
    assert len(ids) == 25 and ids == set(CONSTRAINTS)
    assert {case[0] for case in CASES} == ids


def open_shared_ifeval():
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / "shared" / "data" / "ifeval_input_data.jsonl").open()


@pytest.mark.parametrize("constraint_id, kwargs, response, strict, loose", CASES)
def test_constraint_verdicts(constraint_id, kwargs, response, strict, loose):
    assert ifeval_verdicts(response, [constraint_id], [kwargs], "strict") == [strict]
    assert ifeval_verdicts(response, [constraint_id], [kwargs], "loose") == [loose]


@pytest.mark.parametrize("constraint_id", sorted(CONSTRAINTS))
@pytest.mark.parametrize("blank", ["", "  \n\t ", "\n"])
def test_a_blank_response_follows_nothing(constraint_id, blank):
    kwargs = next(k for i, k, *_ in CASES if i == constraint_id)
    assert ifeval_verdicts(blank, [constraint_id], [kwargs], "strict") == [False]
    assert ifeval_verdicts(blank, [constraint_id], [kwargs], "loose") == [False]


def test_loose_variants_are_ifevals_eight():
    variants = loose_variants("Sure:\n*Hi*\nBye.\n")
    assert variants[0] == "Sure:\n*Hi*\nBye.\n" and "Hi\nBye." in variants and "*Hi*\nBye." in variants
    # the response without its last line: the last line of "...\n" is "", so this keeps "Bye."
    assert "Sure:\n*Hi*\nBye." in variants
    assert loose_variants("one line") == ["one line", ""]


# -- the linear scans find exactly what IFEval's regular expressions find ------------------------------------

_ALPHABET = st.text(alphabet="[]*<>-\n \tab", max_size=60)


@settings(max_examples=400, deadline=None)
@given(_ALPHABET)
def test_linear_scans_match_ifevals_regexes(text):
    assert count_placeholders(text) == len(re.findall(r"\[.*?\]", text))
    assert len(bullet_lines(text, star=True)) == len(re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE))
    assert len(bullet_lines(text, star=False)) == len(re.findall(r"^\s*-.*$", text, flags=re.MULTILINE))
    titles = re.findall(r"<<[^\n]+>>", text)
    assert title(text, {}) == any(t.lstrip("<").rstrip(">").strip() for t in titles)


def test_words_are_python_word_runs():
    assert count_words("Hello, world! It's 2 o'clock.") == 7
    assert count_words("") == 0


def test_sentences_and_capital_words_past_the_bound_fail_closed():
    many = "This is one sentence. " * 5000  # 110,000 characters
    assert len(many) > MAX_CHARS
    assert sentences_at_least(many, 50) is True  # the prefix read already has 50 sentences
    assert sentences_at_least(many, 100_000) is None  # cannot tell within the bound: unknown
    kwargs = {"num_sentences": 100_000, "relation": LESS}
    assert ifeval_verdicts(many, ["length_constraints:number_sentences"], [kwargs]) == [False]
    assert capital_words_at_least("WORD " * 30_000, 10) is True
    assert capital_words_at_least("word " * 30_000, 10) is None
    spam = "Mr. " * 3000  # abbreviations only: 3,000 candidate ends, no sentence end
    assert sentences_at_least(spam, 2) is None


# -- data layouts and errors ------------------------------------------------------------------------------------


def test_unknown_constraint_id_is_an_error_naming_it_before_anything_is_scored():
    reward = IFEval()
    with pytest.raises(ConstraintError, match=r"unknown IFEval constraint id 'punctuation:no_commas'.*no_comma"):
        reward(
            completions=["fine", "fine"],
            instruction_id_list=[["punctuation:no_comma"], ["punctuation:no_commas"]],
            kwargs=[[{}], [{}]],
        )


@pytest.mark.parametrize(
    "ids, kwargs, message",
    [
        (["keywords:frequency"], [{"keyword": "a", "relation": "at least"}], "needs the argument 'frequency'"),
        (["keywords:frequency"], [{"keyword": "a", "frequency": 2, "relation": "at most"}], "'relation' must be"),
        (["keywords:frequency"], [{"keyword": "a", "frequency": -1, "relation": "at least"}], "'frequency' must be"),
        (["punctuation:no_comma"], [{"num_words": 3}], "takes no argument 'num_words'"),
        (
            ["keywords:letter_frequency"],
            [{"letter": "ab", "let_frequency": 1, "let_relation": "at least"}],
            "one character",
        ),
        (["keywords:existence"], [{"keywords": "cat"}], "'keywords' must be a list"),
        (["punctuation:no_comma", "startend:quotation"], [{}], "must be parallel lists"),
        ("punctuation:no_comma", None, "cannot read the ground truth"),
    ],
)
def test_bad_arguments_are_errors_naming_them(ids, kwargs, message):
    with pytest.raises(ConstraintError, match=message):
        IFEval()(completions=["x"], instruction_id_list=[ids], kwargs=[kwargs])


def test_hugging_face_layout_with_none_values_and_none_dicts():
    # google/IFEval on the Hub: every kwargs dict has every key, most of them None; NeMo-style rows use None dicts.
    hub = {"num_highlights": None, "relation": None, "num_words": 2, "keywords": None}
    kwargs = [{**hub, "relation": "at least"}]
    assert ifeval_verdicts("two words", ["length_constraints:number_words"], kwargs) == [True]
    assert ifeval_verdicts("a, b", ["punctuation:no_comma"], [None]) == [False]
    assert ifeval_verdicts("a, b", ["punctuation:no_comma"], None) == [False]


@pytest.mark.parametrize(
    "ground_truth",
    [
        {"instruction_id": ["punctuation:no_comma", "detectable_format:title"], "kwargs": [None, {}]},
        '{"instruction_id": ["punctuation:no_comma", "detectable_format:title"], "kwargs": [null, {}]}',
        "[{'instruction_id': ['punctuation:no_comma', 'detectable_format:title'], 'kwargs': [None, {}]}]",
        ['{"instruction_id": ["punctuation:no_comma", "detectable_format:title"], "kwargs": [{}, {}]}'],
    ],
)
def test_tulu_ground_truth_layouts(ground_truth):
    reward = IFEval()
    assert reward(completions=["<<T>> no commas", "<<T>>, commas"], ground_truth=[ground_truth] * 2) == [1.0, 0.5]


def test_old_open_instruct_layout_is_a_clear_error():
    with pytest.raises(ConstraintError, match="func_name"):
        IFEval()(completions=["x"], ground_truth=['{"func_name": "validate_lowercase", "N": null}'])


def test_missing_columns_are_reported_before_training():
    from rewardsmith.data import check_columns

    problems = check_columns([{"prompt": "hi"}], ["ifeval"], raise_error=False)
    assert problems and problems[0].columns == ["instruction_id_list (or ground_truth)"]
    assert not check_columns([{"prompt": "hi", "ground_truth": "{}"}], ["ifeval"], raise_error=False)


# -- the reward -------------------------------------------------------------------------------------------------


def test_score_is_the_share_followed_or_all_or_nothing_with_metrics():
    ids = ["punctuation:no_comma", "detectable_format:title", "punctuation:no_comma"]
    kwargs = [{}, {}, {}]
    result = IFEval().check("<<T>>, with a comma", instruction_id_list=ids, kwargs=kwargs)
    assert result.score == pytest.approx(1 / 3)
    expected = {"punctuation:no_comma": 0.0, "detectable_format:title": 1.0, "punctuation:no_comma#2": 0.0}
    assert result.metrics == expected
    assert "not followed: punctuation:no_comma" in result.reason
    assert IFEval(all_or_nothing=True).check("<<T>>, comma", instruction_id_list=ids, kwargs=kwargs).score == 0.0
    assert IFEval(all_or_nothing=True).check("<<T>> ok", instruction_id_list=ids, kwargs=kwargs).score == 1.0


def test_no_constraints_is_not_applicable():
    assert IFEval()(completions=["x"], instruction_id_list=[[]], kwargs=[[]]) == [None]


def test_only_the_answer_after_the_reasoning_is_checked():
    completion = "<think>Let me think, with commas.</think>No commas in the answer."
    assert IFEval()(completions=[completion], instruction_id_list=[["punctuation:no_comma"]], kwargs=[[{}]]) == [1.0]
    whole = IFEval(think_tag=None)
    assert whole(completions=[completion], instruction_id_list=[["punctuation:no_comma"]], kwargs=[[{}]]) == [0.0]


def test_conversational_completions_and_the_registry():
    reward = get_reward("ifeval", mode="loose")
    completions = [[{"role": "assistant", "content": "Sure:\nall lower case english text here."}]]
    assert reward(completions=completions, instruction_id_list=[["change_case:english_lowercase"]], kwargs=[[{}]]) == [
        1.0
    ]
    with pytest.raises(Exception, match="mode must be"):
        get_reward("ifeval", mode="lenient")


def test_follow_rates_per_constraint_type_are_logged():
    logged = {}
    IFEval()(
        completions=["a, b", "a b"],
        instruction_id_list=[["punctuation:no_comma"]] * 2,
        kwargs=[[{}]] * 2,
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert logged["ifeval/punctuation:no_comma"] == 0.5


def test_the_reward_pickles():
    import pickle

    reward = pickle.loads(pickle.dumps(IFEval(mode="loose")))
    assert reward(completions=["x"], instruction_id_list=[["punctuation:no_comma"]], kwargs=[[{}]]) == [1.0]


# -- real prompts -----------------------------------------------------------------------------------------------


def test_property_on_real_prompts(shared_data):
    rows = [json.loads(line) for line in (shared_data / "ifeval_input_data.jsonl").open()]
    rng = random.Random(0)
    followed = {"strict": 0, "loose": 0}
    total = 0
    for row in rows:
        constraints = parse_constraints(row["instruction_id_list"], row["kwargs"])
        assert len(constraints) == len(row["instruction_id_list"])
        for _ in range(3):
            response = random_response(rng, row)
            strict = ifeval_verdicts(response, row["instruction_id_list"], row["kwargs"], "strict")
            loose = ifeval_verdicts(response, row["instruction_id_list"], row["kwargs"], "loose")
            assert all(lo or not st for st, lo in zip(strict, loose))  # loose forgives, never the reverse
            score = IFEval().check(response, instruction_id_list=row["instruction_id_list"], kwargs=row["kwargs"])
            assert score.score == pytest.approx(sum(strict) / len(strict))
            total += len(strict)
            followed["strict"] += sum(strict)
            followed["loose"] += sum(loose)
    # the generated responses sit on the edges: neither side is rare
    assert 0.2 < followed["strict"] / total < 0.6 and followed["loose"] > followed["strict"]


def test_the_prompts_own_repeat_and_end_phrase_are_followed(shared_data):
    rows = [json.loads(line) for line in (shared_data / "ifeval_input_data.jsonl").open()]
    for row in rows:
        for constraint_id, kwargs in zip(row["instruction_id_list"], row["kwargs"]):
            if constraint_id == "combination:repeat_prompt":
                response = kwargs["prompt_to_repeat"] + "\nHere is my answer."
            elif constraint_id == "startend:end_checker":
                response = "Here is my answer. " + kwargs["end_phrase"]
            else:
                continue
            assert ifeval_verdicts(response, [constraint_id], [kwargs]) == [True]


# -- linear time ------------------------------------------------------------------------------------------------


def _all_constraints() -> tuple[list[str], list[dict]]:
    ids, kwargs = [], []
    for constraint_id, args, *_ in CASES:
        if constraint_id not in ids:
            ids.append(constraint_id)
            kwargs.append(args)
    return ids, kwargs


HOSTILE = ["a", "\n", "*", "Mr. ", "A. ", "[", "<", "* x\n", "\n*", "***\n", "<think>", "a\n*b* [c] <<d>> - e\n\n"]


def _assert_linear(reward: IFEval, ids: list[str], kwargs: list[dict], unit: str) -> None:
    reward(completions=["warm up. Hello."], instruction_id_list=[ids], kwargs=[kwargs])
    assert_linear(
        lambda text: reward(completions=[text], instruction_id_list=[ids], kwargs=[kwargs]),
        lambda n: unit * (n // len(unit) + 1),
        f"repeat:{unit!r}",
    )


@pytest.mark.slow
@pytest.mark.parametrize("unit", HOSTILE)
def test_all_25_constraints_in_one_row_are_linear_on_hostile_text(unit):
    ids, kwargs = _all_constraints()
    _assert_linear(IFEval(mode="strict"), ids, kwargs, unit)


@pytest.mark.slow
@pytest.mark.parametrize("group", range(5))
@pytest.mark.parametrize("unit", HOSTILE)
def test_loose_rows_of_five_constraints_are_linear_on_hostile_text(unit, group):
    # Loose mode checks up to eight variants of the response; a row holds at most five constraints (Tulu 3's
    # IF_multi_constraints_upto5; IFEval's own rows hold at most three).
    ids, kwargs = _all_constraints()
    _assert_linear(IFEval(mode="loose"), ids[group::5], kwargs[group::5], unit)


# -- the converter and the example ------------------------------------------------------------------------------


def test_converter_reads_both_layouts_and_checks_every_row(shared_data):
    data = prepare_dataset(str(shared_data / "ifeval_input_data.jsonl"), converter="ifeval", conversational=False)
    assert len(data) == 541
    first = data[0]
    assert first["instruction_id_list"] == [
        "punctuation:no_comma",
        "detectable_format:number_highlighted_sections",
        "length_constraints:number_words",
    ]
    assert first["kwargs"][2] == {"num_words": 300, "relation": "at least"}
    scores = IFEval()(
        prompts=[first["prompt"]],
        completions=["*a* *b* *c* " + "word " * 300],
        instruction_id_list=[first["instruction_id_list"]],
        kwargs=[first["kwargs"]],
    )
    assert scores == [1.0]
    tulu = [
        {
            "messages": [{"role": "user", "content": "Write a title."}],
            "ground_truth": json.dumps([{"instruction_id": ["detectable_format:title"], "kwargs": [None]}]),
        }
    ]
    converted = prepare_dataset(tulu, converter="ifeval", prompt_key="messages", ground_truth_key="ground_truth")
    assert converted[0]["instruction_id_list"] == ["detectable_format:title"]
    assert converted[0]["prompt"][-1]["content"] == "Write a title."


def test_a_bad_row_stops_a_dry_run_naming_it(tmp_path, no_model_loading):
    rows = [
        {"prompt": "ok", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        {"prompt": "bad", "instruction_id_list": ["detectable_format:titel"], "kwargs": [{}]},
    ]
    data = tmp_path / "if.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    config = tmp_path / "c.yaml"
    config.write_text(
        f"model: {{name_or_path: 'builtin:tiny'}}\ndataset: {{source: '{data}', converter: ifeval}}\n"
        "rewards: [{name: ifeval}]\ntrainer: {max_steps: 1, per_device_train_batch_size: 2, num_generations: 2}\n"
    )
    result = CliRunner().invoke(app, ["train", str(config), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "detectable_format:titel" in result.output and "detectable_format:title" in result.output


def test_coverage_checks_every_rows_constraints_whatever_the_converter(tmp_path, no_model_loading):
    from rewardsmith.compose import coverage

    rows = [
        {"prompt": "ok", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        {"prompt": "bad", "instruction_id_list": ["keywords:frequency"], "kwargs": [{"keyword": "x"}]},
        {"prompt": "worse", "instruction_id_list": ["startend:quotaton"], "kwargs": [{}]},
    ]
    with pytest.raises(ConstraintError, match=r"(?s)2 row\(s\).*row 1: .*'frequency'.*row 2: .*startend:quotation"):
        coverage(rows, ["ifeval"])
    assert coverage(rows[:1], ["ifeval"]).scored_by == {"ifeval": 1}
    data = tmp_path / "if.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    config = tmp_path / "c.yaml"
    config.write_text(
        f"model: {{name_or_path: 'builtin:tiny'}}\ndataset: {{source: '{data}'}}\n"  # generic: columns pass through
        "rewards: [{name: ifeval}]\ntrainer: {max_steps: 1, per_device_train_batch_size: 2, num_generations: 2}\n"
    )
    result = CliRunner().invoke(app, ["train", str(config), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "startend:quotaton" in result.output and "row 2" in result.output


def test_invisible_characters_neither_fill_a_response_nor_add_words_nor_hide_forbidden_ones():
    r = get_reward("ifeval")
    four = ["punctuation:no_comma", "change_case:english_lowercase", "detectable_format:title", "startend:quotation"]
    blank = r.explain(
        completions=["\u200b", "\u3164\u2800"], instruction_id_list=[four[:2] + four[3:]] * 2, kwargs=[[{}, {}, {}]] * 2
    )
    assert [b.score for b in blank] == [0.0, 0.0]
    words = [["length_constraints:number_words"]] * 2
    at_least = [[{"relation": "at least", "num_words": 10}]] * 2
    padded = "H\u200be\u200bl\u200bl\u200bo w\u200bo\u200br\u200bl\u200bd"
    assert r(completions=["Hello world", padded], instruction_id_list=words, kwargs=at_least) == [0.0, 0.0]
    forbidden = [["keywords:forbidden_words"]] * 3
    kill = [[{"forbidden_words": ["kill"]}]] * 3
    texts = ["They kill time.", "They k\u200dill time.", "They k\u00adi\ufe0fl\U000e0041l time."]
    assert r(completions=texts, instruction_id_list=forbidden, kwargs=kill) == [0.0, 0.0, 0.0]
