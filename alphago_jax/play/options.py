"""The options of a player spec, ``name=value`` pairs separated by commas::

    parse_options("sims=200,seed=3", {"sims": int, "seed": int}, "mcts")  # {"sims": 200, "seed": 3}

Used by ``registry`` (the built-in players) and by the players that read their own options
(``alphago_player``), which the registry builds: neither imports the other for it.
"""

from __future__ import annotations


def parse_options(text: str, allowed: dict[str, type], kind: str) -> dict:
    """``"a=1,b=x"`` -> ``{"a": 1, "b": "x"}``, each value converted by its type in ``allowed``.

    Raises:
      ValueError: naming the option and the allowed ones.
    """
    options = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in allowed:
            raise ValueError(f"bad option {item!r} for {kind}; options: "
                             f"{', '.join(f'{k}=<{t.__name__}>' for k, t in allowed.items())}")
        try:
            options[name] = allowed[name](value.strip())
        except ValueError:
            raise ValueError(f"bad value for {kind} option {name}: {value.strip()!r} "
                             f"(expected {allowed[name].__name__})") from None
    return options


def flag(text: str) -> bool:
    """An option's true/false value: ``true``, ``false``, ``1``, ``0``, ``yes``, ``no`` (any case)."""
    value = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(text.lower())
    if value is None:
        raise ValueError(f"not true or false: {text!r}")
    return value


__all__ = ["flag", "parse_options"]
