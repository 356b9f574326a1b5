"""Board games as pure JAX functions behind one contract (see ``base.Game``)."""

from __future__ import annotations

from alphago_jax.games.base import BLACK, WHITE, Game
from alphago_jax.games.go import Go, GoState

_REGISTRY = {"go": Go}


def make(name: str, **config) -> Game:
    """Build a game by name, e.g. ``make("go", size=9, komi=7.5)``.

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
        raise ValueError(f"bad configuration for {name!r}: {e}") from None


__all__ = ["BLACK", "WHITE", "Game", "Go", "GoState", "make"]
