"""Validation of settings: every config class reports a bad field the same way.

A failed check raises ``ValueError("<Class>.<field> <what is allowed>, got <value>")``, e.g.
``SLConfig.batch must be an int >= 1, got 0``.

Layer: the standard library only; used by the config classes of every layer.
"""

from __future__ import annotations

import math
import os
import numbers
import operator
from typing import Iterable, NoReturn

_COMPARE = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def fail(config, name: str, allowed: str) -> NoReturn:
    """Raise ``ValueError("<Class>.<name> <allowed>, got <value>")``."""
    raise ValueError(f"{type(config).__name__}.{name} {allowed}, got {getattr(config, name)!r}")


def require(config, name: str, ok: bool, allowed: str) -> None:
    """``fail(config, name, allowed)`` unless ``ok``."""
    if not ok:
        fail(config, name, allowed)


def is_int(x) -> bool:
    """Whether ``x`` is an integer (Python or numpy), not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_number(x) -> bool:
    """Whether ``x`` is a finite real number (Python or numpy), not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def ints(config, low: int, *names: str) -> None:
    """Each field of ``names`` is an int ``>= low``."""
    for name in names:
        x = getattr(config, name)
        require(config, name, is_int(x) and x >= low, f"must be an int >= {low}")


def within(x, bounds: str) -> bool:
    """Whether the number ``x`` is within ``bounds``: ``""`` (anywhere), a comparison such as
    ``"> 0"`` or ``">= 0"``, or an interval such as ``"[0, 1)"``."""
    if not bounds:
        return True
    if bounds[0] in "[(":
        low, high = (float(v) for v in bounds[1:-1].split(","))
        above = low < x if bounds[0] == "(" else low <= x
        return above and (x < high if bounds[-1] == ")" else x <= high)
    op, value = bounds.split()
    return _COMPARE[op](x, float(value))


def number(config, name: str, bounds: str = "", *, none: str | None = None) -> None:
    """The field ``name`` is a finite number within ``bounds`` (``within``); with ``none`` (what
    None means), None too."""
    x = getattr(config, name)
    if x is None and none is not None:
        return
    if not bounds:
        allowed = "a finite number"
    elif bounds[0] in "[(":
        allowed = f"a number in {bounds}"
    else:
        allowed = f"a finite number {bounds}"
    require(config, name, is_number(x) and within(x, bounds),
            f"must be {allowed}" if none is None else f"must be None ({none}) or {allowed}")


def choice(config, name: str, choices: Iterable, what: str | None = None) -> None:
    """The field ``name`` is one of ``choices``; ``what`` names the kind of value in the message."""
    choices = tuple(choices)
    allowed = f"must be one of {', '.join(map(repr, choices))}"
    require(config, name, getattr(config, name) in choices, f"is an unknown {what}: {allowed}" if what else allowed)


def flags(config, *names: str) -> None:
    """Each field of ``names`` is a bool."""
    for name in names:
        require(config, name, isinstance(getattr(config, name), bool), "must be true or false")


def seconds_from_env(name: str, default: int) -> int:
    """Whole seconds from environment variable ``name`` (``default`` when unset); ValueError naming it."""
    text = os.environ.get(name, "")
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name}={text!r}: must be a whole number of seconds, at least 1")
    return value


__all__ = ["choice", "fail", "flags", "ints", "is_int", "is_number", "number", "require", "seconds_from_env",
           "within"]
