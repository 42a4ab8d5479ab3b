"""prepare_dataset on the real GSM8K and MATH-500 files: every row checked against the raw data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.data import check_columns, prepare_dataset

SYSTEM = "Think step by step inside <think></think>, then answer inside <answer></answer>."


def _raw(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _system_count(prompt) -> int:
    """How many times the system prompt occurs in a prompt (messages or text)."""
    if isinstance(prompt, str):
        return prompt.count(SYSTEM)
    return sum(m["content"].count(SYSTEM) for m in prompt)


@pytest.mark.parametrize(("name", "rows"), [("gsm8k_test.jsonl", 1319), ("gsm8k_train.jsonl", 7473)])
def test_gsm8k_every_answer_is_the_final_number(shared_data, name, rows):
    raw = _raw(shared_data / name)
    ds = prepare_dataset(shared_data / name, converter="gsm8k", system_prompt=SYSTEM)
    assert len(raw) == len(ds) == rows
    expected = [r["answer"].rsplit("####", 1)[1].strip().replace(",", "") for r in raw]
    assert ds["answer"] == expected  # every row, in order
    assert all(re.fullmatch(r"-?\d+", a) for a in ds["answer"])
    assert any("," in r["answer"].rsplit("####", 1)[1] for r in raw)  # the data does use thousands separators
    assert ds["solution"] == [r["answer"] for r in raw]
    assert ds["question"] == [r["question"] for r in raw]
    prompts = ds["prompt"]
    assert all(p == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": r["question"]}]
               for p, r in zip(prompts, raw))  # fmt: skip
    assert all(_system_count(p) == 1 for p in prompts)

    # the extracted answers are what gsm8k_accuracy compares: "#### N" as GSM8K writes it scores 1, N+1 scores 0
    accuracy = get_reward("gsm8k_accuracy")
    written = [f"#### {r['answer'].rsplit('####', 1)[1].strip()}" for r in raw]
    assert accuracy(prompts=prompts, completions=written, answer=ds["answer"]) == [1.0] * rows
    off_by_one = [f"#### {int(a) + 1}" for a in ds["answer"]]
    assert accuracy(prompts=prompts, completions=off_by_one, answer=ds["answer"]) == [0.0] * rows


def test_math500_answers_from_the_answer_column(shared_data):
    raw = _raw(shared_data / "math500_test.jsonl")
    ds = prepare_dataset(shared_data / "math500_test.jsonl", split="test", converter="math", system_prompt=SYSTEM)
    assert len(ds) == len(raw) == 500
    assert ds["answer"] == [r["answer"] for r in raw]
    assert ds["unique_id"] == [r["unique_id"] for r in raw]  # order kept, other columns passed through
    assert ds["level"] == [r["level"] for r in raw]
    assert all(p[1]["content"] == r["problem"] and _system_count(p) == 1 for p, r in zip(ds["prompt"], raw))


def test_math500_answers_from_the_last_boxed_when_there_is_no_answer_column(shared_data):
    raw = _raw(shared_data / "math500_test.jsonl")
    without = [{k: v for k, v in r.items() if k != "answer"} for r in raw]
    ds = prepare_dataset(without, converter="math")
    assert ds["answer"] == [r["answer"] for r in raw]  # 500/500, nested braces included
    assert sum("{" in r["answer"] for r in raw) > 100
    # an empty answer cell falls back to the solution's \boxed{} too
    blank = [{**r, "answer": ""} for r in raw[:50]]
    assert prepare_dataset(blank, converter="math")["answer"] == [r["answer"] for r in raw[:50]]


def test_templates_python_format_and_jinja(shared_data):
    raw = _raw(shared_data / "math500_test.jsonl")
    fmt = prepare_dataset(
        shared_data / "math500_test.jsonl",
        converter="math",
        system_prompt=SYSTEM,
        format_template="{prompt}\n\n({subject}, level {level})",
    )
    jinja = prepare_dataset(
        shared_data / "math500_test.jsonl",
        converter="math",
        system_prompt=SYSTEM,
        format_template="{{ problem }}\n\n({{ subject }}, level {{ level }}){% if level >= 5 %} Hard!{% endif %}",
    )
    for f, j, r in zip(fmt["prompt"], jinja["prompt"], raw):
        expected = f"{r['problem']}\n\n({r['subject']}, level {r['level']})"
        assert f == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": expected}]
        assert j[1]["content"] == expected + (" Hard!" if r["level"] >= 5 else "")
        assert _system_count(f) == _system_count(j) == 1
    assert sum(p[1]["content"].endswith("Hard!") for p in jinja["prompt"]) == sum(r["level"] >= 5 for r in raw) > 0


def test_plain_text_prompts_have_the_system_prompt_once(shared_data):
    raw = _raw(shared_data / "gsm8k_test.jsonl")
    ds = prepare_dataset(
        shared_data / "gsm8k_test.jsonl",
        converter="gsm8k",
        system_prompt=SYSTEM,
        conversational=False,
        format_template="Question: {question}\nAnswer:",
    )
    assert ds["prompt"] == [f"{SYSTEM}\n\nQuestion: {r['question']}\nAnswer:" for r in raw]
    assert all(_system_count(p) == 1 for p in ds["prompt"])


def test_max_samples_shuffle_and_seed(shared_data):
    path = shared_data / "gsm8k_test.jsonl"
    raw = _raw(path)
    first = prepare_dataset(path, converter="gsm8k", max_samples=25)
    assert first["question"] == [r["question"] for r in raw[:25]]
    a = prepare_dataset(path, converter="gsm8k", max_samples=25, shuffle=True, seed=1)
    b = prepare_dataset(path, converter="gsm8k", max_samples=25, shuffle=True, seed=1)
    c = prepare_dataset(path, converter="gsm8k", max_samples=25, shuffle=True, seed=2)
    assert a["question"] == b["question"] != c["question"]
    assert a["question"] != first["question"]
    by_question = {r["question"]: r for r in raw}
    assert all(by_question[q]["answer"] == s for q, s in zip(a["question"], a["solution"]))  # rows stay whole
    assert len(prepare_dataset(path, converter="gsm8k", max_samples=10_000)) == len(raw)


def test_streaming_gives_the_same_rows(shared_data):
    from datasets import IterableDataset

    path = shared_data / "gsm8k_test.jsonl"
    eager = prepare_dataset(path, converter="gsm8k", system_prompt=SYSTEM, max_samples=40)
    lazy = prepare_dataset(path, converter="gsm8k", system_prompt=SYSTEM, max_samples=40, streaming=True)
    assert isinstance(lazy, IterableDataset)
    assert list(lazy) == eager.to_list()


def test_split_slices_and_named_splits_of_a_local_file(shared_data):
    path = shared_data / "gsm8k_test.jsonl"
    raw = _raw(path)
    ds = prepare_dataset(path, split="test[10:20]", converter="gsm8k")
    assert ds["question"] == [r["question"] for r in raw[10:20]]


def test_other_file_types_and_saved_folders(shared_data, tmp_path):
    from datasets import Dataset, DatasetDict

    raw = _raw(shared_data / "math500_test.jsonl")[:30]
    source = Dataset.from_list(raw)
    source.to_parquet(tmp_path / "m.parquet")
    source.to_csv(tmp_path / "m.csv", index=False)
    (tmp_path / "m.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    source.save_to_disk(tmp_path / "saved")
    DatasetDict({"train": source, "test": source.select(range(5))}).save_to_disk(tmp_path / "saved_dict")
    expected = [r["answer"] for r in raw]
    for path, split, n in [
        (tmp_path / "m.parquet", "train", 30),
        (tmp_path / "m.csv", "train", 30),
        (tmp_path / "m.json", "train", 30),
        (tmp_path / "saved", "train", 30),
        (tmp_path / "saved_dict", "test", 5),
        (str(tmp_path / "saved_dict"), "train", 30),
    ]:
        ds = prepare_dataset(path, split=split, converter="math")
        assert ds["answer"] == expected[:n], path
        assert [p[0]["content"] for p in ds["prompt"]] == [r["problem"] for r in raw[:n]], path
    # an in-memory DatasetDict works the same way
    assert len(prepare_dataset(DatasetDict({"test": source}), split="test", converter="math")) == 30


def test_prepared_data_has_what_the_builtin_rewards_read(shared_data):
    ds = prepare_dataset(shared_data / "gsm8k_test.jsonl", converter="gsm8k", max_samples=5)
    assert check_columns(ds, "think_format, tag_count, gsm8k_accuracy") == []
    questions_only = prepare_dataset(shared_data / "gsm8k_test.jsonl", prompt_key="question", max_samples=5)
    questions_only = questions_only.remove_columns("answer")
    assert check_columns(questions_only, "think_format, gsm8k_accuracy", raise_error=False) == [
        ("gsm8k_accuracy", ["answer"])
    ]
