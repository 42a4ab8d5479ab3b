"""``--check-endpoints``: one real request to every judge endpoint the rewards use, before a run.

A judge endpoint that is down, a key it rejects or a model it does not serve
would otherwise show only as every judge score being ``None`` once training
runs. The check walks composite rewards (combinations, gates, routes) down to
their judges (:class:`~rewardsmith.judges.base.ChatJudge`), asks each distinct
endpoint (URL, model and key variable) once, and reports each as reachable or
with the error that says what to fix.
"""

from __future__ import annotations

from typing import Any

from rewardsmith.core.errors import RewardsmithError
from rewardsmith.core.problems import ConfigError, ConfigProblems
from rewardsmith.data.columns import leaf_rewards

__all__ = ["check_endpoints", "judge_endpoints"]


def judge_endpoints(rewards: list[Any]) -> list[Any]:
    """The judges among ``rewards`` (composites walked), one per distinct endpoint, model and key variable.

    >>> from rewardsmith import get_reward
    >>> from rewardsmith.compose import gate
    >>> judge = get_reward("llm_judge", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=None)
    >>> [j.model for j in judge_endpoints([get_reward("think_format"), gate("think_format", judge), judge])]
    ['m']
    """
    from rewardsmith.judges.base import ChatJudge

    found: dict[tuple[str, str, str | None], Any] = {}
    for made in rewards:
        for leaf, _ in leaf_rewards(made):
            if isinstance(leaf, ChatJudge):
                found.setdefault((leaf.base_url.rstrip("/"), leaf.model, leaf.api_key_env), leaf)
    return list(found.values())


def check_endpoints(rewards: list[Any], problems: ConfigProblems) -> list[tuple[str, str]]:
    """Send one request to each judge endpoint; ``(label, result)`` rows for the plan, failures in ``problems``.

    >>> from rewardsmith import get_reward
    >>> from rewardsmith.http.testing import LocalChatServer
    >>> problems = ConfigProblems()
    >>> with LocalChatServer(lambda request: "Score: 7") as server:
    ...     judge = get_reward("llm_judge", base_url=server.base_url, model="m", api_key_env=None, cache=None)
    ...     rows = check_endpoints([judge], problems)
    >>> rows[0][0], "answered" in rows[0][1], len(problems)
    ('endpoint llm_judge', True, 0)
    """
    judges = judge_endpoints(rewards)
    if not judges:
        return [("endpoints", "none to check: no reward asks a judge endpoint")]
    rows = []
    for judge in judges:
        try:
            rows.append((f"endpoint {judge.name}", f"reachable: {judge.check_endpoint()}"))
        except RewardsmithError as exc:
            problems.add(
                ConfigError(f"judge {judge.name!r} (model {judge.model!r} at {judge.base_url}) is not usable: {exc}")
            )
    return rows
