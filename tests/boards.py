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
