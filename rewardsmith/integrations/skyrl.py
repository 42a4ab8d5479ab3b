"""SkyRL-Gym text environments scored by rewardsmith rewards (``pip install 'rewardsmith[skyrl]'``).

SkyRL's generator makes one environment per rollout,
``skyrl_gym.make(env_class, env_config=..., extras=...)``: ``env_config`` is
its config's ``environment.skyrl_gym.<env_class>`` section, ``extras`` the
dataset row's fields other than ``prompt`` and ``env_class``, plus the
generator's ``max_turns``. It calls ``init(prompt)``, then ``step(response)``
with each model response until ``done``, and takes each step's ``reward``:
at that turn's last token (trajectory-wise training) or as the step's own
reward (step-wise training).

:class:`RewardsmithTextEnv` (``env_class()``; a ``skyrl_gym`` ``BaseTextEnv``) is such an environment:

* a step is one assistant turn. Its ``<tool_call>`` blocks (read as
  rewardsmith reads them: outside the reasoning) run on ``environment=``, a
  TRL-style class (``reset(**row)`` per episode, its public methods the
  tools); their results, role ``tool``, are the observations. A turn without
  a call is the final answer and ends the episode, as does the
  ``max_turns``-th turn (its calls are not run).
* the rewards score the rollout so far (assistant turns and tool results);
  the row's columns come from ``extras`` (:func:`columns_from_extras`).
* a step's reward is the weighted sum of each per-turn reward's turn reward
  for this turn (:meth:`~rewardsmith.core.turns.TurnReward.turn_rewards`;
  with ``unit: call``, the sum over the turn's calls) and, on the final step
  only, each other reward's score. ``None`` adds 0 (SkyRL needs a number).
* a step's ``metadata`` holds each reward's value and reason for it (a per-turn reward's: this turn's);
  ``get_metrics()`` each reward's total over the episode and the turns taken.

Each step scores the whole rollout so far (a turn's score never depends on
later turns), so an episode of ``T`` turns scores ``T(T+1)/2`` turns.

Register it in the process that runs SkyRL's generator (its entrypoint, as
SkyRL's examples register theirs)::

    from rewardsmith.integrations.skyrl import register_env
    register_env(["gsm8k_accuracy", "tool_success_turns"], id="rewardsmith")  # env_class: rewardsmith

or by path, the settings in SkyRL's config (``environment.skyrl_gym.rewardsmith:
{rewards: rewards.yaml, environment: my_envs:Store}``; ``REWARDSMITH_REWARDS``
when no rewards are named)::

    skyrl_gym.register(id="rewardsmith", entry_point="rewardsmith.integrations.skyrl:RewardsmithTextEnv")
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.core.errors import RewardConfigError, RewardsmithError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.inputs import RESERVED_KWARGS
from rewardsmith.core.reward import Reward

__all__ = ["DEFAULT_MAX_TURNS", "SETTINGS", "columns_from_extras", "env_class", "register_env"]

#: Turns per episode when neither the settings nor SkyRL's ``extras`` say (SkyRL's multi-turn GSM8K default).
DEFAULT_MAX_TURNS = 5
#: What ``env_config`` (and the keyword arguments) may set.
SETTINGS = ("rewards", "weights", "environment", "max_turns", "ground_truth_column")
#: Names a column cannot have: the reward call's own arguments.
TAKEN = frozenset({"prompts", "completions", "completion_ids"}) | RESERVED_KWARGS


def columns_from_extras(extras: dict[str, Any] | None, ground_truth_column: str = "answer") -> dict[str, Any]:
    """The row's columns from SkyRL's ``extras``: each field, the fields of ``extra_info`` too, and
    ``reward_spec["ground_truth"]`` as ``ground_truth_column`` (a field of the row itself wins).

    >>> columns_from_extras({"reward_spec": {"method": "rule", "ground_truth": "18"}, "data_source": "gsm8k",
    ...                      "extra_info": {"split": "train"}, "max_turns": 3})
    {'data_source': 'gsm8k', 'split': 'train', 'answer': '18'}
    """
    extras = _plain(extras) or {}
    if not isinstance(extras, dict):
        raise RewardConfigError(f"SkyRL's extras must be a dict (the row's fields), got {type(extras).__name__}")
    skip = TAKEN | {"reward_spec", "extra_info", "max_turns", "modalities"}
    out = {str(k): v for k, v in extras.items() if k not in skip}
    info = extras.get("extra_info")
    for key, value in info.items() if isinstance(info, dict) else ():
        if key not in TAKEN:
            out.setdefault(str(key), value)
    spec = extras.get("reward_spec")
    if isinstance(spec, dict) and "ground_truth" in spec:
        out.setdefault(ground_truth_column, spec["ground_truth"])
    return out


def _plain(value: Any) -> Any:
    """An OmegaConf ``DictConfig``/``ListConfig`` (what SkyRL passes) as plain dicts and lists."""
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        return OmegaConf.to_container(value, resolve=True)
    return value


@dataclass(frozen=True)
class _Setup:
    """What every episode of one registration shares: the rewards, their weights, the tools' class, the limits."""

    rewards: tuple[Reward, ...]
    weights: tuple[float, ...]
    environment: type | None
    max_turns: int | None
    ground_truth_column: str

    @property
    def labels(self) -> list[str]:
        """Each reward's name, numbered when two share one."""
        names = [r.name for r in self.rewards]
        return [n if names.count(n) == 1 else f"{n}_{i}" for i, n in enumerate(names)]


def _turn_limit(value: Any, where: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise RewardConfigError(f"{where} must be a whole number of at least 1, got {value!r}")
    return value


def _setup(settings: dict[str, Any]) -> _Setup:
    from rewardsmith.core.lookup import import_object
    from rewardsmith.integrations.named import rewards_for
    from rewardsmith.integrations.trl_async import reward_list

    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise RewardConfigError(f"unknown SkyRL environment setting(s) {unknown}; the settings are {list(SETTINGS)}")
    rewards, weights = settings.get("rewards"), settings.get("weights")
    if rewards is None or isinstance(rewards, (str, os.PathLike)):
        where = "the SkyRL environment's rewards (register_env, or env_config's rewards)"
        made, found = rewards_for(None if rewards is None else str(rewards), where=where)
    else:
        made, found = reward_list(rewards)
    chosen = list(weights) if weights is not None else list(found or [1.0] * len(made))
    if len(chosen) != len(made):
        raise RewardConfigError(f"{len(chosen)} weight(s) for {len(made)} reward(s); give one weight per reward")
    environment = settings.get("environment")
    if isinstance(environment, str):
        environment = import_object(environment, what="environment")
    if environment is not None and not callable(environment):
        raise RewardConfigError(f"environment must be a class (or 'module:Class'), got {environment!r}")
    max_turns = _turn_limit(settings.get("max_turns"), "max_turns")
    column = settings.get("ground_truth_column", "answer")
    return _Setup(tuple(made), tuple(float(w) for w in chosen), environment, max_turns, str(column))


class _Episode:
    """The methods of :class:`RewardsmithTextEnv` (``env_class()`` joins them to SkyRL's ``BaseTextEnv``)."""

    #: Settings of the class (a subclass :func:`register_env` registers binds them); ``env_config`` overrides them.
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, env_config: Any = None, extras: Any = None, **settings: Any) -> None:
        super().__init__()
        config = _plain(env_config) or {}
        if not isinstance(config, dict):
            raise RewardConfigError(f"env_config must be a mapping of settings, got {type(config).__name__}")
        given = {**self.defaults, **{k: v for k, v in settings.items() if v is not None}}
        if "rewards" in config:  # the config's rewards come with the config's weights (or none)
            given.pop("weights", None)
        setup = _setup({**given, **config})
        self.setup = setup
        extras = _plain(extras) or {}
        self.columns = columns_from_extras(extras, setup.ground_truth_column)
        limits = [n for n in (setup.max_turns, _turn_limit(extras.get("max_turns"), "extras' max_turns")) if n]
        self.max_turns = min(limits) if limits else DEFAULT_MAX_TURNS
        self.env = setup.environment() if setup.environment is not None else None
        self.prompt: Any = None
        self.rollout: list[dict[str, Any]] = []
        self.totals = dict.fromkeys(setup.labels, 0.0)
        self.done = False

    def init(self, prompt: Any) -> tuple[Any, dict[str, Any]]:
        """The first prompt (with what the environment's ``reset(**row)`` returns, when it returns text)."""
        prompt = [dict(m) for m in prompt] if isinstance(prompt, list) else prompt
        said = self.env.reset(**self.columns) if callable(getattr(self.env, "reset", None)) else None
        if isinstance(said, str) and said and isinstance(prompt, list):
            last = prompt[-1] if prompt else None
            if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
                last["content"] = f"{last['content']}\n{said}"
            else:
                prompt.append({"role": "user", "content": said})
        self.prompt = prompt
        return prompt, {}

    def step(self, action: str) -> Any:
        """One assistant turn: its tools run (unless it ends the episode), the rewards' step reward."""
        from skyrl_gym.envs.base_text_env import BaseTextEnvStepOutput

        from rewardsmith.core.trajectory import trajectory
        from rewardsmith.core.turns import rollout_turns

        if self.done:
            raise RewardsmithError("the episode is over (its last step returned done); SkyRL makes a new environment")
        if not isinstance(action, str):
            raise RewardConfigError(f"a SkyRL step's action is the model's text, got {type(action).__name__}")
        self.turns += 1
        self.rollout.append({"role": "assistant", "content": action})
        calls = rollout_turns(trajectory(self.rollout))[-1].calls
        done = not calls or self.turns >= self.max_turns
        observations = [] if done else [self._observe(call) for call in calls]
        self.rollout += observations
        self.done = done
        reward, values, reasons = self._score(done)
        metadata = {"rewards": values, "reasons": reasons}
        return BaseTextEnvStepOutput(observations=observations, reward=reward, done=done, metadata=metadata)

    def _observe(self, call: Any) -> dict[str, Any]:
        """A call run on the environment, its result a ``tool`` message (an error as TRL records one)."""
        from rewardsmith.integrations.agents import run_tool

        if call.malformed:
            text = str({"error": f"malformed call: {call.malformed}"})
        else:
            text = run_tool(self.env, call.name, call.arguments)
        return {"role": "tool", "name": call.name or "", "content": text}

    def _score(self, final: bool) -> tuple[float, dict[str, float | None], dict[str, str]]:
        """This step's reward, each reward's value for it (``None``: not judged) and reasons."""
        from rewardsmith.core.turns import TurnReward

        columns = {k: [v] for k, v in self.columns.items()}
        if self.env is not None:
            columns["environments"] = [self.env]
        total, values, reasons = 0.0, {}, {}
        for label, reward, weight in zip(self.setup.labels, self.setup.rewards, self.setup.weights):
            per_turn = isinstance(reward, TurnReward)
            if not (per_turn or final):
                continue
            (result,) = reward.explain([self.prompt], [list(self.rollout)], None, **columns)
            value, why = self._turn_value(reward, result) if per_turn else (result.score, result.reason)
            values[label], reasons[label] = value, why
            if value is not None:
                total += weight * value
                self.totals[label] += value
        return total, values, reasons

    def _turn_value(self, reward: Any, result: Any) -> tuple[float | None, str]:
        """The per-turn reward's turn reward and reason for the turn just made (unit ``call``: its calls' sum)."""
        from rewardsmith.core.trajectory import trajectory
        from rewardsmith.core.turns import rollout_turns

        vector = result.metrics.get("turn_rewards") or []
        why = result.metrics.get("turn_reasons") or []
        steps = 1 if reward.unit != "call" else len(rollout_turns(trajectory(self.rollout))[-1].calls)
        mine = [v for v in vector[len(vector) - steps :] if v is not None] if steps and vector else []
        reason = "; ".join(r for r in why[len(why) - steps :] if r) if steps else ""
        return (float(sum(mine)) if mine else None), reason

    def get_metrics(self) -> dict[str, Any]:
        """Each reward's total over the episode, and the turns taken (SkyRL averages them per environment class)."""
        return {**self.totals, "turns": self.turns}


@functools.cache
def env_class() -> type:
    """:class:`RewardsmithTextEnv`: SkyRL-Gym's ``BaseTextEnv`` scoring with rewardsmith rewards (see the module).

    >>> import pytest; _ = pytest.importorskip("skyrl_gym")  # the skyrl extra
    >>> env = env_class()(env_config={"rewards": "gsm8k_accuracy"}, extras={"reward_spec": {"ground_truth": "18"}})
    >>> _ = env.init([{"role": "user", "content": "9*2?"}])
    >>> out = env.step("#### 18")
    >>> out["reward"], out["done"], env.get_metrics()
    (1.0, True, {'gsm8k_accuracy': 1.0, 'turns': 1})
    """
    require_extra("skyrl", "the SkyRL-Gym environment")
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    doc = "A SkyRL-Gym text environment scored by rewardsmith rewards (:mod:`rewardsmith.integrations.skyrl`)."
    return type("RewardsmithTextEnv", (_Episode, BaseTextEnv), {"__module__": __name__, "__doc__": doc})


def register_env(
    rewards: Any = None,
    *,
    id: str = "rewardsmith",
    weights: Sequence[float] | None = None,
    environment: Any = None,
    max_turns: int | None = None,
    ground_truth_column: str = "answer",
) -> str:
    """Register :class:`RewardsmithTextEnv` with SkyRL-Gym as ``id`` (a dataset's ``env_class``); returns ``id``.

    ``rewards``: a reward, a list, a config list, or a config file / names
    (``None``: ``REWARDSMITH_REWARDS``); built and checked now, once, and
    shared by the episodes. The other settings as in the module; settings in
    SkyRL's ``env_config`` for this class override these.

    >>> import pytest; skyrl_gym = pytest.importorskip("skyrl_gym")
    >>> register_env("gsm8k_accuracy", id="rewardsmith_doctest")
    'rewardsmith_doctest'
    >>> env = skyrl_gym.make("rewardsmith_doctest", env_config={}, extras={"answer": "18", "max_turns": 1})
    >>> _ = env.init([{"role": "user", "content": "9*2?"}])
    >>> env.step("#### 17")["reward"]
    0.0
    """
    require_extra("skyrl", "the SkyRL-Gym environment")
    import skyrl_gym

    given = {"rewards": rewards, "weights": weights, "environment": environment, "max_turns": max_turns}
    setup = _setup({**{k: v for k, v in given.items() if v is not None}, "ground_truth_column": ground_truth_column})
    shared = {"rewards": list(setup.rewards), "weights": list(setup.weights), "environment": setup.environment,
              "max_turns": setup.max_turns, "ground_truth_column": setup.ground_truth_column}  # fmt: skip
    # a class, not a function: SkyRL aggregates an environment's metrics with its entry point's aggregate_metrics
    base = env_class()
    bound = type(base.__name__, (base,), {"__module__": __name__, "__doc__": base.__doc__, "defaults": shared})
    skyrl_gym.register(id=id, entry_point=bound)
    return id


def __getattr__(name: str) -> Any:
    # what skyrl_gym.make imports for the entry point "rewardsmith.integrations.skyrl:RewardsmithTextEnv"
    if name == "RewardsmithTextEnv":
        return env_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
