"""Values computed once per transcript message: a message is never changed once made (a changed one is a new
object, `model_copy`), so what a request derives from the history (its size, its wire form) need only be worked
out for the messages added since the last request, not for the whole history again."""

from __future__ import annotations

import weakref
from typing import Any, Callable, TypeVar

T = TypeVar("T")


def per_message(compute: Callable[[Any], T]) -> Callable[[Any], T]:
    """`compute(message)`, remembered while the message lives (by identity: messages are not hashable)."""
    known: dict[int, tuple[weakref.ref, T]] = {}

    def forget(key: int) -> Callable[[weakref.ref], None]:
        def drop(ref: weakref.ref) -> None:
            if known.get(key, (None,))[0] is ref:  # unless the id already names a newer message
                del known[key]
        return drop

    def cached(message: Any) -> T:
        key = id(message)
        hit = known.get(key)
        if hit is not None and hit[0]() is message:
            return hit[1]
        value = compute(message)
        known[key] = (weakref.ref(message, forget(key)), value)
        return value

    cached.__doc__ = compute.__doc__
    return cached
