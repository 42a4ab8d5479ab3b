"""Bad input to the datasets layer: each error names the problem and what to do."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from rewardsmith import DatasetError, MissingColumnError, RewardConfigError, RewardsmithError, UnknownConverterError
from rewardsmith.data import check_columns, prepare_dataset

GSM8K_ROW = {"question": "2 + 3?", "answer": "2 + 3 = 5\n#### 5"}


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_errors_are_rewardsmith_config_errors():
    assert issubclass(DatasetError, RewardConfigError) and issubclass(DatasetError, RewardsmithError)
    assert issubclass(UnknownConverterError, DatasetError) and issubclass(UnknownConverterError, LookupError)


# -- missing columns -------------------------------------------------------------------------------


def test_converter_missing_columns_names_them_lists_present_ones_and_suggests_a_converter(shared_data):
    with pytest.raises(DatasetError) as info:
        prepare_dataset(shared_data / "math500_test.jsonl", converter="gsm8k")
    message = str(info.value)
    assert "'question'" in message
    assert "Columns present: problem, solution, answer, subject, level, unique_id" in message
    assert "'math'" in message  # the converter that fits these columns


def test_generic_missing_prompt_column_suggests_prompt_key():
    with pytest.raises(DatasetError, match=r"needs the column\(s\) 'prompt'.*Columns present: question, answer.*"
                       r"'gsm8k'.*prompt_key="):  # fmt: skip
        prepare_dataset([GSM8K_ROW])


def test_math_needs_an_answer_or_a_solution_column():
    with pytest.raises(DatasetError, match="'answer' or 'solution'"):
        prepare_dataset([{"problem": "1+1?"}], converter="math")


def test_check_columns_reports_every_reward_at_once():
    from rewardsmith import reward

    @reward
    def uses_target(completion: str, nums: list, target: int) -> float:
        return 0.0

    @reward
    def optional_hint(completion: str, hint: str = "") -> float:
        return 0.0

    rows = [{"prompt": "p", "answers": "4", "num": [1]}]
    with pytest.raises(MissingColumnError) as info:
        check_columns(rows, [uses_target, "gsm8k_accuracy", optional_hint, "think_format"])
    message = str(info.value)
    assert message.startswith("2 rewards need columns the dataset does not have:")
    assert "uses_target needs 'nums', 'target'. Did you mean: num?" in message
    assert "gsm8k_accuracy needs 'answer'. Did you mean: answers?" in message
    assert "optional_hint" not in message and "think_format" not in message
    assert "The dataset has: prompt, answers, num." in message
    problems = check_columns(rows, [uses_target, "gsm8k_accuracy", optional_hint], raise_error=False)
    assert problems == [("uses_target", ["nums", "target"]), ("gsm8k_accuracy", ["answer"])]


def test_check_columns_takes_trl_functions_and_configured_rewards():
    def trl_style(completions, **kwargs):
        return [0.0] * len(completions)

    rows = [{"prompt": "p", "reference": "4"}]
    assert check_columns(rows, [trl_style]) == []  # a batch function declares no columns
    assert check_columns(rows, "gsm8k_accuracy", raise_error=False) == [("gsm8k_accuracy", ["answer"])]
    from rewardsmith import get_reward

    assert check_columns(rows, get_reward("gsm8k_accuracy", answer_column="reference")) == []


def test_check_columns_on_a_dataset_dict_asks_for_a_split():
    from datasets import Dataset, DatasetDict

    splits = DatasetDict({"train": Dataset.from_list([{"prompt": "p"}])})
    with pytest.raises(DatasetError, match="several splits"):
        check_columns(splits, "think_format")
    assert check_columns(splits["train"], "think_format") == []


# -- empty data ------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_jsonl_file(tmp_path, content):
    path = tmp_path / "rows.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError, match="is empty: it holds no rows"):
        prepare_dataset(path, converter="gsm8k")


def test_empty_list_csv_and_parquet(tmp_path):
    from datasets import Dataset

    with pytest.raises(DatasetError, match="the dataset is empty"):
        prepare_dataset([], converter="gsm8k")
    (tmp_path / "h.csv").write_text("question,answer\n")
    with pytest.raises(DatasetError, match=r"the dataset is empty: '.*h.csv', split 'train' has no rows"):
        prepare_dataset(tmp_path / "h.csv", converter="gsm8k")
    Dataset.from_dict({"question": [], "answer": []}).to_parquet(tmp_path / "e.parquet")
    with pytest.raises(DatasetError, match=r"the dataset is empty: '.*e.parquet', split 'train' has no rows"):
        prepare_dataset(tmp_path / "e.parquet", converter="gsm8k")


def test_max_samples_must_be_positive():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(DatasetError, match="max_samples"):
            prepare_dataset([GSM8K_ROW], converter="gsm8k", max_samples=bad)


# -- splits ----------------------------------------------------------------------------------------


def test_missing_split_of_a_saved_dataset_dict_lists_the_splits(tmp_path):
    from datasets import Dataset, DatasetDict

    part = Dataset.from_list([GSM8K_ROW])
    DatasetDict({"train": part, "test": part}).save_to_disk(tmp_path / "saved")
    with pytest.raises(DatasetError, match=r"split 'validation' does not exist .* Available splits: 'train', 'test'"):
        prepare_dataset(tmp_path / "saved", split="validation", converter="gsm8k")


def test_missing_split_of_a_folder_of_files_lists_the_splits(tmp_path):
    folder = tmp_path / "gsm"
    folder.mkdir()
    _write_jsonl(folder / "train.jsonl", [GSM8K_ROW])
    _write_jsonl(folder / "test.jsonl", [GSM8K_ROW])
    assert len(prepare_dataset(folder, split="test", converter="gsm8k")) == 1
    with pytest.raises(
        DatasetError, match=r"split 'dev' does not exist .*Available splits: '(train|test)', '(train|test)'"
    ):
        prepare_dataset(folder, split="dev", converter="gsm8k")
    with pytest.raises(DatasetError, match=r"split 'dev' does not exist"):
        prepare_dataset(folder, split="dev", converter="gsm8k", streaming=True)


def test_split_slices_are_refused_where_they_cannot_work(tmp_path):
    path = _write_jsonl(tmp_path / "rows.jsonl", [GSM8K_ROW])
    with pytest.raises(DatasetError, match="do not work with streaming=True; pass split='train' and max_samples="):
        prepare_dataset(path, split="train[:1]", converter="gsm8k", streaming=True)
    with pytest.raises(DatasetError, match="is not a split name"):
        prepare_dataset(path, split="[:1]", converter="gsm8k")


# -- files and the Hub -----------------------------------------------------------------------------


def test_malformed_jsonl_line_is_reported_with_its_number(tmp_path):
    path = tmp_path / "rows.jsonl"
    good = json.dumps(GSM8K_ROW)
    path.write_text(f"{good}\n\n{good}\n{good[:-1]}\n{good}\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        prepare_dataset(path, converter="gsm8k")
    message = str(info.value)
    assert "is not valid JSON Lines: line 4:" in message
    assert str(path) in message


def test_jsonl_line_that_is_not_an_object(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(GSM8K_ROW) + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 2: each line must be a JSON object, not list"):
        prepare_dataset(path, converter="gsm8k")


def test_malformed_json_document_is_reported_with_line_and_column(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text('[\n  {"question": "2+3?", "answer": "#### 5"},\n  {"question": "1+1?" "answer": "#### 2"}\n]\n')
    with pytest.raises(DatasetError, match=r"is not valid JSON: line 3, column 23: Expecting ',' delimiter"):
        prepare_dataset(path, converter="gsm8k")


def test_malformed_csv_keeps_the_reader_s_reason(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text('question,answer\n"2+3?","#### 5"\n"1+1?","#### 2",extra\n')
    with pytest.raises(DatasetError, match=r"could not read '.*rows.csv': ParserError: .*Expected 2 fields in line 3"):
        prepare_dataset(path, converter="gsm8k")


def test_unsupported_file_type_and_missing_path(tmp_path):
    (tmp_path / "rows.txt").write_text("hello\n")
    with pytest.raises(DatasetError, match=r"unsupported file type '.txt'. Supported: .jsonl, .json, .parquet, .csv"):
        prepare_dataset(tmp_path / "rows.txt")
    with pytest.raises(DatasetError, match=r"no such file or folder: .*missing.jsonl"):
        prepare_dataset(tmp_path / "missing.jsonl")
    with pytest.raises(DatasetError, match=r"no such file or folder: .*data/missing.*resolved from"):
        prepare_dataset(Path("data/missing"))  # a Path is always local, even when it looks like a Hub name
    with pytest.raises(DatasetError, match="config='main' applies to Hub datasets"):
        prepare_dataset(_write_jsonl(tmp_path / "r.jsonl", [GSM8K_ROW]), config="main", converter="gsm8k")


def test_offline_hub_suggests_a_local_path(monkeypatch):
    import datasets.config

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)  # fail at once instead of retrying the network
    lookups = []  # every host name looked up (the real lookup still runs): none, so no retries to wait for
    lookup = socket.getaddrinfo
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda host, *args, **kw: lookups.append(host) or lookup(host, *args, **kw)
    )
    with pytest.raises(DatasetError) as info:
        prepare_dataset("openai/gsm8k", config="main", converter="gsm8k")
    message = str(info.value)
    assert "could not load 'openai/gsm8k' from the Hugging Face Hub" in message
    assert "pass its path instead: a .jsonl, .json, .parquet or .csv file" in message
    assert isinstance(info.value.__cause__, ConnectionError)
    assert lookups == []  # online, the same call looks up huggingface.co and retries for ~30 s


def test_rows_that_are_not_dicts():
    with pytest.raises(DatasetError, match="row 1 of the list is str, not a dict"):
        prepare_dataset([GSM8K_ROW, "oops"], converter="gsm8k")
    with pytest.raises(DatasetError, match="cannot load a dataset from int"):
        prepare_dataset(42)


# -- templates -------------------------------------------------------------------------------------


def test_template_naming_an_absent_column():
    with pytest.raises(DatasetError) as info:
        prepare_dataset([GSM8K_ROW], converter="gsm8k", format_template="{question} ({difficulty})")
    message = str(info.value)
    assert "names 'difficulty', which the data does not have" in message
    assert "Variables available: answer, prompt, question, solution" in message


def test_jinja_template_naming_an_absent_column_with_suggestion():
    with pytest.raises(DatasetError, match=r"names 'questoin'.* Did you mean: question\?.*read as a Jinja template"):
        prepare_dataset([GSM8K_ROW], converter="gsm8k", format_template="Q: {{ questoin }}")


def test_malformed_templates():
    with pytest.raises(DatasetError, match="not a valid Python format string"):
        prepare_dataset([GSM8K_ROW], converter="gsm8k", format_template="Answer in \\boxed{")
    with pytest.raises(DatasetError, match=r"positional field '\{\}'.*literal brace"):
        prepare_dataset([GSM8K_ROW], converter="gsm8k", format_template="{question} Put it in \\boxed{}")
    with pytest.raises(DatasetError, match="not a valid Jinja template"):
        prepare_dataset([GSM8K_ROW], converter="gsm8k", format_template="{{ question }{% if %}")
    with pytest.raises(DatasetError, match="template_format must be"):
        prepare_dataset([GSM8K_ROW], converter="gsm8k", format_template="{question}", template_format="mustache")


def test_template_errors_on_a_later_row_name_the_row():
    rows = [{"prompt": "a", "nums": [1, 2]}, {"prompt": "b", "nums": [1]}]
    with pytest.raises(DatasetError, match=r"row 1: the format_template could not be filled in: IndexError"):
        prepare_dataset(rows, format_template="{prompt} {nums[1]}")


def test_jinja_templates_are_sandboxed():
    with pytest.raises(DatasetError, match="could not be filled in"):
        prepare_dataset([{"prompt": "p"}], format_template="{{ prompt.__class__.__mro__[1].__subclasses__() }}")


# -- rows a converter cannot convert ---------------------------------------------------------------


def test_row_errors_name_the_row_and_show_it():
    rows = [GSM8K_ROW, GSM8K_ROW, {"question": "7 * 6?", "answer": "It is 42."}]
    with pytest.raises(
        DatasetError, match=r"row 2: the solution has no '#### N' final answer.*\(row: \{'question': '7 \* 6\?'"
    ):
        prepare_dataset(rows, converter="gsm8k")
    with pytest.raises(
        DatasetError, match="row 0: no answer: the 'answer' column is empty and the 'solution' column has no"
    ):
        prepare_dataset([{"problem": "p", "solution": "no box", "answer": ""}], converter="math")
    with pytest.raises(DatasetError, match=r"row 1: a number in 'nums' is '7\.5', not an integer"):
        prepare_dataset([{"nums": ["1"], "target": 1}, {"nums": ["1", "7.5"], "target": 3}], converter="countdown")
    with pytest.raises(DatasetError, match="row 0: the 'target' value is None, not an integer"):
        prepare_dataset([{"nums": [1], "target": None}], converter="countdown")
    with pytest.raises(
        DatasetError, match=r"^a list of 1 row, row 0: the question column 'question' holds None, not a non-empty text"
    ):
        prepare_dataset([{"question": None, "answer": "#### 1"}], converter="gsm8k")


# -- converters by name ----------------------------------------------------------------------------


def test_unknown_converter_lists_close_matches():
    with pytest.raises(UnknownConverterError, match=r"unknown converter 'gsm8'. Did you mean: gsm8k\? Registered"):
        prepare_dataset([GSM8K_ROW], converter="gsm8")
    with pytest.raises(UnknownConverterError, match=r"Did you mean: countdown\?"):
        prepare_dataset([GSM8K_ROW], converter="count_down")


def test_unknown_converter_setting_lists_the_settings():
    with pytest.raises(DatasetError, match=r"converter 'gsm8k' has no setting 'prompt_key'. Its settings are: "
                       r"question_key, answer_key"):  # fmt: skip
        prepare_dataset([GSM8K_ROW], converter="gsm8k", prompt_key="question")
    with pytest.raises(DatasetError, match=r"no setting 'answer_keys'. Did you mean: answer_key, "):
        prepare_dataset([GSM8K_ROW], converter="generic", answer_keys="answer")
