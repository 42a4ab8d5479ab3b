"""Converters, the converter registry, prompt building and templates."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from rewardsmith import DatasetError
from rewardsmith.data import (
    Converter,
    PromptTemplate,
    build_prompt,
    get_converter,
    list_converters,
    prepare_dataset,
    register_converter,
    unregister_converter,
)
from rewardsmith.train.compat import prepare_dataset_for_trl

CHECK = "def check(candidate):\n    assert candidate(1) == 2\n"
CONVERSATION = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
    {"role": "assistant", "content": "Rome."},
]


def test_each_builtin_declares_the_columns_it_writes():
    rows = {
        "gsm8k": {"question": "1+1?", "answer": "1 + 1 = 2\n#### 2"},
        "math": {"problem": "1+1?", "solution": "\\boxed{2}"},
        "countdown": {"nums": [1, 1], "target": 2},
        "generic": {"prompt": "1+1?"},
        "chat": {"messages": CONVERSATION[1:3]},
        "fireworks": {"messages": CONVERSATION[1:2], "ground_truth": "Paris"},
        "mbpp": {"text": "Add.", "test_list": ["assert add(1, 2) == 3"], "code": "def add(a, b):\n    return a + b"},
        "humaneval": {"prompt": "def inc(x):\n    pass\n", "test": CHECK, "entry_point": "inc"},
        "apps": {"question": "Sum.", "input_output": '{"inputs": ["1 2"], "outputs": ["3"]}'},
        "codecontests": {"description": "Sum.", "public_tests": {"input": ["1 2"], "output": ["3"]}},
        "ifeval": {"prompt": "No commas.", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
    }
    assert set(list_converters()) == set(rows)
    for name, row in rows.items():
        converter = get_converter(name)
        assert "prompt" in converter.output_columns
        ds = prepare_dataset([row], converter=name)
        assert set(converter.output_columns) <= set(ds.column_names), name
        assert not set(converter.removed_columns) & set(ds.column_names), name


def test_countdown_keeps_integer_columns_and_writes_the_prompt():
    ds = prepare_dataset(
        [{"nums": [19, 36, 55, 7], "target": 65}, {"nums": [3, 4], "target": 12}],
        converter="countdown",
        system_prompt="Show your work in <think></think>.",
    )
    assert ds["nums"] == [[19, 36, 55, 7], [3, 4]] and ds["target"] == [65, 12]
    as_text = prepare_dataset([{"nums": ["3", "4"], "target": "12"}], converter="countdown")  # e.g. from a CSV
    assert as_text["nums"] == [[3, 4]] and as_text["target"] == [12]
    assert ds.features["nums"].feature.dtype == "int64" and ds.features["target"].dtype == "int64"
    user = ds[0]["prompt"][1]["content"]
    assert user.startswith("Using the numbers [19, 36, 55, 7], create an equation that equals 65.")
    custom = prepare_dataset(
        [{"numbers": [1, 2, 3], "goal": 6}], converter="countdown", nums_key="numbers", target_key="goal",
        format_template="Make {target} from {nums}.", conversational=False,
    )  # fmt: skip
    assert custom[0] == {"prompt": "Make 6 from [1, 2, 3].", "nums": [1, 2, 3], "target": 6}


def test_generic_maps_columns_for_the_rewards():
    rows = [
        {"instruction": "Add.", "input": "2 3", "output": "5", "label": "5", "task": "math"},
        {"instruction": "Say hi.", "input": "", "output": "hi", "label": "hi", "task": "chat"},
    ]
    ds = prepare_dataset(
        rows, prompt_key="instruction", query_key="input", answer_key="output", ground_truth_key="label",
        conversational=False,
    )  # fmt: skip
    assert ds["prompt"] == ["Add.\n\n2 3", "Say hi."]
    assert ds["answer"] == ["5", "hi"] and ds["ground_truth"] == ["5", "hi"]
    assert ds["task"] == ["math", "chat"]  # extra columns pass through
    assert "output" not in ds.column_names and "label" not in ds.column_names  # renamed, not copied
    assert ds["instruction"] == ["Add.", "Say hi."]  # the prompt's source column stays


def test_generic_takes_prompts_that_are_already_messages():
    rows = [{"prompt": [{"role": "user", "content": "Hi"}], "answer": "x"}]
    ds = prepare_dataset(rows, system_prompt="Be kind.")
    assert ds[0]["prompt"] == [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}]
    assert prepare_dataset(rows, conversational=False)[0]["prompt"] == "Hi"


def test_chat_splits_the_last_assistant_turn_off_as_the_completion():
    ds = prepare_dataset([{"messages": CONVERSATION, "id": 7}], converter="chat")
    assert ds[0]["prompt"] == CONVERSATION[:-1]
    assert ds[0]["completion"] == [{"role": "assistant", "content": "Rome."}]
    assert ds[0]["id"] == 7 and "messages" not in ds.column_names


def test_chat_system_prompt_replaces_the_existing_one_never_doubles_it():
    ds = prepare_dataset([{"messages": CONVERSATION}], converter="chat", system_prompt="Answer in French.")
    roles = [m["role"] for m in ds[0]["prompt"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert ds[0]["prompt"][0]["content"] == "Answer in French."


def test_chat_template_fills_the_last_user_message_and_plain_text_output():
    rows = [{"messages": CONVERSATION[1:3], "lang": "English"}, {"messages": [CONVERSATION[1]], "lang": "German"}]
    ds = prepare_dataset(rows, converter="chat", format_template="{prompt} Reply in {lang}.", conversational=False)
    assert ds["prompt"] == ["Capital of France? Reply in English.", "Capital of France? Reply in German."]
    assert ds["completion"] == ["Paris.", None]  # no assistant turn: all prompt, no reference
    renamed = prepare_dataset(rows[:1], converter="chat", completion_column="reference")
    assert renamed[0]["reference"] == [{"role": "assistant", "content": "Paris."}]


def test_chat_multi_turn_cannot_be_plain_text():
    with pytest.raises(
        DatasetError, match=r"row 0: a plain-text prompt cannot hold this conversation .*conversational=True"
    ):
        prepare_dataset([{"messages": CONVERSATION}], converter="chat", conversational=False)
    with pytest.raises(DatasetError, match="not a list of chat messages"):
        prepare_dataset([{"messages": "hello"}], converter="chat")
    with pytest.raises(DatasetError, match="a single assistant turn: there is no prompt"):
        prepare_dataset([{"messages": [CONVERSATION[2]]}], converter="chat")


def test_task_column_and_alias_for_existing_scripts():
    ds = prepare_dataset([{"q": "1+1?"}], prompt_key="q", task="arithmetic", format_template="{prompt} ({task})")
    assert ds[0]["task"] == "arithmetic" and ds[0]["prompt"][0]["content"] == "1+1? (arithmetic)"
    renamed = prepare_dataset([{"q": "1+1?", "sol": "#### 2"}], converter="gsm8k", question_key="q", answer_key="sol")
    assert renamed.column_names == ["q", "prompt", "answer", "solution"]  # 'sol' moved to 'solution'
    alias = prepare_dataset_for_trl(
        [{"problem": "1+1?", "solution": "2", "x": 1}, {"problem": "2+2?", "solution": "4", "x": 2}],
        split="train", prompt_key="problem", response_key="solution", system_prompt="Think.",
        format_template="Solve: {prompt}", max_samples=1,
    )  # fmt: skip
    assert alias.to_list() == [
        {
            "problem": "1+1?",
            "solution": "2",
            "x": 1,
            "prompt": [{"role": "system", "content": "Think."}, {"role": "user", "content": "Solve: 1+1?"}],
        }
    ]


def test_register_a_converter_class_with_settings():
    @dataclass
    class Reverse(Converter):
        """Reverse a word."""

        word_key: str = "word"

        @property
        def input_columns(self):
            return (self.word_key,)

        @property
        def output_columns(self):
            return ("prompt", "answer")

        def convert(self, row):
            return {"prompt": f"Reverse {row[self.word_key]}", "answer": row[self.word_key][::-1]}

    register_converter("reverse_test", Reverse)
    try:
        assert list_converters()["reverse_test"] == "Reverse a word."
        ds = prepare_dataset([{"w": "abc"}], converter="reverse_test", word_key="w", conversational=False)
        assert ds[0] == {"w": "abc", "prompt": "Reverse abc", "answer": "cba"}
        register_converter("reverse_test", Reverse)  # the same converter again: nothing changes
        with pytest.raises(DatasetError, match="already registered"):
            register_converter("reverse_test", lambda row: {"prompt": row["w"]})
        register_converter("reverse_test", Reverse, replace=True)
        with pytest.raises(DatasetError, match=r"needs the column\(s\) 'word'"):
            prepare_dataset([{"w": "abc"}], converter="reverse_test")
    finally:
        unregister_converter("reverse_test")
    assert "reverse_test" not in list_converters()


def test_function_converters_declared_outputs_are_checked():
    @register_converter("lazy_test", outputs=("prompt", "answer"))
    def lazy(row):
        return {"prompt": row["q"]}

    try:
        with pytest.raises(DatasetError, match=r"declares the column\(s\) 'answer' but did not write them"):
            prepare_dataset([{"q": "x"}], converter="lazy_test")
    finally:
        unregister_converter("lazy_test")
    with pytest.raises(DatasetError, match="must return a dict"):
        prepare_dataset([{"q": "x"}], converter=lambda row: row["q"])
    # a function passed directly, with settings bound
    ds = prepare_dataset([{"q": "x"}], converter=lambda row, suffix="": {"prompt": row["q"] + suffix}, suffix="!")
    assert ds[0]["prompt"] == [{"role": "user", "content": "x!"}]
    with pytest.raises(DatasetError, match="does not take these settings"):
        prepare_dataset([{"q": "x"}], converter=lambda row: {"prompt": row["q"]}, suffix="!")
    with pytest.raises(Exception, match="cannot register a converter as 'a/b'"):
        register_converter("a/b", lazy)


def test_template_kind_detection_and_literal_braces():
    assert PromptTemplate("{question}").kind == "format"
    assert PromptTemplate("{{ question }}").kind == "jinja"
    assert PromptTemplate("{% if x %}y{% endif %}").kind == "jinja"
    literal = PromptTemplate("{question} Put the answer in \\boxed{{}}.")
    assert literal.kind == "format" and literal.fields == {"question"}
    assert literal.render({"question": "1+1?"}) == "1+1? Put the answer in \\boxed{}."
    forced = PromptTemplate("{{ question }}", template_format="format")
    assert forced.render({}) == "{ question }"
    assert PromptTemplate("{nums[0]} and {row.x:>{width}}").fields == {"nums", "row", "width"}


def test_templates_survive_pickling_for_datasets_caching():
    import pickle

    t = PromptTemplate("{{ a }}-{{ b }}")
    assert t.render({"a": 1, "b": 2}) == "1-2"  # compiles and caches the Jinja template
    again = pickle.loads(pickle.dumps(t))
    assert again.render({"a": 3, "b": 4}) == "3-4"


def test_build_prompt_shapes():
    assert build_prompt("hi") == [{"role": "user", "content": "hi"}]
    assert build_prompt("hi", conversational=False) == "hi"
    assert build_prompt("hi", "", conversational=False) == "hi"  # an empty system prompt adds nothing
    assert build_prompt([{"role": "system", "content": "old"}, {"role": "user", "content": "hi"}], "new") == [
        {"role": "system", "content": "new"},
        {"role": "user", "content": "hi"},
    ]


@pytest.mark.parametrize("conversational", [True, False])
def test_chat_reference_after_a_thousand_rows_without_one(conversational):
    # datasets fixes a column's type from its first batch of 1000 rows; all None there must not break later rows
    rows = [{"messages": [CONVERSATION[1]]}] * 1000 + [{"messages": CONVERSATION[1:3]}]
    ds = prepare_dataset(rows, converter="chat", conversational=conversational)
    assert ds["completion"][:1000] == [None] * 1000
    assert ds[1000]["completion"] == ([CONVERSATION[2]] if conversational else "Paris.")
