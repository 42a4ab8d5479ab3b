"""Seed-style GRPO scripts' dataset helper: :func:`prepare_dataset_for_trl`.

The seed-style config dialect itself (flat keys mapped onto the sectioned
config) is read in :mod:`rewardsmith.config.seed`, with every other dialect.
"""

from __future__ import annotations

from typing import Any

__all__ = ["prepare_dataset_for_trl"]


def prepare_dataset_for_trl(
    dataset_name: Any,
    split: str = "train",
    prompt_key: str | None = None,
    response_key: str | None = None,
    system_prompt: str | None = None,
    format_template: str | None = None,
    max_samples: int | None = None,
    **kwargs: Any,
) -> Any:
    """:func:`~rewardsmith.data.prepare_dataset` under the name and parameters some existing GRPO scripts use.

    ``prompt_key`` names the prompt column (default ``prompt``) and
    ``response_key`` the reference response, kept as ``solution``, with the
    ``generic`` converter; other keyword arguments go to
    :func:`~rewardsmith.data.prepare_dataset`. No system prompt is added unless
    you give one.

    >>> ds = prepare_dataset_for_trl([{"problem": "1+1?", "solution": "2"}], prompt_key="problem",
    ...                              response_key="solution", system_prompt="Think first.")
    >>> ds[0]["prompt"][0]["content"], ds[0]["solution"]
    ('Think first.', '2')
    """
    from rewardsmith.data.prepare import prepare_dataset

    if prompt_key is not None:
        kwargs["prompt_key"] = prompt_key
    if response_key is not None:
        kwargs["response_key"] = response_key
    return prepare_dataset(
        dataset_name,
        split,
        system_prompt=system_prompt,
        format_template=format_template,
        max_samples=max_samples,
        **kwargs,
    )
