"""A request's values freed a part at a time, so that no one step holds the GIL for long.

Dropping the last reference to a big structure frees all of it in one C call, the GIL held throughout: a
second for the values of a 56 MB body, and on the event loop's thread when that reference is the one an
error or a handler's frame held. :func:`dismantle` empties the structure an entry at a time instead (run it
off the event loop); the body's reader empties what it had built when it refuses a body, so that the error
it raises holds nothing big.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["count_values", "dismantle"]

#: Entries holding fewer values than this are freed whole (one short step each).
SMALL = 8192


def _contents(value: Any) -> list[Any] | dict[Any, Any] | None:
    """Where ``value``'s parts are held: a list or object itself, an instance's attributes (a body's sink of
    messages), or ``None`` for a value without parts."""
    if isinstance(value, (list, dict)):
        return value
    if isinstance(value, (str, bytes, int, float, type)) or value is None:
        return None
    attributes = getattr(value, "__dict__", None)
    return attributes if isinstance(attributes, dict) else None


def count_values(value: Any, cap: int) -> int:
    """The number of values in ``value``, counted up to ``cap`` (strings by length: one per 64 characters).

    >>> count_values([{"a": 1}, "b"], 100), count_values(list(range(1000)), 10)
    (4, 10)
    """
    count, stack = 0, [value]
    while stack and count < cap:
        item = stack.pop()
        count += 1 + (len(item) // 64 if isinstance(item, str) else 0)
        inner = _contents(item)
        if isinstance(inner, dict):
            stack.extend(inner.values())
        elif inner is not None:
            stack.extend(inner)
    return count


def dismantle(values: Any, cap: int | None = None) -> None:
    """Free a request's values a part at a time, emptying ``values`` (a list, an object or an instance, whoever
    else holds it) and the lists, objects and instances in it that nothing else holds.

    Each of them is emptied an entry at a time, and an entry is freed at once only when it holds fewer than
    ``cap`` values; one still referenced elsewhere is left whole.

    >>> values = [{"a": [[1, 2]] * 10_000, "b": "c"}]
    >>> dismantle(values); values
    []
    """
    cap = cap or SMALL
    top = _contents(values)
    stack: list[Any] = [] if top is None else [top]
    while stack:
        item = stack.pop()
        while item:
            child = item.popitem()[1] if isinstance(item, dict) else item.pop()
            inner = _contents(child) if sys.getrefcount(child) <= 2 else None
            if inner is not None and count_values(inner, cap) >= cap:
                stack.append(inner)
            del child, inner
