"""The games by name: ``make("go", size=9)``."""

from __future__ import annotations

import dataclasses

from alphago_jax.games.atari_go import AtariGo
from alphago_jax.games.base import Game
from alphago_jax.games.go import Go
from alphago_jax.games.hex import Hex
from alphago_jax.games.nogo import NoGo

_REGISTRY = {"go": Go, "atari_go": AtariGo, "nogo": NoGo, "hex": Hex}


def make(name: str, **config) -> Game:
    """Build a game by name, e.g. ``make("go", size=9, komi=7.5)``: ``go`` (size 2-19, komi,
    superko, allow_suicide, max_moves, pass_after), ``atari_go`` and ``nogo`` (size 2-19), ``hex``
    (size 3-19, swap). ``ValueError`` names the known games or the allowed configuration."""
    try:
        cls = _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(_REGISTRY))}") from None
    try:
        return cls(**config)
    except TypeError as e:
        allowed = ", ".join(f.name for f in dataclasses.fields(cls) if f.init)
        raise ValueError(f"bad configuration for {name!r}: {e}; {name!r} takes: {allowed}") from None


__all__ = ["make"]
