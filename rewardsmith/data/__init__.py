"""Datasets for reward training and evaluation: load from the Hub or local files, convert, build prompts.

>>> from rewardsmith.data import prepare_dataset, check_columns
>>> ds = prepare_dataset([{"nums": [3, 5, 2], "target": 16}], converter="countdown", conversational=False)
>>> ds[0]["prompt"][:40], ds[0]["nums"], ds[0]["target"]
('Using the numbers [3, 5, 2], create an e', [3, 5, 2], 16)
>>> check_columns(ds, "gsm8k_accuracy", raise_error=False)
[MissingColumns(reward='gsm8k_accuracy', columns=['answer'])]

``datasets`` is imported only when data is loaded, so importing this package
is cheap.
"""

from rewardsmith.data.code import APPS, MBPP, CodeContests, HumanEval
from rewardsmith.data.columns import MissingColumns, check_columns, dataset_columns
from rewardsmith.data.converters import Chat, Converter, FireworksEval, FunctionConverter, Generic
from rewardsmith.data.loading import FILE_TYPES, load_source, register_source_scheme
from rewardsmith.data.prepare import prepare_dataset
from rewardsmith.data.prompts import PromptTemplate, build_prompt
from rewardsmith.data.registry import get_converter, list_converters, register_converter, unregister_converter
from rewardsmith.data.tasks import GSM8K, Countdown, Math, countdown_prompt, gsm8k_final_answer

__all__ = [
    "APPS",
    "FILE_TYPES",
    "GSM8K",
    "MBPP",
    "Chat",
    "CodeContests",
    "Converter",
    "Countdown",
    "FireworksEval",
    "FunctionConverter",
    "Generic",
    "HumanEval",
    "Math",
    "MissingColumns",
    "PromptTemplate",
    "build_prompt",
    "check_columns",
    "countdown_prompt",
    "dataset_columns",
    "get_converter",
    "gsm8k_final_answer",
    "list_converters",
    "load_source",
    "prepare_dataset",
    "register_converter",
    "register_source_scheme",
    "unregister_converter",
]
