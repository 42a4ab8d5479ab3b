"""Language detection (``detect_language``) and ``language_consistency``: the completion is in the expected language.

The detector is ``langdetect``, the port of Google's language-detection
library that IFEval's reference checker uses, so the ``ifeval`` reward's
language constraints and this reward agree with it. It needs no network
(its 55 language profiles ship in the package), and it is made
deterministic here (seed 0, on a detector factory of our own, so the
process-wide ``langdetect`` state is left alone); the reference checker
leaves it unseeded, so its verdicts on borderline texts vary from run to run.

``langdetect`` reads at most 10,000 characters of a text once URLs and
e-mail addresses are removed. Removing them from a megabyte costs time for
nothing, so :func:`detect_language` hands it the shortest prefix that gives
the same 10,000 characters (see :func:`_detection_input`).

Install with ``pip install 'rewardsmith[text]'``.
"""

from __future__ import annotations

import functools
import itertools
import random
import threading
import zlib
from dataclasses import dataclass
from typing import Any

from rewardsmith.core.errors import RewardConfigError
from rewardsmith.core.extras import require_extra
from rewardsmith.core.injection import Column, Input
from rewardsmith.core.registry import register_reward
from rewardsmith.core.result import RewardResult
from rewardsmith.core.reward import Reward
from rewardsmith.rewards._text import visible_text

__all__ = ["LanguageConsistency", "detect_language", "same_language"]

#: Characters langdetect reads once URLs and e-mail addresses are removed.
_READ = 10_000
#: ``language_consistency`` on a longer text: windows of this many characters, at most ``_WINDOWS`` of them.
_WINDOW = 2_000
_WINDOWS = 16
#: The most windows one completion's language share detects (16 drawn, the rest to find boundaries).
_BUDGET = 64
#: Longer than any URL or e-mail address langdetect removes (2,083 and 575 characters at most).
_MARGIN = 4_096

_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _factory() -> Any:
    require_extra("text", "language detection", ["langdetect"])
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    return factory


def _cleaned_length(text: str) -> int:
    from langdetect.detector import Detector
    from langdetect.utils.ngram import NGram

    text = Detector.MAIL_RE.sub(" ", Detector.URL_RE.sub(" ", text))
    return len(NGram.normalize_vi(text))


def _detection_input(text: str) -> str:
    """The prefix of ``text`` whose first 10,000 cleaned characters are those of the whole text.

    Removing a URL or an address only shortens the text, and a match cut by
    the end of a prefix can change at most the last ``_MARGIN`` characters.
    So once the prefix minus that margin cleans to more than 10,000
    characters, the first 10,000 are settled.
    """
    size = _READ + 2 * _MARGIN
    while size < len(text):
        if _cleaned_length(text[: size - _MARGIN]) > _READ:
            return text[:size]
        size *= 2
    return text


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of the language of ``text`` as langdetect sees it (``zh-cn``/``zh-tw`` for Chinese), or
    ``None`` when there is nothing to detect (no letters).

    Recent answers are remembered (several constraints of one response ask
    about the same text).

    >>> detect_language("Bonjour à tous, comment allez-vous aujourd'hui ?")
    'fr'
    >>> detect_language("1234 !!!") is None
    True
    """
    return _detect(text)


@functools.lru_cache(maxsize=32)
def _detect(text: str) -> str | None:
    factory = _factory()
    from langdetect.lang_detect_exception import LangDetectException

    with _LOCK:  # one detector at a time: langdetect's factory is not documented as thread-safe
        detector = factory.create()
    detector.append(_detection_input(text))
    try:
        return str(detector.detect())
    except LangDetectException:
        return None


def same_language(detected: str | None, expected: str) -> bool:
    """Whether a detected code names the expected language (``zh`` matches ``zh-cn`` and ``zh-tw``).

    >>> same_language("zh-cn", "zh"), same_language("en", "EN"), same_language(None, "en")
    (True, True, False)
    """
    if detected is None:
        return False
    detected, expected = detected.lower(), expected.strip().lower()
    return detected == expected or detected.split("-")[0] == expected


def _tiles(text: str) -> list[str]:
    """The whole text up to 10,000 characters, else windows of 2,000 characters covering it."""
    if len(text) <= _READ:
        return [text]
    return [text[i : i + _WINDOW] for i in range(0, len(text), _WINDOW)]


def _samples(count: int, seed: int) -> list[int]:
    """The windows detected first: the first, the last, and one drawn in each of 14 equal stretches between.

    Drawn with a seed from the text (deterministic, yet not a position a text can be written around: any change
    to the text moves them).

    >>> _samples(10, 0), len(_samples(1_000, 0))
    ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 16)
    """
    if count <= _WINDOWS:
        return list(range(count))
    rng = random.Random(seed)
    inner = count - 2
    bounds = [1 + inner * k // (_WINDOWS - 2) for k in range(_WINDOWS - 1)]
    drawn = [rng.randrange(low, high) for low, high in itertools.pairwise(bounds) if high > low]
    return sorted({0, *drawn, count - 1})


def _language_share(text: str, expected: str) -> tuple[float | None, list[str], int]:
    """The share of ``text``'s characters (of windows with letters) in ``expected``, the languages seen, and the
    number of windows detected.

    A text up to 10,000 characters is judged whole. A longer one is cut into windows of 2,000 characters; 16 of
    them are detected (:func:`_samples`), and wherever two neighbouring ones differ, the windows between are
    bisected down to the boundary (at most ``_BUDGET`` detections in all; a boundary left unresolved splits its
    stretch in two). Every window is then counted with the language of the detected windows around it, by its
    length: 10 KB of French before 186 KB of English is about 5% French, whichever windows were drawn.
    """
    tiles = _tiles(text)
    seed = zlib.crc32(text.encode("utf-8", "surrogatepass")) if len(tiles) > _WINDOWS else 0
    known: dict[int, str | None] = {}

    def label(index: int) -> str | None:
        if index not in known:
            known[index] = detect_language(tiles[index])
        return known[index]

    def kind(index: int) -> bool | None:
        found = label(index)
        return None if found is None else same_language(found, expected)

    points = _samples(len(tiles), seed)
    for index in points:
        kind(index)
    pending = [(a, b) for a, b in itertools.pairwise(points) if b - a > 1 and kind(a) != kind(b)]
    while pending and len(known) < _BUDGET:
        a, b = pending.pop()
        middle = (a + b) // 2
        kind(middle)
        pending += [(x, y) for x, y in ((a, middle), (middle, b)) if y - x > 1 and kind(x) != kind(y)]
    detected = sorted(known)
    weight = {True: 0, False: 0, None: 0}
    for a, b in itertools.pairwise(detected):
        between = range(a + 1, b)
        if kind(a) == kind(b):
            weight[kind(a)] += sum(len(tiles[i]) for i in between)
        else:
            half = a + 1 + len(between) // 2
            weight[kind(a)] += sum(len(tiles[i]) for i in range(a + 1, half))
            weight[kind(b)] += sum(len(tiles[i]) for i in range(half, b))
    for index in detected:
        weight[kind(index)] += len(tiles[index])
    seen = sorted({str(found) for found in known.values() if found is not None})
    judged = weight[True] + weight[False]
    return (weight[True] / judged if judged else None), seen, len(known)


@register_reward("language_consistency")
@dataclass
class LanguageConsistency(Reward):
    """The share of the completion written in the expected language: that of a ``language`` column, else the prompt's.

    The expected language is an ISO 639-1 code (``"fr"``, ``"zh"``) from
    ``language_column`` when the data has it; otherwise the prompt's own
    language, detected the same way (the last user message of a
    conversation). Detection is ``langdetect``'s (the detector IFEval uses),
    seeded so it is deterministic, on the text as it is seen (invisible
    characters removed). A completion up to 10,000 characters is judged
    whole (1 or 0); a longer one by windows of 2,000 characters across all of
    it (16 drawn, and the boundaries between languages found by bisection, see
    :func:`_language_share`), the score being the share of the text (in
    characters, windows without letters aside) in the expected language, so
    French on top of English pages does not pass as French. A completion with no letters to
    detect scores 0; a row whose expected language cannot be told (empty
    prompt, no column) scores ``None``.

    Columns: ``language`` (optional; else the prompt). Range: [0, 1] or None
    ({0, 1} up to 10,000 characters).

    >>> r = LanguageConsistency()
    >>> r(prompts=["Quelle est la capitale de la France ?"] * 2,
    ...   completions=["La capitale de la France est Paris.", "The capital of France is Paris."])
    [1.0, 0.0]
    >>> r(completions=["Das ist ein kurzer deutscher Satz."], language=["de"])
    [1.0]
    """

    default_name = "language_consistency"
    score_range = (0.0, 1.0)

    language_column: str = "language"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.language_column:
            raise RewardConfigError(f"reward {self.name!r}: language_column must name a column")
        require_extra("text", f"reward {self.name!r} (language detection)", ["langdetect"])

    def inputs(self) -> dict[str, Input]:
        return {"expected": Column(self.language_column, required=False)}

    def score(self, completion: str, prompt: str = "", expected: Any = None) -> RewardResult:
        where = f"the {self.language_column!r} column"
        if expected is None or (isinstance(expected, str) and not expected.strip()):
            expected = detect_language(visible_text(prompt)) if prompt.strip() else None
            where = "the prompt"
            if expected is None:
                return RewardResult(None, "no expected language: no language column and no prompt text to detect")
        share, seen, detected = _language_share(visible_text(completion), str(expected))
        if share is None:
            return RewardResult(0.0, f"detected nothing, expected {expected} ({where})")
        parts = f"; {share:.0%} of the text, from {detected} windows" if detected > 1 else ""
        return RewardResult(share, f"detected {', '.join(seen)}, expected {expected} ({where}){parts}")
