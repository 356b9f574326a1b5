"""ASCII Go diagrams for tests: parse them into flat boards and print boards back.

A diagram has one line per row, row 0 (the top edge, GTP row ``size``) first, and one
character per point: ``X`` black, ``O`` white, ``.`` empty; spaces are ignored::

    parse('''
        . X O . .
        X O . . .
        . . . . .
        . . . . .
        . . . . .
    ''')
"""

from __future__ import annotations

import numpy as np

from alphago_jax.games import grid

_VALUES = {"X": 1, "O": -1, ".": 0}
_CHARS = {1: "X", -1: "O", 0: "."}


def parse(diagram: str) -> np.ndarray:
    """int8[size * size] board of a square diagram (+1 black, -1 white, 0 empty)."""
    rows = [line.replace(" ", "") for line in diagram.strip().splitlines()]
    rows = [r for r in rows if r]
    size = len(rows)
    if any(len(r) != size for r in rows):
        raise ValueError(f"diagram is not square: {rows}")
    try:
        return np.array([_VALUES[ch] for r in rows for ch in r], np.int8)
    except KeyError as e:
        raise ValueError(f"unknown diagram character {e}") from None


def show(board) -> str:
    """The diagram of a flat board (for assertion messages)."""
    b = np.asarray(board).reshape(-1)
    size = int(round(np.sqrt(b.size)))
    return "\n".join(" ".join(_CHARS[int(v)] for v in b[r * size:(r + 1) * size]) for r in range(size))


def points(vertices: str, size: int) -> list[int]:
    """Flat indices of space-separated GTP vertices, e.g. ``points("C3 D4 pass", 5)``."""
    return [grid.from_vertex(v, size) for v in vertices.split()]


class JitGame:
    """A game's functions jitted once, with diagram and vertex conveniences for tests."""

    def __init__(self, game):
        import jax

        self.game = game
        self.size, self.n = game.size, game.num_points
        self._init = jax.jit(game.init_from_board)
        self._step = jax.jit(game.step)
        self._returns = jax.jit(game.returns)
        self.mask = jax.jit(game.legal_action_mask)

    def setup(self, position, to_play=1):
        """The state of a diagram (or flat board) with ``to_play`` to move."""
        import jax.numpy as jnp

        board = parse(position) if isinstance(position, str) else np.asarray(position, np.int8)
        return self._init(jnp.asarray(board, jnp.int8), jnp.int8(to_play))

    def step(self, state, action):
        import jax.numpy as jnp

        return self._step(state, jnp.int32(action))

    def point(self, vertex):
        return grid.from_vertex(vertex, self.size)

    def legal_vertices(self, state):
        return {grid.to_vertex(int(p), self.size) for p in np.flatnonzero(np.asarray(state.legal))}

    def returns(self, state):
        return np.asarray(self._returns(state))
