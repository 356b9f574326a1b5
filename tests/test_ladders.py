"""Ladder planes of ``features.alphago`` on textbook positions, drawn on 9x9 boards.

Each case gives the position, the player to move, and the points where the ladder-capture
and ladder-escape planes must be set (GTP vertices). A plain-Python full-search ladder reader
(``featureref.ladder_planes``) must agree on every case too.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import boards as diagrams
import featureref
from alphago_jax.features import alphago, symmetry
from alphago_jax.games import grid
from alphago_jax.games.go import Go
from alphago_jax.games.history import WithHistory

SIZE = 9
GAME = WithHistory(Go(size=SIZE))
X, O = 1, -1

# A white stone chased up and right from E5: F5 ataris it, and the staircase reaches the top edge.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X . . . . .
    . . . X O . . . .
    . . . . X . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

# The same with a white ladder breaker on H7, on the staircase's path.
BROKEN = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . O .
    . . . X . . . . .
    . . . X O . . . .
    . . . . X . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

CASES = [
    # (name, diagram, to_play, ladder capture points, ladder escape points)
    ("working ladder", LADDER, X, "F5", ""),
    ("ladder broken by a breaker", BROKEN, X, "", ""),
    ("black stone on the path: still works", LADDER.replace(". . . . . . . . .\n    . . . X", ". . . . . . X . .\n    . . . X", 1), X, "F5", ""),
    ("escape fails: the ladder works", LADDER.replace("X O . . . .", "X O X . . ."), O, "", ""),
    ("escape works: the breaker", BROKEN.replace("X O . . . .", "X O X . . ."), O, "", "E6"),
    ("ladder along the edge", """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . . .
        . . . X O . . . .
        . . . . . . . . .
     """, X, "F2", ""),
    ("escape along the first line fails into the corner", """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . . .
        . . . X O . . . .
     """, O, "", ""),
    ("escape along the first line works: a friend on the way", """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . O .
        . . . X O . . . .
     """, O, "", "F1"),
    ("escape into open space", """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . . .
        . . . X O . . . .
        . . . . X . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
     """, O, "", "F5"),
    ("the prey captures a hunter in atari", """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . X . . . . .
        . . . X O . . . .
        . . . O X O . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
     """, X, "", "E3"),
]


def vertices(points_):
    return {grid.to_vertex(int(p), SIZE) for p in points_}


@pytest.fixture(scope="module")
def planes_of():
    """Planes of every case under all 8 symmetries (symmetry-major, one compiled call), and the
    untransformed states."""
    boards = np.stack([diagrams.parse(d) for _, d, _, _, _ in CASES])
    to_play = np.array([c for _, _, c, _, _ in CASES], np.int8)
    ks = np.repeat(np.arange(8), len(CASES))  # symmetry 0 (the identity) first
    moved = symmetry.apply_board(jnp.asarray(np.tile(boards, (8, 1))), jnp.asarray(ks))
    states = jax.jit(jax.vmap(GAME.init_from_board))(moved, jnp.asarray(np.tile(to_play, 8)))
    planes = np.asarray(jax.jit(jax.vmap(alphago.alphago_planes))(states))
    batch = jax.tree_util.tree_map(lambda x: np.asarray(x)[:len(CASES)], states)
    return planes, batch, ks


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0] for c in CASES])
def test_ladder_case(planes_of, case):
    planes, batch, _ = planes_of
    name, diagram, colour, want_capture, want_escape = CASES[case]
    chex.assert_shape(planes, (8 * len(CASES), SIZE, SIZE, 48))
    flat = planes[case].reshape(SIZE * SIZE, 48)
    got_capture = vertices(np.flatnonzero(flat[:, alphago.PLANES["ladder_capture"]]))
    got_escape = vertices(np.flatnonzero(flat[:, alphago.PLANES["ladder_escape"]]))
    board = diagrams.parse(diagram)
    ref_capture, ref_escape = featureref.ladder_planes(board, colour, np.asarray(batch.legal[case]), SIZE)
    msg = f"{name}\n{diagrams.show(board)}"
    assert got_capture == set(want_capture.split()), msg
    assert got_escape == set(want_escape.split()), msg
    assert vertices(ref_capture) == got_capture, msg
    assert vertices(ref_escape) == got_escape, msg


def long_ladder(breaker: bool) -> np.ndarray:
    """19x19: the LADDER shape near the lower-left corner, chased about 30 moves to the top edge."""
    b = np.zeros((19, 19), np.int8)
    r, c = 15, 3
    b[r, c] = O
    b[r, c - 1] = b[r + 1, c] = b[r - 1, c - 1] = X
    if breaker:
        b[2, 17] = O  # beside the staircase, 13 steps up
    return b.reshape(-1)


def test_long_ladders_on_19x19():
    game = WithHistory(Go(size=19))
    boards = jnp.asarray(np.stack([long_ladder(False), long_ladder(True)]))
    batch = jax.jit(jax.vmap(game.init_from_board))(boards, jnp.full(2, X, jnp.int8))
    planes = np.asarray(jax.jit(jax.vmap(alphago.alphago_planes))(batch)).reshape(2, 361, 48)
    capture = planes[..., alphago.PLANES["ladder_capture"]]
    move = 15 * 19 + 4  # E4
    assert set(np.flatnonzero(capture[0])) == {move}, "the long ladder works"
    assert not capture[1].any(), "the breaker 13 steps up breaks it"
    for k in (0, 1):
        ref, _ = featureref.ladder_planes(long_ladder(bool(k)), X, np.asarray(batch.legal[k]), 19)
        assert ref == set(np.flatnonzero(capture[k]))


def test_ladder_planes_commute_with_symmetries(planes_of):
    """Every plane of every case, read on the 8 transformed boards, is the transformed plane."""
    planes, _, ks = planes_of
    want = np.asarray(symmetry.apply(jnp.asarray(np.tile(planes[:len(CASES)], (8, 1, 1, 1))), jnp.asarray(ks)))
    for i in np.flatnonzero((planes != want).any(axis=(1, 2, 3))):
        bad = np.flatnonzero((planes[i] != want[i]).any(axis=(0, 1)))
        raise AssertionError(f"case {CASES[i % len(CASES)][0]!r} under symmetry {ks[i]}: planes {bad} differ")
