"""The registry: names, aliases, import and file paths, factories, plug-ins, and the CLI over it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import rewardsmith.core.registry as registry
from rewardsmith import (
    Reward,
    RewardConfigError,
    UnknownRewardError,
    describe_reward,
    get_reward,
    get_rewards,
    list_rewards,
    register_reward,
    reward,
    unregister_reward,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def clean_names():
    """Unregister whatever a test registers."""
    list_rewards()  # built-ins and plug-ins loaded before the snapshot
    before = set(registry.list_rewards())
    yield
    for name in set(registry.list_rewards()) - before:
        if name in registry.list_rewards():
            registry.unregister_reward(name)


@reward
def polite(completion: str, word: str = "please") -> float:
    """Whether the completion says the magic word."""
    return float(word in completion.lower())


def make_threshold_reward(min_chars: int = 3):
    """A factory: returns a reward configured by its arguments."""

    @reward
    def long_enough(completion: str) -> float:
        return float(len(completion) >= min_chars)

    return long_enough


class LegacyReward:
    """A TRL-style callable class whose settings are constructor arguments."""

    def __init__(self, factor: float = 1.0):
        self.factor = factor

    def __call__(self, completions, **kwargs):
        return [self.factor * len(c) for c in completions]


def test_register_and_get_with_settings(clean_names):
    register_reward("polite", polite)
    made = get_reward("polite", word="thanks")
    assert made(completions=["Thanks!", "please"]) == [1.0, 0.0]
    assert get_reward("polite")(completions=["please"]) == [1.0]


def test_registering_a_name_twice_is_an_error_unless_replacing(clean_names):
    register_reward("polite", polite)
    with pytest.raises(RewardConfigError, match=r"already registered.*replace=True"):
        register_reward("polite", make_threshold_reward)
    register_reward("polite", make_threshold_reward, replace=True)
    assert get_reward("polite", min_chars=2)(completions=["abc"]) == [1.0]


def test_bare_decorator_uses_the_reward_name(clean_names):
    @register_reward
    @dataclass
    class EndsWithPeriod(Reward):
        def score(self, completion: str) -> float:
            return float(completion.endswith("."))

    assert "ends_with_period" in list_rewards()
    assert get_reward("ends_with_period")(completions=["Done.", "Done"]) == [1.0, 0.0]


def test_invalid_names_are_rejected(clean_names):
    with pytest.raises(RewardConfigError, match="cannot register"):
        register_reward("my:reward", polite)


def test_unknown_name_lists_close_matches():
    with pytest.raises(UnknownRewardError) as info:
        get_reward("think_fromat")
    message = str(info.value)
    assert "Did you mean: think_format" in message and "rewardsmith rewards list" in message


def test_aliases_resolve_and_are_listed():
    assert get_reward("format").name == "think_format"
    assert list_rewards()["format"] == "alias of think_format"


def test_list_rewards_has_one_line_descriptions():
    listed = list_rewards()
    assert {"think_format", "gsm8k_accuracy", "tag_count"} <= set(listed)
    assert all("\n" not in text and text for text in listed.values())


def test_dotted_paths_resolve():
    assert get_reward("test_registry:polite")(completions=["please"]) == [1.0]
    assert get_reward("test_registry.polite", word="x")(completions=["x"]) == [1.0]


def test_factories_and_classes_named_by_path_are_called_with_settings():
    made = get_reward("test_registry:make_threshold_reward", min_chars=5)
    assert made(completions=["four", "fives"]) == [0.0, 1.0]
    legacy = get_reward("test_registry:LegacyReward", factor=2.0)
    assert legacy.name == "LegacyReward" and legacy(completions=["ab"]) == [4.0]


def test_wrong_settings_for_a_factory_list_what_it_accepts():
    with pytest.raises(RewardConfigError, match="accepts: min_chars"):
        get_reward("test_registry:make_threshold_reward", max_chars=5)


def test_file_paths_resolve(tmp_path, monkeypatch):
    (tmp_path / "my_rewards.py").write_text(
        textwrap.dedent(
            """
            def exclaims(completion):
                return float(completion.endswith("!"))

            def batch_len(completions, scale=1.0, **kwargs):
                return [scale * len(c) for c in completions]
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    assert get_reward("./my_rewards.py:exclaims")(completions=["hi!", "hi"]) == [1.0, 0.0]
    scaled = get_reward("my_rewards.py:batch_len", scale=0.5)
    assert scaled.name == "batch_len" and scaled(completions=["abcd"]) == [2.0]


def test_missing_file_and_attribute_errors_are_clear(tmp_path):
    with pytest.raises(UnknownRewardError, match="does not exist"):
        get_reward(str(tmp_path / "nope.py") + ":fn")
    with pytest.raises(UnknownRewardError, match=r"has no attribute 'polit'.*Did you mean: polite"):
        get_reward("test_registry:polit")
    with pytest.raises(UnknownRewardError, match="cannot import module"):
        get_reward("no_such_package.rewards:fn")


def test_get_rewards_from_a_string_or_list():
    names = [r.name for r in get_rewards("think_format, gsm8k_accuracy")]
    assert names == ["think_format", "gsm8k_accuracy"]
    mixed = get_rewards(["tag_count", polite, lambda completions, **kw: [0.0] * len(completions)])
    assert [r.name for r in mixed] == ["tag_count", "polite", "<lambda>"]
    with pytest.raises(RewardConfigError, match="no rewards given"):
        get_rewards(" , ")


def _plugin_package(folder: Path) -> Path:
    """An installed-looking package (a dist-info with entry points) declaring a reward, a converter and a plug-in."""
    dist = folder / "rewardsmith_plugin_demo-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rewardsmith-plugin-demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[rewardsmith.rewards]\nplugin_shout = plugin_demo_mod:shout\n\n"
        "[rewardsmith.converters]\nplugin_upper = plugin_demo_mod:upper\n\n"
        "[rewardsmith.plugins]\ndemo = plugin_demo_registers\n"
    )
    (folder / "plugin_demo_mod.py").write_text(
        textwrap.dedent(
            '''
            def shout(completion):
                """Upper-case completions score 1."""
                return float(completion.isupper())


            def upper(row):
                """The prompt in capitals."""
                return {"prompt": row["text"].upper()}
            '''
        )
    )
    (folder / "plugin_demo_registers.py").write_text(
        textwrap.dedent(
            """
            from rewardsmith import register_reward


            @register_reward("plugin_long")
            def long(completion):
                return float(len(completion) > 3)
            """
        )
    )
    return folder


def _run(script: str, path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(path)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env, timeout=120
    )


def test_entry_point_plugins_are_found_in_a_fresh_process(tmp_path):
    result = _run(
        """
        from rewardsmith import get_reward, list_rewards
        from rewardsmith.data import get_converter, list_converters
        assert list_rewards()["plugin_shout"].startswith("plug-in from plugin_demo_mod:shout"), list_rewards()
        assert get_reward("plugin_shout")(completions=["HI", "hi"]) == [1.0, 0.0]
        assert list_rewards()["plugin_shout"] == "Upper-case completions score 1."
        assert get_reward("plugin_long")(completions=["long", "no"]) == [1.0, 0.0]
        assert "plugin_upper" in list_converters()
        assert get_converter("plugin_upper").convert({"text": "hi"})["prompt"] == "HI"
        print("ok")
        """,
        _plugin_package(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_a_broken_plug_in_is_named_in_the_unknown_name_error(tmp_path):
    dist = tmp_path / "broken_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[rewardsmith.plugins]\nbroken = broken_plugin_mod\n")
    (tmp_path / "broken_plugin_mod.py").write_text("raise ImportError('needs a library that is not installed')\n")
    result = _run(
        """
        from rewardsmith import get_reward
        assert get_reward("think_format").name == "think_format"  # the other plug-ins still load
        try:
            get_reward("from_the_broken_plugin")
        except Exception as exc:
            print(exc)
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "broken_plugin_mod: ImportError: needs a library that is not installed" in result.stdout


def test_unregister(clean_names):
    register_reward("polite", polite, aliases=("courteous",))
    unregister_reward("polite")
    assert "polite" not in list_rewards() and "courteous" not in list_rewards()
    with pytest.raises(UnknownRewardError):
        unregister_reward("polite")


def test_describe_reward_gives_settings_and_columns():
    info = describe_reward("gsm8k_accuracy", answer_column="gold")
    assert info.settings == {
        "answer_column": "gold",
        "fallback_last_number": True,
        "reasoning_delimiters": None,
        "answer_tag": "answer",
        "think_tag": "think",
    }
    assert info.required_columns == ["gold"]
    assert info.engine["on_error"] == "zero"  # a correctness reward: a failed check scores as a wrong answer
    fn_info = describe_reward("test_registry:polite")
    assert fn_info.settings == {"word": "please"} and fn_info.required_columns == []


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rewardsmith.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_cli_lists_and_shows_rewards():
    listed = _cli("rewards", "list")
    assert listed.returncode == 0, listed.stderr
    assert "think_format" in listed.stdout and "gsm8k_accuracy" in listed.stdout
    shown = _cli("rewards", "show", "gsm8k_accuracy", "answer_column=gold")
    assert shown.returncode == 0, shown.stderr
    assert "answer_column" in shown.stdout and "'gold'" in shown.stdout and "required columns: gold" in shown.stdout


def test_cli_unknown_reward_exits_2_with_a_suggestion():
    shown = _cli("rewards", "show", "gsm8k_acuracy")
    assert shown.returncode == 2
    assert "Did you mean: gsm8k_accuracy" in shown.stderr
    assert "Traceback" not in shown.stderr
