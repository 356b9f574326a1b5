"""Board games as pure JAX functions behind one contract (``Game``): Go, AtariGo, NoGo and Hex,
built by name with ``make``; ``grid`` holds the square-board helpers and GTP vertices,
``history.WithHistory`` keeps the recent boards that the network inputs read."""

from alphago_jax.games import grid, history
from alphago_jax.games.atari_go import AtariGo
from alphago_jax.games.base import BLACK, WHITE, Game
from alphago_jax.games.go import Go, GoState
from alphago_jax.games.hex import Hex, HexState
from alphago_jax.games.nogo import NoGo
from alphago_jax.games.registry import make

__all__ = [
    "BLACK",
    "WHITE",
    "AtariGo",
    "Game",
    "Go",
    "GoState",
    "Hex",
    "HexState",
    "NoGo",
    "grid",
    "history",
    "make",
]
