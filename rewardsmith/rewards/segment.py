"""Words of text written without spaces: Chinese, segmented with jieba (as open-r1's ``language="zh"`` does).

jieba segments about 150,000 characters a second here, in pure Python, so
a megabyte would take six seconds. Only the first
:data:`MAX_SEGMENTED_CHARS` characters are segmented: a reward that reads
words of a completion reads those of its first 150,000 characters, which
is longer than any completion a GRPO run generates (tens of thousands of
tokens at most), and which is itself part of the completion, so it cannot
be padded away. Install with ``pip install 'rewardsmith[text]'``.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from rewardsmith.core.extras import require_extra

__all__ = ["MAX_SEGMENTED_CHARS", "chinese_words"]

#: Characters of a text that :func:`chinese_words` segments at most.
MAX_SEGMENTED_CHARS = 150_000


@functools.lru_cache(maxsize=1)
def _jieba() -> Any:
    require_extra("text", "segmenting Chinese text into words", ["jieba"])
    import jieba

    jieba.setLogLevel(logging.ERROR)  # it announces building its dictionary on stderr
    jieba.initialize()
    return jieba


def chinese_words(text: str) -> list[str]:
    """jieba's words of ``text`` (of its first :data:`MAX_SEGMENTED_CHARS` characters), white space dropped.

    >>> chinese_words("这个这个 这个")
    ['这个', '这个', '这个']
    """
    return [w for w in _jieba().cut(text[:MAX_SEGMENTED_CHARS]) if not w.isspace()]
