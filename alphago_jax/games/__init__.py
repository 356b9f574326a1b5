"""Board games as pure JAX functions behind one contract (see ``base.Game``)."""

from __future__ import annotations

import dataclasses

from alphago_jax.games.base import BLACK, WHITE, Game
from alphago_jax.games.atari_go import AtariGo
from alphago_jax.games.go import Go, GoState
from alphago_jax.games.hex import Hex, HexState
from alphago_jax.games.nogo import NoGo

_REGISTRY = {"go": Go, "atari_go": AtariGo, "nogo": NoGo, "hex": Hex}


def make(name: str, **config) -> Game:
    """Build a game by name, e.g. ``make("go", size=9, komi=7.5)``.

    Games and their configuration: ``go`` (size 2-19, komi, superko, allow_suicide, max_moves),
    ``atari_go`` (size 2-19), ``nogo`` (size 2-19), ``hex`` (size 3-19, swap).

    Raises:
      ValueError: naming the known games if ``name`` is not one, or the allowed values if a
        configuration value is not allowed.
    """
    try:
        cls = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(_REGISTRY))}") from None
    try:
        return cls(**config)
    except TypeError as e:
        allowed = ", ".join(f.name for f in dataclasses.fields(cls) if f.init)
        raise ValueError(f"bad configuration for {name!r}: {e}; {name!r} takes: {allowed}") from None


__all__ = ["BLACK", "WHITE", "AtariGo", "Game", "Go", "GoState", "Hex", "HexState", "NoGo", "make"]
