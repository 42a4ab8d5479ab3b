"""``language_consistency`` on long completions: the score is the share of the text in the expected language,
whichever windows the text's own seed draws (before: 3 of 16 windows, 0.1875, for about 5% French)."""

from __future__ import annotations

import random

import pytest

from rewardsmith import get_reward

pytest.importorskip("langdetect")

FRENCH = [
    "Le chat est assis sur le tapis et regarde la pluie tomber doucement sur la ville.",
    "Nous avons visité le marché du village avant de rentrer à la maison pour le dîner.",
    "La bibliothèque municipale ouvre ses portes tous les matins à neuf heures précises.",
    "Les enfants jouent dans le jardin pendant que leurs parents préparent le repas.",
]
ENGLISH = [
    "The quick brown fox jumps over the lazy dog while the sun sets behind the hills.",
    "We visited the village market before going back home to cook dinner together.",
    "The public library opens its doors every morning at nine o'clock sharp.",
    "Children are playing in the garden while their parents prepare the evening meal.",
]


def _text(sentences: list[str], size: int, rng: random.Random) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        out.append(rng.choice(sentences))
        total += len(out[-1]) + 1
    return " ".join(out)[:size]


@pytest.mark.parametrize("seed", range(6))
def test_ten_kb_of_french_then_186_kb_of_english_is_about_five_percent_french(seed):
    rng = random.Random(seed)
    completion = _text(FRENCH, 10_000, rng) + " " + _text(ENGLISH, 186_000, rng)
    result = get_reward("language_consistency").explain(completions=[completion], language=["fr"])[0]
    assert 0.03 <= result.score <= 0.08, result.reason  # 10,000 of 196,001 characters: 5.1%


@pytest.mark.parametrize("seed", range(3))
def test_french_in_the_middle_and_at_the_end_is_counted_by_its_length(seed):
    rng = random.Random(100 + seed)
    english = _text(ENGLISH, 60_000, rng)
    french = _text(FRENCH, 40_000, rng)
    r = get_reward("language_consistency")
    middle, end = r(completions=[english + " " + french + " " + english, english + english + " " + french],
                    language=["fr", "fr"])  # fmt: skip
    assert middle == pytest.approx(40 / 160, abs=0.03) and end == pytest.approx(40 / 160, abs=0.03)
